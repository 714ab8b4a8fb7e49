"""Nightly re-scoring of the cross-clip tables (scores, comparisons, over-marking, shortcut audit)."""

import dagster as dg

from ..scoring.assets import CLIP_PARTIALS

RESCORE_JOB = dg.define_asset_job(
    "rescore_job", selection=dg.AssetSelection.groups("scoring") - dg.AssetSelection.assets("verdicts", *CLIP_PARTIALS))

nightly_rescore = dg.ScheduleDefinition(
    name="nightly_rescore", job=RESCORE_JOB, cron_schedule="0 3 * * *", execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Re-scores every night from the partial results of all current clips.",
)
