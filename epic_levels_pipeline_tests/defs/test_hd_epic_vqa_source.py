"""Integration: HD-EPIC's VQA benchmark as a pipeline source. A small file in the upstream schema under the
annotations root is imported (unconvertible questions skipped and counted with their reason), its videos
become partitions, and the offline responders' verdicts reach ``scores`` as rows of their own (dataset
``hd_epic_vqa``, level ``imported:<category>``); the oracle scores chance-corrected 1.0 under ``clip``.
With no VQA files the import writes empty tables and registers no partition; ``strict`` refuses the import."""

import json

import dagster as dg
import pytest

from epic_levels_pipeline.imports.vqa_source import IMPORTED_LEVEL
from epic_levels_pipeline.orchestration.local import asset_groups
from epic_levels_pipeline.storage.parquet import read_parquet
from epic_levels_pipeline.storage.table_store import TableStore

from .conftest import QUIET, definitions

IMPORT = ["hd_epic_vqa_questions", "hd_epic_vqa_all_items", "hd_epic_vqa_import_report", "hd_epic_vqa_skipped"]
V1, V2 = "P01-20240202-110250", "P02-20240209-103910"
T = "<TIME 00:00:10.000 video 1>"


def _q(video, question, choices, correct, **inputs):
    return {"inputs": {"video 1": {"id": video, "start_time": "00:00:01", "end_time": "00:00:30", **inputs}},
            "question": question, "choices": choices, "correct_idx": correct}


QUESTIONS = {
    "count_0": _q(V1, f"How many times did I open the fridge in {T}?", ["0", "1", "2", "3", "4"], 2),
    "count_1": _q(V2, f"How many times did I close the drawer in {T}?", ["1", "2", "3", "4", "5"], 0),
    "where_0": _q(V1, "Where did I put the knife?", ["On the counter", "In the sink", "In the drawer",
                                                     "On the shelf", "In the fridge"], 1),
    "which_0": _q(V2, "Which of these ingredients were added to the dish?", ["salt", "peas", "kale", "rice", "oil"], 4),
    "dup_0": _q(V1, "How many eggs did I crack?", ["1", "2", "2", "3", "4"], 0),
    "time_0": {**_q(V2, "How many plates did I wash?", ["1", "2", "3", "4", "5"], 1),
               "inputs": {"video 1": {"id": V2, "start_time": "00:00:30", "end_time": "00:00:05"}}},
}


def _write(project, questions=QUESTIONS):
    folder = project.annotations / "hd-epic" / "vqa-benchmark"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "3d_perception_fixture_interaction_counting.json").write_text(json.dumps(questions))
    return folder


def _run(instance, names, partition_key=None, tags=None, run_config=QUIET):
    job = definitions().resolve_implicit_global_asset_job_def()
    return job.execute_in_process(instance=instance, asset_selection=[dg.AssetKey(k) for k in names],
                                  partition_key=partition_key, tags=tags, raise_on_error=False, run_config=run_config)


def test_imported_questions_are_scored_by_the_offline_responders(project, instance):
    _write(project)
    assert _run(instance, IMPORT).success
    keys = instance.get_dynamic_partitions("hd_epic_vqa")
    assert keys == sorted(f"hd_epic_vqa__{v}" for v in (V1, V2))
    source = [k.to_user_string() for k in asset_groups(definitions(), partitions="hd_epic_vqa")[1]]
    tags = {"dagster/asset_partition_range_start": keys[0], "dagster/asset_partition_range_end": keys[-1]}
    assert _run(instance, source, tags=tags).success
    assert _run(instance, ["scores", "vqa_official_scores"]).success

    store = TableStore(project.assets)
    skipped = read_parquet([store.path("hd_epic_vqa_skipped")])
    assert sorted(skipped["reason"]) == ["duplicate_choices", "malformed_times"]
    report = read_parquet([store.path("hd_epic_vqa_import_report")]).iloc[0]
    assert (report["n_questions"], report["n_imported"], report["n_skipped_duplicate_choices"],
            report["n_skipped_malformed_times"]) == (6, 4, 1, 1)

    scores = read_parquet([store.path("scores")])
    mine = scores[scores["dataset"] == "hd_epic_vqa"]
    assert len(mine)
    assert set(mine["level"]) == {"*", IMPORTED_LEVEL + "3d_perception"}
    levelled = scores[(scores["dataset"] == "*")]
    assert not levelled["level"].astype(str).str.startswith(IMPORTED_LEVEL).any()  # never pooled with clips
    top = mine[(mine["level"] == "*") & (mine["subtype"] == "*")].set_index(["responder", "condition", "format"]).sort_index()
    oracle = top.loc["oracle", "clip"]
    assert set(oracle.index) == {"*", "yes_no", "multiple_choice", "official_mcq", "open", "option_judgement",
                                 "open_with_reason"}
    assert (oracle["chance_corrected"] == 1.0).all() and (oracle["n"] > 0).all()
    assert top.loc[("oracle", "clip", "*"), "n_clips"] == 2  # clustered by video
    assert top.loc[("oracle", "no_clip", "*"), "accuracy"] == 0.0  # perceives nothing: abstains
    for responder in ("chance", "blind"):
        assert top.loc[(responder, "clip", "*"), "n"] > 0
    presence = top.loc[("presence", "clip", "*")]
    assert (presence["n"], presence["n_skipped"]) == (0, 20)  # 4 questions x 5 items, skipped with the reason
    official = read_parquet([store.path("vqa_official_scores")]).set_index(["responder", "condition", "aggregate"])
    assert set(official.loc[("oracle", "clip"), "accuracy"]) == {1.0}  # every type, category, headline, pool
    assert set(official.loc[("oracle", "no_clip"), "accuracy"]) == {0.0}  # abstains: no letter, unreadable
    assert (official.loc[("oracle", "no_clip", "pooled"), "n_unreadable"] == 4).all()
    assert official.loc[("oracle", "clip", "headline"), "note"].startswith("mean of 1 of the benchmark's 7")
    never = official.loc[("presence", "clip", "pooled")]  # skipped: never asked, so not counted wrong
    assert (never["n"], never["n_skipped"]) == (0, 4)
    verdicts = read_parquet(store.partition_files("hd_epic_vqa_verdicts"))
    assert set(verdicts.loc[verdicts["responder"] == "presence", "note"]) == {
        "imported question: the presence responder needs the clip's annotations, which it has none of"}


def test_no_vqa_files_is_no_source(project, instance):
    assert _run(instance, IMPORT).success
    assert instance.get_dynamic_partitions("hd_epic_vqa") == []
    event = instance.get_latest_materialization_event(dg.AssetKey("hd_epic_vqa_questions"))
    assert "no vqa-benchmark/ folder" in event.asset_materialization.metadata["source"].value
    store = TableStore(project.assets)
    assert len(read_parquet([store.path("hd_epic_vqa_all_items")])) == 0


def test_strict_refuses_the_import(project, instance):
    _write(project)
    config = {**QUIET, "ops": {"hd_epic_vqa_import": {"config": {"strict": True}}}}
    result = _run(instance, IMPORT, run_config=config)
    assert not result.success
    assert instance.get_dynamic_partitions("hd_epic_vqa") == []
    failure = next(e for e in result.all_events if e.is_step_failure)
    assert "dup_0" in str(failure.step_failure_data.user_failure_data.metadata["problems"].value)


@pytest.mark.parametrize("prototype, category", [("3d_perception_object_location", "3d_perception"),
                                                  ("ingredient_ingredient_weight", "ingredient"),
                                                  ("gaze_gaze_estimation", "gaze"), ("other_kind", "other")])
def test_level_is_the_prototype_category(prototype, category):
    from epic_levels_pipeline.imports.vqa_source import level_of

    assert level_of(prototype) == IMPORTED_LEVEL + category
