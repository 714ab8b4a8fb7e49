"""The caption track in the whole graph (``epic-levels run``'s driver) in a temporary Dagster instance: offline
caption responders on a few bundled clips, then a Gemini model through the real SDK against the local server
with schema-constrained replies, a malformed one among them."""

import json

import dagster as dg
import pandas as pd
import pytest

from epic_levels_pipeline import cli
from epic_levels_pipeline.annotations.catalogue import build_catalogue
from epic_levels_pipeline.annotations.clips import Clip
from epic_levels_pipeline.annotations.clip_rows import clip_annotations
from epic_levels_pipeline.annotations.readers import load_annotations
from epic_levels_pipeline.captions.reference import reference_structure
from epic_levels_pipeline.captions.responders import JITTER_SIGMAS, oracle
from epic_levels_pipeline.captions.track import SWEEP_COLUMNS, caption_threshold_sensitivity
from epic_levels_pipeline.orchestration.local import run_pipeline
from epic_levels_pipeline.responses.media import make_test_video
from epic_levels_pipeline.storage.views import query

from ..fakes.gemini_server import GeminiTestServer, request_text
from ..conftest import declare_models
from .conftest import QUIET



def metric(scores, responder, condition, name, model="offline"):
    rows = scores[(scores["responder"] == responder) & (scores["condition"] == condition) & (scores["metric"] == name)
                  & (scores["dataset"] == "*") & (scores["matcher"] == "greedy") & (scores["model"] == model)]
    assert len(rows) == 1, (responder, condition, name)
    return float(rows["value"].iat[0])


def test_caption_track_offline(offline_graph, capsys, monkeypatch):
    project, instance, report = offline_graph.project, offline_graph.instance, offline_graph.report
    assert report.failed == []
    refs = query(project.warehouse, "select * from caption_references")
    assert set(refs["clip_key"]) == set(report.clips)
    scores = query(project.warehouse, "select * from caption_scores")
    oracle_clip = scores[(scores["responder"] == "oracle") & (scores["condition"] == "clip")
                         & scores["metric"].str.endswith(("_p", "_r", "_f1")) & scores["value"].notna()]
    assert len(oracle_clip) and (oracle_clip["value"] == 1.0).all()
    # jitter falls monotonically as sigma grows; presence, blind and chance well below the oracle
    for name in ("event_f1", "action_f1", "evsa_f1"):
        values = [metric(scores, f"jitter_{s:g}s", "clip", name) for s in JITTER_SIGMAS]
        assert values == sorted(values, reverse=True) and values[0] < 1.0, (name, values)
    for responder in ("presence", "blind", "chance"):
        assert metric(scores, responder, "clip", "event_label_f1") < 0.5
        assert metric(scores, responder, "clip", "action_label_f1") < 0.5
    # silenced: the oracle perceives no sound; its actions stay perfect
    assert metric(scores, "oracle", "silenced", "event_r") == 0.0
    for name in ("action_f1", "action_label_f1", "reference_f1"):
        assert metric(scores, "oracle", "silenced", name) == 1.0
    alignments = query(project.warehouse, "select * from caption_alignments")
    assert {"greedy", "hungarian"} <= set(alignments["matcher"]) and alignments["tiou"].notna().any()
    sweep = query(project.warehouse, "select * from caption_threshold_sensitivity")
    assert set(sweep["unit"]) == {"event", "action"} and sweep["is_default"].any()
    # combined from every clip's caption_threshold_partials: the sweep of all the clips' captions at once
    partials = query(project.warehouse, "select * from caption_threshold_partials")
    assert set(partials["clip_key"]) == set(report.clips)
    ann = load_annotations(project.annotations)
    whole = caption_threshold_sensitivity(refs, query(project.warehouse, "select * from caption_responses"),
                                          build_catalogue(ann))
    order = ["unit", "threshold", "condition", "metric", "responder", "model"]
    got, want = (f[SWEEP_COLUMNS].sort_values(order).reset_index(drop=True) for f in (sweep, whole))
    pd.testing.assert_frame_equal(got, want, check_dtype=False, check_exact=False, rtol=1e-12, atol=1e-12)
    for asset, check in (("caption_references", "reference_structure_valid"), ("caption_scores", "oracle_scores_one")):
        records = instance.event_log_storage.get_asset_check_execution_history(
            dg.AssetCheckKey(dg.AssetKey(asset), check), limit=10)
        assert records and all(r.status.value == "SUCCEEDED" for r in records), check
    hd = instance.fetch_materializations(dg.AssetRecordsFilter(
        asset_key=dg.AssetKey("caption_references"), asset_partitions=["hd_epic__P09-20240623-120359__1440-1470"]),
        limit=1).records[0]
    assert "not available here: no events" in hd.asset_materialization.metadata["notes"].value
    # the command line reads the materialized tables
    monkeypatch.setenv("EPIC_LEVELS_HOME", str(project.root))
    capsys.readouterr()
    assert cli.main(["captions", "--clip", "epic_sounds__P09_08__45-75", "--responder", "jitter_1s"]) == 0
    out = capsys.readouterr().out
    assert "reference | jitter_1s (clip)" in out and "[events] 14 | 14" in out
    assert cli.main(["captions", "--clip", "epic_sounds__P09_08__45-75", "--responder", "nobody"]) == 1
    assert "materialized:" in capsys.readouterr().err
    assert cli.main(["captions", "--clip", "epic_sounds__P01_01__0-30"]) == 1
    assert "not materialized" in capsys.readouterr().err
    md = (project.reports / "report.md").read_text()
    assert "## Caption track" in md and "caption_scores" in md


CLIP = "epic_sounds__P09_08__45-75"


def test_caption_track_with_a_gemini_model(project, instance, monkeypatch):
    """Clip and silenced captions come back as the oracle's JSON; the no_clip one is malformed (truncated JSON):
    the caller records it as an error with the text kept, and it scores 0 on every metric, counted."""
    # its own project and instance, not a graph_copy: another configuration (a Gemini model, one clip): every asset runs again anyway
    make_test_video(project.media / "epic_sounds" / "P09_08.mp4", 80.0)
    ann = load_annotations(project.annotations)
    clip = Clip.from_key(CLIP)
    ref = reference_structure(clip, clip_annotations(ann, clip), build_catalogue(ann))

    def reply(body: dict) -> str:
        text = request_text(body)
        if "structured caption" not in text:
            return "Answer: A"  # the QA track's questions
        if "Imagine" in text:
            return '{"references": [{"id": "R1", "name": "plate"}], "events": ['
        return oracle(ref, "silenced" if "may be silent" in text else "clip")

    with GeminiTestServer(reply, processing_polls=0) as server:
        monkeypatch.setenv("GEMINI_API_KEY", "test-key-not-secret")
        monkeypatch.setenv("GEMINI_BASE_URL", server.base_url)
        declare_models(project.root, "gemini/gemini-test")
        monkeypatch.setenv("EPIC_LEVELS_RESPONDERS", "oracle")
        monkeypatch.setenv("EPIC_LEVELS_CAPTION_RESPONDERS", "oracle")
        monkeypatch.setenv("EPIC_LEVELS_RPM", "100000")
        report = run_pipeline(project, clip_keys=[CLIP], instance=instance, run_config=QUIET, log=lambda *_: None)
        assert report.failed == []
        caption_bodies = [b for b in server.generate_requests if "structured caption" in request_text(b)]
    assert len(caption_bodies) == 3  # one request per clip x condition
    for body in caption_bodies:
        generation = body["generationConfig"]
        assert generation["responseMimeType"] == "application/json"
        assert set(generation["responseSchema"]["properties"]) == {"references", "events", "actions", "links"}
    with_media = [b for b in caption_bodies if "Imagine" not in request_text(b)]
    assert all(any("fileData" in p for p in b["contents"][0]["parts"]) for b in with_media)
    responses = query(project.warehouse, "select * from caption_responses where responder = 'gemini'")
    assert dict(zip(responses["condition"], responses["status"])) == {"clip": "ok", "silenced": "ok", "no_clip": "error"}
    assert json.loads(responses.loc[responses["condition"] == "clip", "reply"].iat[0])["events"]
    scores = query(project.warehouse, "select * from caption_scores")
    assert metric(scores, "gemini", "clip", "event_label_f1", "gemini/gemini-test") == 1.0
    assert metric(scores, "gemini", "silenced", "event_r", "gemini/gemini-test") == 0.0
    assert metric(scores, "gemini", "no_clip", "parse_failure", "gemini/gemini-test") == 1.0
    for name in ("event_f1", "action_f1", "reference_f1", "evsa_f1"):
        assert metric(scores, "gemini", "no_clip", name, "gemini/gemini-test") == 0.0
    event = instance.get_latest_materialization_event(dg.AssetKey("caption_scores"))
    assert "gemini" in event.asset_materialization.metadata["unparsed_scored_zero"].value



def test_a_selection_without_annotation_tables_runs_only_what_it_names(graph_copy):
    """``run_pipeline(selection=…)`` of the caption alignments (with their sweep partials) and the cross-clip
    caption tables: the clips' batch and the combine, no annotation-tables run (an empty selection would be the
    whole graph), and the same sweep as before."""
    project, instance = graph_copy.project, graph_copy.instance
    before = query(project.warehouse, "select * from caption_threshold_sensitivity")
    sounds = len(instance.fetch_materializations(dg.AssetKey("sounds"), limit=100).records)
    selection = dg.AssetSelection.assets("caption_alignments", "caption_response_scores", "caption_threshold_partials",
                                         "caption_judge_partials", "caption_judge_votes", "caption_scores",
                                         "caption_threshold_sensitivity")
    report = run_pipeline(project, instance=instance, run_config=QUIET, log=lambda *_: None, selection=selection)
    assert report.failed == [] and report.runs == 2  # one batch of the clips, the cross-clip tables
    assert len(instance.fetch_materializations(dg.AssetKey("sounds"), limit=100).records) == sounds
    after = pd.read_parquet(project.assets / "caption_threshold_sensitivity.parquet")
    pd.testing.assert_frame_equal(after.reset_index(drop=True), before.reset_index(drop=True), check_dtype=False)
