"""The cross-clip tables one process per step (``cross_clip_tables_job``, what ``epic-levels run`` uses at
thousands of clips): the same assets as the in-process run's last step, the same tables from them."""

import os

import dagster as dg

from epic_levels_pipeline.defs.operations.jobs import CROSS_CLIP_ALL
from epic_levels_pipeline.orchestration.local import CROSS_CLIP_JOB, asset_groups, run_pipeline
from epic_levels_pipeline.storage.views import query

from .conftest import QUIET, definitions

SCORES = """SELECT responder, model, condition, format, dataset, level, subtype, distractor_strategy, n,
    accuracy, chance_corrected FROM scores ORDER BY ALL"""


def test_the_job_holds_exactly_the_cross_clip_tables():
    defs = definitions()
    graph = defs.resolve_asset_graph()
    downstream = asset_groups(defs)[2]
    assert set(CROSS_CLIP_ALL.resolve(graph)) == set(downstream)
    assert {dg.AssetKey("scores"), dg.AssetKey("caption_scores"), dg.AssetKey("warehouse")} <= set(downstream)
    assert defs.resolve_job_def(CROSS_CLIP_JOB).name == CROSS_CLIP_JOB


def test_step_processes_give_the_same_tables(graph_copy):
    """On a copy of the session's graph (its cross-clip tables made in one process): the cross-clip tables again,
    each step in a process of its own; every step started in another process and the scores are unchanged.
    A step is an op: a multi-asset (``judge_audit`` with ``judge_agreement`` and ``judge_swap``) is one step."""
    paths, instance = graph_copy.project, graph_copy.instance
    before = query(paths.warehouse, SCORES)
    defs = definitions()
    downstream = asset_groups(defs)[2]
    graph = defs.resolve_asset_graph()
    ops = {graph.get(key).assets_def.node_def.name for key in downstream}
    assert len(ops) < len(downstream)  # the multi-asset's keys share their step
    report = run_pipeline(paths, instance=instance, run_config=QUIET, log=lambda *_: None, step_processes=True,
                          selection=dg.AssetSelection.assets(*downstream))
    assert report.failed == [] and report.runs == 1
    run = instance.get_runs(filters=dg.RunsFilter(job_name=CROSS_CLIP_JOB))
    assert len(run) == 1
    starts = instance.get_records_for_run(run[0].run_id, of_type=dg.DagsterEventType.STEP_START).records
    assert {r.event_log_entry.step_key for r in starts} == ops and len(starts) == len(ops)
    assert all(r.event_log_entry.dagster_event.pid not in (None, os.getpid()) for r in starts)
    after = query(paths.warehouse, SCORES)
    assert len(after) and after.equals(before)
