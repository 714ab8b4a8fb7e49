"""Nightly re-scoring of the cross-clip tables (scores, comparisons, over-marking, shortcut audit)."""

import dagster as dg

from .jobs import RESCORE_JOB

nightly_rescore = dg.ScheduleDefinition(
    name="nightly_rescore", job=RESCORE_JOB, cron_schedule="0 3 * * *", execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Re-scores every night from the partial results of all current clips.",
)
