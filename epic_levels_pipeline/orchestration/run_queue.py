"""Submitting a run to the instance's run coordinator from Python, as the UI's "Materialize" does (Dagster layer). It
needs private Dagster modules (the code location as the daemon loads it, a run from its remote job), each import
marked and checked by ``test_dagster_internals.py`` (docs/design/orchestration.md)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg


@contextmanager
def workspace(instance: dg.DagsterInstance, workspace_file: Path) -> Iterator:
    """The code location as the daemon and the webserver load it (``workspace.yaml``)."""
    from dagster import __version__
    # Private: loading a workspace file into a request context, as the `dagster` commands do.
    from dagster._cli.workspace.cli_target import WorkspaceOpts, get_workspace_from_cli_opts

    with get_workspace_from_cli_opts(instance, version=__version__,
                                     workspace_opts=WorkspaceOpts(workspace=(str(workspace_file),))) as context:
        yield context


def submit(instance: dg.DagsterInstance, context, assets: Iterable[dg.AssetKey], partition: str | None = None,
           run_config: dict | None = None, tags: dict | None = None) -> str:
    """Create a run of the implicit asset job over ``assets`` (one clip when ``partition`` is given) and submit
    it to the instance's run coordinator (the queue); its run id. What the UI's "Materialize" does."""
    # Private: the implicit asset job's name and the selector of a job subset in a code location.
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
