"""The three places that use Dagster's private modules, held to the pinned releases.

``orchestration/celery_launcher.py`` (the Celery launcher's worker health check and resume task),
``orchestration/launcher.py`` (the project launcher's worker health check) and ``orchestration/run_queue.py``
(queueing a run from Python) use names Dagster has no public API for. A pin bump of dagster or dagster-celery
fails here first: check those modules against the new release (each use is commented there), then update
``PINNED``. Everywhere else in the Dagster layer, and in every module outside the
core stage packages, only public names of third-party packages are used (the scan below).
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

import dagster
import dagster_celery

PACKAGE = Path(__file__).resolve().parents[2] / "epic_levels_pipeline"
PINNED = {"dagster": "1.13.27", "dagster_celery": "0.29.27"}
DOCUMENTED = {"orchestration/celery_launcher.py", "orchestration/launcher.py", "orchestration/run_queue.py"}
# The Dagster layer and the modules outside the stage packages; the stage packages follow the same rule.
SCANNED = ["defs", "orchestration", "cli", "definitions.py", "pipeline.py", "estimate.py", "storage", "records.py",
           "settings.py", "seeding.py", "errors.py", "reporting", "scoring", "formats", "captions",
           "imports"]
OWN_NAMES = {"self", "cls", "epic_levels_pipeline"}


def test_the_pins_the_documented_modules_were_checked_against():
    found = {"dagster": dagster.__version__, "dagster_celery": dagster_celery.__version__}
    assert found == PINNED, ("a pin bump: check orchestration/celery_launcher.py, orchestration/launcher.py and "
                             "orchestration/run_queue.py against the new release, then update PINNED")


def test_the_private_names_the_launcher_uses_are_there():
    from dagster._core.launcher import CheckRunHealthResult, WorkerStatus
    from dagster._grpc.types import ResumeRunArgs
    from dagster._serdes import pack_value, unpack_value
    from dagster_celery.launcher import CeleryRunLauncher
    from dagster_celery.tasks import create_resume_job_task

    assert {"RUNNING", "FAILED", "UNKNOWN"} <= {s.name for s in WorkerStatus}
    health = CheckRunHealthResult(WorkerStatus.FAILED, "gone")
    assert (health.status, health.msg) == (WorkerStatus.FAILED, "gone")
    assert {"job_origin", "run_id", "instance_ref", "set_exit_code_on_failure"} <= set(ResumeRunArgs._fields)
    assert callable(pack_value) and callable(unpack_value)
    assert callable(getattr(CeleryRunLauncher, "_launch_celery_task_run"))
    assert "resume_job_args_packed" in inspect.getsource(create_resume_job_task)


def test_the_names_the_project_launcher_relies_on_are_there():
    """The health check's result types (private), and what run monitoring does with them: a worker that is not
    RUNNING (nor SUCCESS) gets its run reported failed, unless the launcher can resume it."""
    from dagster._core.launcher import CheckRunHealthResult, WorkerStatus
    from dagster._daemon.monitoring import run_monitoring

    assert CheckRunHealthResult(WorkerStatus.RUNNING, "ok").status == WorkerStatus.RUNNING
    source = inspect.getsource(run_monitoring.monitor_started_run)
    assert "supports_check_run_worker_health" in source and "report_run_failed" in source
    assert not dagster.DefaultRunLauncher().supports_resume_run


def test_the_private_names_the_run_queue_uses_are_there():
    from dagster._cli.workspace.cli_target import WorkspaceOpts, get_workspace_from_cli_opts
    from dagster._core.definitions.assets.job.asset_job import IMPLICIT_ASSET_JOB_NAME
    from dagster._core.definitions.selector import JobSubsetSelector

    assert IMPLICIT_ASSET_JOB_NAME == "__ASSET_JOB"
    assert {"instance", "version", "workspace_opts"} <= set(inspect.signature(get_workspace_from_cli_opts).parameters)
    assert WorkspaceOpts(workspace=("workspace.yaml",)).workspace == ("workspace.yaml",)
    fields = set(getattr(JobSubsetSelector, "_fields", ()) or {f.name for f in dataclasses.fields(JobSubsetSelector)})
    assert {"location_name", "repository_name", "job_name", "op_selection", "asset_selection"} <= fields
    params = set(inspect.signature(dagster.DagsterInstance.create_run).parameters)
    assert {"remote_job_origin", "job_code_origin", "asset_selection", "asset_graph"} <= params


def _private_uses(path: Path) -> list[str]:
    """``from lib._x import``, ``import lib._x`` and ``obj._name`` of a third-party package in ``path`` (dunder
    names and the project's own modules and objects excepted)."""
    tree = ast.parse(path.read_text("utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if any(part.startswith("_") for part in node.module.split(".")[1:]) and \
                    node.module.split(".")[0] not in OWN_NAMES:
                out.append(f"{path.name}:{node.lineno}: from {node.module}")
        elif isinstance(node, ast.Import):
            out += [f"{path.name}:{node.lineno}: import {a.name}" for a in node.names
                    if any(p.startswith("_") for p in a.name.split(".")[1:]) and a.name.split(".")[0] not in OWN_NAMES]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if not (isinstance(base, ast.Name) and base.id in OWN_NAMES):
                out.append(f"{path.name}:{node.lineno}: ._{node.attr[1:]}")
    return out


def test_no_private_third_party_names_outside_the_documented_modules():
    files = [p for name in SCANNED for p in ([PACKAGE / name] if name.endswith(".py") else (PACKAGE / name).rglob("*.py"))]
    assert len(files) > 50
    found = [use for p in files if p.relative_to(PACKAGE).as_posix() not in DOCUMENTED for use in _private_uses(p)]
    assert not found, found
