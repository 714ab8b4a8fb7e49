"""The project's run launcher (Dagster layer; ``dagster.yaml`` names it): the pre-flight before every run the UI, a
sensor or the schedule starts (a problem fails the run before any step, with its one line as the message), and a
worker health check that tells run monitoring a run's process is gone. Its one private import is checked by
``test_dagster_internals.py``."""

from __future__ import annotations

import logging
from pathlib import Path

import dagster as dg

from ..preflight import RunInputs, preflight
from ..settings import Paths
from ..terminal import printable_lines
from .dead_runs import HOST_TAG, failure_message, process_gone, this_host

log = logging.getLogger(__name__)


def run_inputs(run: dg.DagsterRun) -> RunInputs:
    """The inputs a run will read: the project root of its ``project`` resource (else the default root) and its
    ``evaluation`` resource's configuration."""
    resources = (run.run_config or {}).get("resources") or {}
    project = (resources.get("project") or {}).get("config") or {}
    root = project.get("root") or ""
    paths = Paths(Path(root).resolve()) if isinstance(root, str) and root else Paths.default()
    paths = paths.with_roots(project.get("annotations") or None, project.get("media") or None)
    evaluation = (resources.get("evaluation") or {}).get("config") or {}
    return RunInputs(paths, evaluation if isinstance(evaluation, dict) else {})


def preflight_message(run: dg.DagsterRun) -> str | None:
    """The run's pre-flight problems as its failure message (one line each), or None when it may start."""
    found = preflight(run_inputs(run))
    return printable_lines("\n".join(found.problems)) if found.problems else None


class ProjectRunLauncher(dg.DefaultRunLauncher):
    """``DefaultRunLauncher`` that refuses a run failing the pre-flight and tells run monitoring when a run's
    process is gone (see the module docstring)."""

    def launch_run(self, context) -> None:
        run = context.dagster_run
        message = preflight_message(run)
        instance = self._instance
        if message is not None:
            log.info("run %s refused by the pre-flight: %s", run.run_id, message)
            instance.report_run_failed(run, message)
            return
        instance.add_run_tags(run.run_id, {HOST_TAG: this_host()})
        super().launch_run(context)

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: dg.DagsterRun):
        # Private: the health check's result types (a run launcher's interface has no public module).
        from dagster._core.launcher import CheckRunHealthResult, WorkerStatus

        reason = process_gone(self._instance, run)
        if reason is not None:
            return CheckRunHealthResult(WorkerStatus.FAILED, failure_message(reason))
        return CheckRunHealthResult(WorkerStatus.RUNNING, "its process runs, or cannot be told from here")


__all__ = ["ProjectRunLauncher", "preflight_message", "run_inputs"]
