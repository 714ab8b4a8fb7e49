"""Past one machine (Dagster layer): runs placed on Celery workers, a Postgres instance, one warehouse writer.

The deployment profile is ``deploy/distributed/`` (README, "Running on several machines"). This module holds
the two pieces the profile needs from the project:

- ``CeleryWorkerRunLauncher``: dagster-celery's ``CeleryRunLauncher`` whose worker health check also asks the
  worker holding the run's task whether it is alive (and whose resume task is called with its own argument). A Celery task whose worker died (machine lost, process
  killed) stays ``STARTED`` in the result backend for ever, which the stock check reports as running; here a
  worker that does not answer a ping makes the run's worker ``FAILED``, so the daemon's run monitoring resumes
  the run on another worker (``run_monitoring.max_resume_run_attempts``). A resume task still waiting in the
  queue (``PENDING``: every live worker busy) counts as running, not as another lost worker.
- ``run_distributed``: what ``epic-levels run`` does, through the instance's queue instead of in-process: one
  run for the annotation tables, one run per clip, then one run for the cross-clip tables and the warehouse
  writer; each waits for the one before (the per-clip runs go out together and spread over the workers).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
from dagster_celery.launcher import CeleryRunLauncher
from dagster_celery.tags import DAGSTER_CELERY_TASK_ID_TAG

from .annotations.clips import Clip, read_manifest
from .orchestrate import RunReport, _groups, load_definitions
from .settings import Paths

# Settings the launcher's Celery app needs from the result backend: the STARTED state (with the worker's
# hostname) and the worker name on finished tasks. The workers' celery.yaml sets the same.
WORKER_TRACKING = {"task_track_started": True, "result_extended": True}
PING_TIMEOUT_S = 2.0
PING_ATTEMPTS = 2


class CeleryWorkerRunLauncher(CeleryRunLauncher):
    """``CeleryRunLauncher`` whose health check notices a dead worker (see the module docstring)."""

    def __init__(self, default_queue: str, broker: str | None = None, backend: str | None = None,
                 include: list[str] | None = None, config_source: dict | None = None, inst_data=None) -> None:
        super().__init__(default_queue=default_queue, broker=broker, backend=backend, include=include,
                         config_source={**WORKER_TRACKING, **(config_source or {})}, inst_data=inst_data)

    def resume_run(self, context) -> None:
        """Send the run's resume task to the queue. (dagster-celery 0.29.27's own ``resume_run`` calls the resume
        task with the execute task's argument name, ``execute_job_args_packed``, and the task refuses it.)"""
        from dagster._grpc.types import ResumeRunArgs
        from dagster._serdes import pack_value
        from dagster_celery.config import TASK_RESUME_JOB_NAME
        from dagster_celery.tasks import create_resume_job_task

        run = context.dagster_run
        args = ResumeRunArgs(job_origin=run.job_code_origin, run_id=run.run_id, instance_ref=self._instance.get_ref(),
                             set_exit_code_on_failure=True)
        signature = create_resume_job_task(self.celery).si(resume_job_args_packed=pack_value(args))
        self._launch_celery_task_run(run=run, task_signature=signature, routing_key=TASK_RESUME_JOB_NAME)

    def worker_of(self, run: dg.DagsterRun) -> str | None:
        """The hostname of the Celery worker that holds the run's task (None when no worker has started it)."""
        task_id = run.tags.get(DAGSTER_CELERY_TASK_ID_TAG)
        if not task_id:
            return None
        result = self.celery.AsyncResult(task_id)
        info = result.info if result.state == "STARTED" else None
        if isinstance(info, dict) and info.get("hostname"):
            return str(info["hostname"])
        return result.worker

    def worker_alive(self, hostname: str) -> bool:
        for _ in range(PING_ATTEMPTS):
            if self.celery.control.ping(destination=[hostname], timeout=PING_TIMEOUT_S):
                return True
        return False

    def any_worker_alive(self) -> bool:
        return any(self.celery.control.ping(timeout=PING_TIMEOUT_S) or [] for _ in range(PING_ATTEMPTS))

    def check_run_worker_health(self, run: dg.DagsterRun):
        from dagster._core.launcher import CheckRunHealthResult, WorkerStatus

        health = super().check_run_worker_health(run)
        task = self.celery.AsyncResult(run.tags.get(DAGSTER_CELERY_TASK_ID_TAG, ""))
        if health.status == WorkerStatus.UNKNOWN and task.state == "PENDING" and self.any_worker_alive():
            # a resume task waiting in the queue for a free worker (every worker busy with another run)
            return CheckRunHealthResult(WorkerStatus.RUNNING, "task queued: waiting for a free worker")
        if health.status != WorkerStatus.RUNNING:
            return health
        hostname = self.worker_of(run)
        if hostname and not self.worker_alive(hostname):
            return CheckRunHealthResult(WorkerStatus.FAILED,
                                        f"Celery worker {hostname} holding this run does not answer a ping: gone")
        return health


# --- submitting runs through the instance's queue -------------------------------------------------------------

TERMINAL = {dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED}


@contextmanager
def workspace(instance: dg.DagsterInstance, workspace_file: Path) -> Iterator:
    """The code location as the daemon and the webserver load it (``workspace.yaml``)."""
    from dagster import __version__
    from dagster._cli.workspace.cli_target import WorkspaceOpts, get_workspace_from_cli_opts

    with get_workspace_from_cli_opts(instance, version=__version__,
                                     workspace_opts=WorkspaceOpts(workspace=(str(workspace_file),))) as context:
        yield context


def submit(instance: dg.DagsterInstance, context, assets: Iterable[dg.AssetKey], partition: str | None = None,
           run_config: dict | None = None, tags: dict | None = None) -> str:
    """Create a run of the implicit asset job over ``assets`` (one clip when ``partition`` is given) and submit
    it to the instance's run coordinator (the queue); its run id. What the UI's "Materialize" does."""
    from dagster._core.definitions.assets.job.asset_job import IMPLICIT_ASSET_JOB_NAME
    from dagster._core.definitions.selector import JobSubsetSelector

    location = next(iter(context.code_locations))
    repository = next(iter(location.get_repositories().values()))
    selector = JobSubsetSelector(location_name=location.name, repository_name=repository.name,
                                 job_name=IMPLICIT_ASSET_JOB_NAME, op_selection=None, asset_selection=list(assets))
    job = location.get_job(selector)
    run_tags = {**job.tags, **(tags or {}), **({"dagster/partition": partition} if partition else {})}
    plan = location.get_execution_plan(job, run_config or {}, step_keys_to_execute=None, known_state=None,
                                       instance=instance)
    run = instance.create_run(
        job_name=job.name, run_id=None, run_config=run_config or {}, resolved_op_selection=job.resolved_op_selection,
        step_keys_to_execute=plan.execution_plan_snapshot.step_keys_to_execute, op_selection=None, status=None,
        root_run_id=None, parent_run_id=None, tags=run_tags, job_snapshot=job.job_snapshot,
        execution_plan_snapshot=plan.execution_plan_snapshot, parent_job_snapshot=job.parent_job_snapshot,
        remote_job_origin=job.get_remote_origin(), job_code_origin=job.get_python_origin(),
        asset_selection=frozenset(assets), asset_check_selection=None, asset_graph=repository.asset_graph)
    instance.submit_run(run.run_id, context)
    return run.run_id


def wait(instance: dg.DagsterInstance, run_ids: list[str], timeout_s: float = 1800.0,
         poll_s: float = 1.0) -> dict[str, dg.DagsterRunStatus]:
    """Block until every run has finished (or ``timeout_s`` passed); each run's last status."""
    deadline = time.monotonic() + timeout_s
    while True:
        statuses = {r: instance.get_run_by_id(r).status for r in run_ids}
        if all(s in TERMINAL for s in statuses.values()) or time.monotonic() > deadline:
            return statuses
        time.sleep(poll_s)


def run_distributed(instance: dg.DagsterInstance, workspace_file: Path, paths: Paths | None = None,
                    clip_keys: list[str] | None = None, run_config: dict | None = None, timeout_s: float = 1800.0,
                    log=print) -> RunReport:
    """``epic-levels run`` through the queue: annotation tables, then every clip's run at once (the workers
    share them out), then the cross-clip tables and the warehouse. The report lists the runs that failed."""
    paths = paths or Paths.default()
    started = time.monotonic()
    clips = [c.key for c in read_manifest(paths.manifest)] if not clip_keys else [Clip.from_key(k).key for k in clip_keys]
    report = RunReport(clips=clips)
    upstream, partitioned, downstream = _groups(load_definitions())
    existing = set(instance.get_dynamic_partitions("clips"))
    if new := [k for k in clips if k not in existing]:
        instance.add_dynamic_partitions("clips", new)

    def stage(label: str, run_ids: dict[str, str]) -> bool:
        statuses = wait(instance, list(run_ids.values()), timeout_s)
        report.runs += len(run_ids)
        for name, run_id in run_ids.items():
            if statuses[run_id] != dg.DagsterRunStatus.SUCCESS:
                report.failed.append(name)
                log(f"  FAILED: {name} ({statuses[run_id].value}; run id {run_id})")
        log(f"{label}: {len(run_ids)} runs, {sum(s == dg.DagsterRunStatus.SUCCESS for s in statuses.values())} succeeded")
        return not report.failed

    with workspace(instance, workspace_file) as context:
        if stage("annotation tables", {"annotation tables": submit(instance, context, upstream, run_config=run_config)}):
            stage("clips", {k: submit(instance, context, partitioned, partition=k, run_config=run_config) for k in clips})
            stage("cross-clip tables and warehouse",
                  {"cross-clip tables": submit(instance, context, downstream, run_config=run_config)})
    report.seconds = time.monotonic() - started
    return report
