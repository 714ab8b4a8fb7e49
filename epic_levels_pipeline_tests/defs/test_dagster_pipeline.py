"""Integration: materialize real assets in a temporary Dagster instance on a copy of the bundled data."""

import json
import os

import dagster as dg
import pandas as pd
import pytest

from epic_levels_pipeline.bank.subtypes import SUBTYPES, Subtype, register, unregister
from epic_levels_pipeline.bank.levels import Evidence
from epic_levels_pipeline.pipeline import run_core
from epic_levels_pipeline.storage.parquet import read_parquet
from epic_levels_pipeline.storage.table_store import TableStore
from epic_levels_pipeline.storage.views import query

from .conftest import QUIET, TABLES, materialize


def test_clip_annotations_of_seed_clips(graph_copy):
    """The session's graph materialized the annotation tables and each clip's ``clip_annotations`` (in one
    batch); one clip materialized on its own gets its own counts and gaps."""
    project, instance = graph_copy.project, graph_copy.instance
    assert materialize(instance, ["clip_annotations"], "epic_sounds__P02_133__15-45").success
    rows = pd.read_parquet(project.assets / "clip_annotations" / "epic_sounds__P09_08__45-75.parquet")
    tap = rows[(rows["stream"] == "sound") & (rows["row_id"] == "P09_08_13")].iloc[0]
    assert tap["description"] == "tap running" and tap["sound_class"] == "water"
    assert tap["start_s"] == pytest.approx(47.662) and tap["stop_s"] == pytest.approx(48.966)
    wash = rows[(rows["stream"] == "narration") & (rows["row_id"] == "P09_08_12")].iloc[0]
    assert wash["narration"] == "wash blueberries"
    assert (wash["start_s"], wash["stop_s"]) == pytest.approx((49.84, 53.54))
    # P09_08_10 "take plate" 44.37–45.22 straddles the window start: clipped and unclipped spans kept.
    take = rows[(rows["stream"] == "narration") & (rows["row_id"] == "P09_08_10")].iloc[0]
    assert (take["start_s"], take["start_clipped_s"], take["stop_clipped_s"]) == pytest.approx((44.37, 45.0, 45.22))
    # The stream is explicit: P09_08_13 is both a sound segment and a narration id.
    assert set(rows.loc[rows["row_id"] == "P09_08_13", "stream"]) == {"sound", "narration"}
    gap = pd.read_parquet(project.assets / "clip_annotations" / "epic_sounds__P02_133__15-45.parquet")
    sounds = gap[gap["stream"] == "sound"]
    assert len(sounds) == 4 and not sounds["categorised"].any()
    assert (~gap.loc[gap["stream"] == "narration", "labelled"]).sum() == 9
    event = instance.get_latest_materialization_event(dg.AssetKey("clip_annotations"))
    assert event.asset_materialization.partition == "epic_sounds__P02_133__15-45"
    assert "known_gaps" in event.asset_materialization.metadata and "rows_by_stream" in event.asset_materialization.metadata


def test_whole_graph_offline(offline_graph):
    project, instance, report = offline_graph.project, offline_graph.instance, offline_graph.report
    assert report.failed == []
    questions = query(project.warehouse, "select * from questions")
    assert set(questions["clip_key"]) == set(report.clips)
    assert questions["provenance"].str.len().min() > 2 and questions["answer"].notna().all()
    scores = query(project.warehouse, """select format, chance_corrected from scores where responder = 'oracle'
        and condition = 'clip' and dataset = '*' and level = '*' and subtype = '*'""")
    assert len(scores) >= 6 and (scores["chance_corrected"] == 1.0).all()
    for table in ("items", "responses", "verdicts", "paired_comparisons", "over_marking", "shortcut_audit"):
        assert len(query(project.warehouse, f"select * from {table}")) > 0, table
    # every check ran and passed, the warning checks included: a clean run shows no failing or warning check
    for asset, check in (("questions", "one_key_per_question"), ("questions", "level_matches_provenance"),
                         ("questions", "distinct_options"), ("questions", "presence_shortcut"),
                         ("items", "five_formats_per_question"), ("items", "no_list_dependent_wording"),
                         ("items", "statement_truths_from_solvers"), ("shortcut_audit", "prior_shortcut"),
                         ("caption_references", "reference_structure_valid"), ("caption_scores", "oracle_scores_one")):
        records = instance.event_log_storage.get_asset_check_execution_history(
            dg.AssetCheckKey(dg.AssetKey(asset), check), limit=10)
        assert records and all(r.status.value == "SUCCEEDED" for r in records), check
    # One batch run of the three clips materializes, row for row, the per-clip tables the core computes.
    assert report.runs == 3
    core = run_core(project)
    for name in ("questions", "items", "responses", "verdicts"):
        stored = read_parquet(TableStore(project.assets).partition_files(name))
        assert _rows(stored) == _rows(getattr(core, name)), name


MEASURED = {"latency_s"}  # a response's measured time differs between any two runs


def _rows(frame: pd.DataFrame) -> list[str]:
    """A table's rows as sorted JSON records (lists and arrays as lists, missing values as null): equal for
    equal contents in any row order, whether the lists were read back from Parquet or not (measured times
    left out)."""
    def plain(value):
        if hasattr(value, "tolist") and not isinstance(value, str):
            value = value.tolist()
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return None if value is None or (isinstance(value, float) and value != value) or value is pd.NA else value

    columns = sorted(c for c in frame.columns if c not in MEASURED)
    return sorted(json.dumps([plain(v) for v in row], default=str) for row in frame[columns].astype(object).itertuples(index=False))


def test_failed_validation_keeps_last_good_tables(graph_copy):
    project, instance = graph_copy.project, graph_copy.instance  # the tables are materialized there
    good = (project.assets / "sounds.parquet").read_bytes()
    target = project.annotations / "epic-sounds" / "EPIC_Sounds_validation.csv"
    target.write_text(target.read_text().replace("00:00:47.662", "00:00:4x.662", 1))
    result = materialize(instance, TABLES)
    assert not result.success
    failure = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"][0]
    assert "EPIC_Sounds_validation.csv" in str(failure.event_specific_data.error) and ":start_timestamp: unparsable time" in str(
        failure.event_specific_data.error)
    assert (project.assets / "sounds.parquet").read_bytes() == good


def test_mislevelled_subtype_fails_the_check(graph_copy):
    project, instance = graph_copy.project, graph_copy.instance  # tables and clip_annotations materialized there
    good = (project.assets / "questions" / "epic_sounds__P09_08__45-75.parquet").read_bytes()

    def one_moment_claimed_sequence(view):
        for draft in SUBTYPES["low_sound_object"].generate(view):
            if isinstance(draft, tuple):
                continue
            draft.subtype = "bad_sequence"
            yield draft

    from epic_levels_pipeline.bank.solvers import SOLVERS

    SOLVERS["bad_sequence"] = SOLVERS["low_sound_object"]
    register(Subtype("bad_sequence", "epic_sounds", ("sound", "narration"), "sequence", "same_clip_other_moments",
                     "entity", one_moment_claimed_sequence))
    try:
        result = materialize(instance, ["questions", "distractor_pools"], "epic_sounds__P09_08__45-75")
        assert not result.success
        checks = [e for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"]
        level = [e.event_specific_data for e in checks if e.event_specific_data.check_name == "level_matches_provenance"][0]
        assert not level.passed
        assert "bad_sequence declares sequence (L3) but its evidence is moment" in str(level.metadata["problems"].value)
        # the blocking check ran before the outputs: nothing of the failing bank was written, the last good one stays
        assert (project.assets / "questions" / "epic_sounds__P09_08__45-75.parquet").read_bytes() == good
    finally:
        unregister("bad_sequence")
        SOLVERS.pop("bad_sequence", None)
