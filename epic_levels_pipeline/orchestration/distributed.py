"""Past one machine (Dagster layer): ``run_distributed`` does what ``epic-levels run`` does through the instance's
queue (the tables, one run per clip, then the cross-clip tables), and ``CeleryWorkerRunLauncher`` is named here
for the ``deploy/distributed/`` profile's ``dagster.yaml``."""

from __future__ import annotations

import time
from pathlib import Path

import dagster as dg

from ..annotations.clips import Clip
from ..annotations.clip_keys import read_manifest
from ..settings import Paths
from .celery_launcher import CeleryWorkerRunLauncher
from .local import RunReport, asset_groups, load_definitions
from .run_queue import submit, workspace

TERMINAL = {dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED}


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
    upstream, partitioned, downstream = asset_groups(load_definitions())
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


__all__ = ["CeleryWorkerRunLauncher", "TERMINAL", "run_distributed", "submit", "wait", "workspace"]
