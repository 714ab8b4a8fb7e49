"""Running the graph in the project's Dagster instance (Dagster layer): ``run_pipeline`` registers the manifest's
clips, then materializes the tables, the per-clip assets in batches and the cross-clip tables, each a real run
shown in the UI. Above ``STEP_PROCESSES_FROM_CLIPS`` clips each cross-clip table is combined in a fresh process
(docs/design/orchestration.md)."""

from __future__ import annotations

import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg
import yaml

from ..annotations.clips import Clip
from ..annotations.clip_keys import read_manifest
from ..defs.operations.jobs import CROSS_CLIP_JOB as CROSS_CLIP_JOB_DEF
from ..defs.operations.jobs import removed_clips, retire_clips_job, retire_run_config
from ..defs.partitions import batches, range_tags
from ..errors import ManifestError
from ..settings import Paths
from ..terminal import printable
from .dead_runs import clear_dead_runs, process_tags

CLIPS = "clips"  # the clips' dynamic partitions (defs/partitions.py)
SOURCE_PARTITIONS = ("hd_epic_vqa",)  # imported sources' partitions (defs/hd_epic_vqa), run after the clips
CROSS_CLIP_JOB = CROSS_CLIP_JOB_DEF.name  # cross_clip_tables_job
# From this many clip partitions on, the cross-clip tables run one process per step (a process costs ~8 s to load the
# definitions: more than the bundled clips' whole cross-clip run, nothing against thousands of clips').
STEP_PROCESSES_FROM_CLIPS = 1000


def _absolute_base_dirs(config, root: Path):
    """The instance config with every relative ``base_dir`` made absolute against the project root, so
    the instance is the same whatever the working directory (``dagster dev`` run at the root reads the
    same folders)."""
    if isinstance(config, dict):
        return {k: (str(root / v) if k == "base_dir" and isinstance(v, str) and not Path(v).is_absolute()
                    else _absolute_base_dirs(v, root)) for k, v in config.items()}
    if isinstance(config, list):
        return [_absolute_base_dirs(v, root) for v in config]
    return config


@contextmanager
def project_instance(paths: Paths, ephemeral: bool = False):
    """The project's Dagster instance (``dagster.yaml`` at the project root; storage under ``data/dagster``),
    or a temporary one. Neither the working directory nor ``DAGSTER_HOME`` is touched: the config's
    relative folders are resolved against the project root.

    ``DagsterInstance.local_temp(tempdir, overrides)`` is Dagster's public constructor of a persistent instance
    rooted at a folder (``data/dagster``, which holds no ``dagster.yaml`` of its own) with the given config:
    the project's ``dagster.yaml``, its folders made absolute."""
    if ephemeral:
        with dg.instance_for_test() as instance:
            yield instance
        return
    (paths.data / "dagster").mkdir(parents=True, exist_ok=True)
    config_file = paths.dagster_home / "dagster.yaml"
    config = yaml.safe_load(config_file.read_text()) if config_file.exists() else {}
    overrides = _absolute_base_dirs(config or {}, paths.root)
    with dg.DagsterInstance.local_temp(tempdir=str(paths.data / "dagster"), overrides=overrides) as instance:
        yield instance


@dataclass
class RunReport:
    """What one ``run_pipeline`` call did: its clips, the Dagster runs it made (``run_ids``), the labels of those that
    failed (``failed``; ``failures``: label -> run id), the clips it retired and the dead runs it marked failed."""

    clips: list[str]
    runs: int = 0
    failed: list[str] = field(default_factory=list)
    seconds: float = 0.0
    run_ids: list[str] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)
    details: dict[str, list[str]] = field(default_factory=dict)  # run id -> what failed in it (failure_lines)
    retired: list[str] = field(default_factory=list)
    cleared: list[tuple[str, str]] = field(default_factory=list)


def load_definitions() -> dg.Definitions:
    from ..definitions import defs

    return defs()


def cross_clip_job() -> dg.JobDefinition:
    """``cross_clip_tables_job`` of the project's definitions; a module-level function so that
    ``dg.reconstructable`` can rebuild it in every step's process."""
    return load_definitions().resolve_job_def(CROSS_CLIP_JOB)


def asset_groups(defs: dg.Definitions, selection: dg.AssetSelection | None = None, partitions: str = CLIPS
            ) -> tuple[list[dg.AssetKey], list[dg.AssetKey], list[dg.AssetKey]]:
    """(annotation tables, per-clip assets, cross-clip assets) in the order data flows (only those in
    ``selection`` when given). ``partitions`` names the dynamic partitions of the middle list: ``clips``, or
    another source's (``hd_epic_vqa``); assets of any other partitions are in none of the three."""
    graph = defs.resolve_asset_graph()
    chosen = selection.resolve(graph) if selection is not None else None
    upstream, partitioned, downstream = [], [], []
    for key in graph.toposorted_asset_keys:
        node = graph.get(key)
        if not node.is_materializable or (chosen is not None and key not in chosen):
            continue
        if node.partitions_def is not None:
            if getattr(node.partitions_def, "name", None) == partitions:
                partitioned.append(key)
        elif any(graph.get(p).partitions_def is not None for p in graph.get(key).parent_keys):
            downstream.append(key)
        elif downstream and any(p in downstream for p in node.parent_keys):
            downstream.append(key)
        else:
            upstream.append(key)
    return upstream, partitioned, downstream


def run_pipeline(paths: Paths | None = None, clip_keys: list[str] | None = None, run_config: dict | None = None,
                 instance: dg.DagsterInstance | None = None, log=print,
                 selection: dg.AssetSelection | None = None, step_processes: bool | None = None) -> RunReport:
    """Materialize the whole graph (or only the assets of ``selection``) for the given clips (default: every
    clip of the manifest). ``step_processes``: the cross-clip tables one process per step (``True``), in this
    process (``False``), or the former from ``STEP_PROCESSES_FROM_CLIPS`` clip partitions on (``None``; needs a
    persistent instance, which the project's is). Dagster's beta and preview warnings are silenced while it
    runs (the caller's warning filters are put back afterwards)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=dg.BetaWarning)
        warnings.filterwarnings("ignore", category=dg.PreviewWarning)
        return _run_pipeline(paths, clip_keys, run_config, instance, log, selection, step_processes)


def _run_pipeline(paths, clip_keys, run_config, instance, log, selection, step_processes) -> RunReport:
    paths = paths or Paths.default()
    started = time.monotonic()
    clips = [c.key for c in read_manifest(paths.manifest)] if not clip_keys else [Clip.from_key(k).key for k in clip_keys]
    report = RunReport(clips=clips)
    defs = load_definitions()
    job = defs.resolve_implicit_global_asset_job_def()
    upstream, partitioned, downstream = asset_groups(defs, selection)

    config = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
    config.update(run_config or {})

    def execute(selection, partition_key=None, label="", tags=None, own_processes=False):
        tags = {**(tags or {}), **process_tags()}  # this process executes the run (dead_runs.py)
        if own_processes:  # Dagster's multiprocess executor: every step in a process of its own
            with dg.execute_job(dg.reconstructable(cross_clip_job), instance=inst, asset_selection=selection,
                                run_config=config, raise_on_error=False, tags=tags) as result:
                success, run_id = result.success, result.run_id
        else:
            result = job.execute_in_process(instance=inst, asset_selection=selection, partition_key=partition_key,
                                            run_config=config, raise_on_error=False, tags=tags)
            success, run_id = result.success, result.run_id
        report.runs += 1
        report.run_ids.append(run_id)
        if not success:
            name = label or (partition_key or "tables")
            report.failed.append(name)
            report.failures[name] = run_id
            report.details[run_id] = failure_lines(inst, run_id)
            log(f"  FAILED: {name} (run id {run_id})")
        return success

    with (project_instance(paths) if instance is None else _nullcontext(instance)) as inst:
        for run_id, reason in clear_dead_runs(inst):
            report.cleared.append((run_id, reason))
            log(f"marked run {run_id} failed: {reason} (it held a run slot)")
        _retire_removed(inst, defs, paths, clips, config, report, log)
        existing = set(inst.get_dynamic_partitions("clips"))
        new = [k for k in clips if k not in existing]
        if new:
            inst.add_dynamic_partitions("clips", new)
        if upstream:  # an empty asset selection would be the whole graph, unpartitioned
            log(f"materializing annotation tables ({len(upstream)} assets)")
            if not execute(upstream, label="annotation tables"):
                report.seconds = time.monotonic() - started
                return report
        order = inst.get_dynamic_partitions("clips")
        done = 0
        for batch in batches(order, clips) if partitioned else ():
            done += len(batch)
            label = batch[0] if len(batch) == 1 else f"{batch[0]} … {batch[-1]} ({len(batch)} clips)"
            log(f"[{done}/{len(clips)}] {label}")
            execute(partitioned, partition_key=batch[0] if len(batch) == 1 else None, label=label,
                    tags=range_tags(batch))
        # imported sources: their partitions are registered by their import (an upstream asset above)
        for name in SOURCE_PARTITIONS:
            source = asset_groups(defs, selection, partitions=name)[1]
            keys = inst.get_dynamic_partitions(name) if source else []
            for batch in batches(keys, keys):
                label = batch[0] if len(batch) == 1 else f"{batch[0]} … {batch[-1]} ({len(batch)} {name} partitions)"
                log(f"[{name}] {label}")
                execute(source, partition_key=batch[0] if len(batch) == 1 else None, label=label,
                        tags=range_tags(batch))
        if downstream:
            apart = len(order) >= STEP_PROCESSES_FROM_CLIPS if step_processes is None else step_processes
            log(f"materializing cross-clip tables ({len(downstream)} assets"
                f"{', one process per step' if apart else ''})")
            execute(downstream, label="cross-clip tables", own_processes=apart)
    report.seconds = time.monotonic() - started
    return report


def _retire_removed(inst: dg.DagsterInstance, defs: dg.Definitions, paths: Paths, clips: list[str], config: dict,
                    report: RunReport, log) -> None:
    """Retire the clip partitions that left the manifest as the annotation-change sensor does: one
    ``retire_clips_job`` run moves their per-clip files under ``<table>/retired/``, then their partitions are
    deleted (kept when the run fails, so the next run tries again)."""
    try:
        listed = [c.key for c in read_manifest(paths.manifest)]
    except ManifestError:  # clips given on the command line without a manifest: nothing to compare with
        return
    removed = removed_clips(inst, listed + clips)
    if not removed:
        return
    job = defs.resolve_job_def(retire_clips_job.name)
    result = job.execute_in_process(instance=inst, run_config={**config, **retire_run_config(removed)},
                                    raise_on_error=False, tags=process_tags())
    report.runs += 1
    report.run_ids.append(result.run_id)
    shown = ", ".join(removed[:10]) + (f" and {len(removed) - 10} more" if len(removed) > 10 else "")
    if not result.success:
        report.failed.append("retire removed clips")
        report.failures["retire removed clips"] = result.run_id
        report.details[result.run_id] = failure_lines(inst, result.run_id)
        log(f"  FAILED: retiring {len(removed)} clips no longer in the manifest ({shown}; run id {result.run_id})")
        return
    for key in removed:
        inst.delete_dynamic_partition("clips", key)
    report.retired = removed
    log(f"retired {len(removed)} clips no longer in {paths.manifest}: {shown} (their partitions deleted, their "
        "per-clip files moved under <table>/retired/)")


def failure_lines(instance: dg.DagsterInstance, run_id: str, limit: int = 5) -> list[str]:
    """What failed in a run, one line each: every failed step and the first line of its error (else the run's
    failure message), made safe to print."""
    lines = []
    for record in instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.STEP_FAILURE).records:
        event = record.event_log_entry.dagster_event
        error = event.step_failure_data.error if event is not None else None
        while error is not None and error.cause is not None:  # the user's error, not Dagster's wrapper
            error = error.cause
        text = (error.message if error is not None else "").strip().split("\n")[0]
        lines.append(f"{event.step_key}: {printable(text, 300)}")
    if not lines:
        records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.RUN_FAILURE).records
        for record in records:
            message = record.event_log_entry.dagster_event.message or ""
            lines.append(printable(message.strip().split("\n")[0], 300))
    return lines[:limit] + ([f"... and {len(lines) - limit} more failed steps"] if len(lines) > limit else [])


@contextmanager
def _nullcontext(value):
    yield value
