"""Benchmark: one batch of per-clip steps with every clip's own metadata against the batch summary only.

On a project ``epic-levels run`` has materialized (``bench/full_run.py --project DIR`` leaves one; the
instance then holds every window as a clip partition), one run of the per-clip assets over ``--clips N``
consecutive clip partitions (from the middle of the partitions' order), in this process, twice per
``--repeat``, alternating (ABBA):

- **every clip**: ``defs.metadata.OWN_ENTRIES_MAX_PARTITIONS`` raised above the instance's partition count, so
  each clip of each asset gets its own ``add_asset_metadata(partition_key=…)`` call (the behaviour below the
  limit, and of every batch before the limit existed);
- **summary**: the project's setting; above the limit, one call per asset and batch, plus one per clip for
  ``clip_annotations`` (the sensor's content hash).

Prints the instance's clip partition count, each run's wall time, the medians and their ratio. The runs
rewrite those clips' files and materializations with the same content (the bench project's, never this
repository's ``data/``).

    python bench/batch_metadata.py --project /tmp/full --clips 150 --repeat 1
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import dagster as dg  # noqa: E402

from epic_levels_pipeline.defs import metadata  # noqa: E402
from epic_levels_pipeline.defs.partitions import range_tags  # noqa: E402
from epic_levels_pipeline.orchestration.local import asset_groups, load_definitions, project_instance  # noqa: E402
from epic_levels_pipeline.settings import Paths  # noqa: E402

QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}


def one_run(job, instance, selection, batch: list[str], limit: int) -> float:
    saved = metadata.OWN_ENTRIES_MAX_PARTITIONS
    metadata.OWN_ENTRIES_MAX_PARTITIONS = limit
    try:
        started = time.perf_counter()
        result = job.execute_in_process(instance=instance, asset_selection=selection, run_config=QUIET,
                                        tags=range_tags(batch), raise_on_error=False)
        seconds = time.perf_counter() - started
    finally:
        metadata.OWN_ENTRIES_MAX_PARTITIONS = saved
    if not result.success:
        raise SystemExit(f"the run failed: run id {result.run_id}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--project", type=Path, required=True, help="a project `epic-levels run` has materialized")
    ap.add_argument("--clips", type=int, default=150, help="clips in the batch (default 150, a batch's size)")
    ap.add_argument("--repeat", type=int, default=1, help="ABBA blocks (default 1)")
    args = ap.parse_args(argv)

    paths = Paths(args.project.resolve())
    if not (paths.root / "dagster.yaml").exists():
        raise SystemExit(f"{paths.root}: no dagster.yaml (make the project with bench/full_run.py first)")
    defs = load_definitions()
    job = defs.resolve_implicit_global_asset_job_def()
    _, partitioned, _ = asset_groups(defs)
    with project_instance(paths) as instance:
        order = instance.get_dynamic_partitions("clips")
        middle = max(0, len(order) // 2 - args.clips // 2)
        batch = order[middle:middle + args.clips]
        print(f"{paths.root}: {len(order)} clip partitions; batch of {len(batch)}: {batch[0]} … {batch[-1]}; "
              f"{len(partitioned)} per-clip assets; limit {metadata.OWN_ENTRIES_MAX_PARTITIONS}")
        times: dict[str, list[float]] = {"every clip": [], "summary": []}
        every = len(order) + 1
        for _ in range(args.repeat):
            for label in ("every clip", "summary", "summary", "every clip"):
                seconds = one_run(job, instance, partitioned, batch,
                                  every if label == "every clip" else metadata.OWN_ENTRIES_MAX_PARTITIONS)
                times[label].append(seconds)
                print(f"  {label:>10}: {seconds:6.1f} s", flush=True)
    a, b = statistics.median(times["every clip"]), statistics.median(times["summary"])
    print(f"median: every clip {a:.1f} s, summary {b:.1f} s -> {a / b:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
