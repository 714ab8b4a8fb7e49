"""Imported replies go through the Dagster graph: a materialization reads the replies store into ``responses``
and scores them (responder ``external``) beside the offline responders."""

import dagster as dg

from epic_levels_pipeline.annotations.clips import Clip
from epic_levels_pipeline.orchestration.local import run_pipeline
from epic_levels_pipeline.pipeline import questions_and_items
from epic_levels_pipeline.sharing.export import export_rows
from epic_levels_pipeline.sharing.replies import check_replies, store_replies
from epic_levels_pipeline.storage.views import query

from .conftest import OFFLINE_CLIPS, QUIET

CLIP = "epic_sounds__P09_08__45-75"
assert CLIP in OFFLINE_CLIPS


def test_materialization_scores_stored_replies(graph_copy):
    """On a copy of the session's materialized graph: replies stored for one clip, then that clip's
    ``responses`` and everything downstream materialized again (what the UI's update does)."""
    paths = graph_copy.project
    _, items = questions_and_items(paths, [Clip.from_key(CLIP)])
    lines = [(n, {"item_id": r.item_id, "condition": c, "reply": r.answer}, "")
             for n, (r, c) in enumerate(((r, c) for r in export_rows(items).itertuples() for c in r.conditions), 1)]
    store_replies(paths.data, "perfect", check_replies(lines, items, "perfect.jsonl", "0" * 64))
    assert query(paths.warehouse, "SELECT count(*) AS n FROM responses WHERE responder = 'external'")["n"][0] == 0
    report = run_pipeline(paths, clip_keys=[CLIP], instance=graph_copy.instance, run_config=QUIET,
                          selection=dg.AssetSelection.assets("responses").downstream(), log=lambda *_: None)
    assert not report.failed
    rows = query(paths.warehouse, """SELECT format, condition, chance_corrected, n FROM scores
        WHERE responder = 'external' AND model = 'perfect' AND dataset = '*' AND level = '*' AND subtype = '*'
          AND distractor_strategy = '*'""")
    assert len(rows) and (rows["chance_corrected"] == 1.0).all() and set(rows["condition"]) == {"clip", "no_clip", "silenced"}
    provider = query(paths.warehouse, "SELECT DISTINCT provider FROM responses WHERE responder = 'external'")
    assert list(provider["provider"]) == ["external"]
