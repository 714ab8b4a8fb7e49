"""dagster-celery's run launcher with a worker health check that notices a dead worker (Dagster layer): a worker that
does not answer a ping makes the run's worker ``FAILED``, so run monitoring resumes the run elsewhere; a resume
task still queued counts as running. Its private Dagster imports are marked and checked by
``test_dagster_internals.py`` (docs/design/orchestration.md)."""

from __future__ import annotations

import dagster as dg
from dagster_celery.launcher import CeleryRunLauncher
from dagster_celery.tags import DAGSTER_CELERY_TASK_ID_TAG

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
        # Private: the resume task's argument type and its packing, as dagster-celery's launcher builds them
        # (no public equivalent; held by the dagster pin, checked by test_dagster_internals).
        from dagster._grpc.types import ResumeRunArgs
        from dagster._serdes import pack_value
        from dagster_celery.config import TASK_RESUME_JOB_NAME
        from dagster_celery.tasks import create_resume_job_task

        # ``_instance`` and ``_launch_celery_task_run``: the base launcher's own instance and its way of putting
        # a task on the queue (tagging the run with the task id), as its ``launch_run`` uses them.
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
        # Private: the health check's result types (a run launcher's interface has no public module).
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
