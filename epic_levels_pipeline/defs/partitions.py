"""Clip partitions, and how several of them run as one batch: a per-clip asset gets every clip partition of its run
and returns ``{clip_key: value}``; a run holds up to ``MAX_CLIPS_PER_RUN`` consecutive clips (``CLIP_BACKFILL``),
so Dagster's per-run cost is paid once per batch."""

from __future__ import annotations

import warnings

import dagster as dg

# Every batched asset passes CLIP_BACKFILL to @dg.asset, whose `backfill_policy` parameter Dagster marks beta:
# a warning a user of the project can do nothing about, printed at every import of the definitions.
warnings.filterwarnings("ignore", message="Parameter `backfill_policy` of function `asset`", category=dg.BetaWarning)

# One dynamic partition per clip; keys encode dataset, video and window (epic_sounds__P09_08__45-75).
# A two-dimensional dataset x clip partitioning would create every combination, most of them invalid.
clip_partitions = dg.DynamicPartitionsDefinition(name="clips")

MAX_CLIPS_PER_RUN = 150
CLIP_BACKFILL = dg.BackfillPolicy.multi_run(max_partitions_per_run=MAX_CLIPS_PER_RUN)
BY_CLIP = "by_clip"  # input metadata: load one value per clip of the run, not their concatenation
RANGE_START = "dagster/asset_partition_range_start"
RANGE_END = "dagster/asset_partition_range_end"


def clip_in(name: str | None = None) -> dg.AssetIn:
    """A per-clip input of a per-clip asset: ``{clip_key: frame}`` for the clips of the run."""
    return dg.AssetIn(name, metadata={BY_CLIP: True})


def clip_keys(context) -> list[str]:
    """The clip partitions this step materializes (one, or a batch)."""
    return list(context.partition_keys)


def batches(order: list[str], wanted, size: int = MAX_CLIPS_PER_RUN) -> list[list[str]]:
    """``wanted`` clips as runs of consecutive partitions (in the partitions' ``order``), each at most ``size``
    long: a partition range covers exactly the clips asked for, never one in between."""
    wanted = set(wanted)
    out: list[list[str]] = []
    current: list[str] = []
    for key in order:
        if key in wanted and len(current) < size:
            current.append(key)
            continue
        if current:
            out.append(current)
        current = [key] if key in wanted else []
    if current:
        out.append(current)
    return out


def range_tags(batch: list[str]) -> dict[str, str]:
    """Run tags that target a batch of consecutive clip partitions (none needed for one clip)."""
    return {} if len(batch) == 1 else {RANGE_START: batch[0], RANGE_END: batch[-1]}
