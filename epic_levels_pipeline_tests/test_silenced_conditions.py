"""``silenced`` wherever a clip's audio is annotated: an HD-EPIC clip with HD-EPIC Sounds rows gets it in every
place conditions are read (responses and verdicts, model calls, the replies check and store, the export, the
estimate and Gemini's media groups, the caption track); an HD-EPIC clip without sound rows does not."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pandas as pd
import pytest

from epic_levels_pipeline.annotations.catalogue import build_catalogue
from epic_levels_pipeline.annotations.clips import Clip
from epic_levels_pipeline.annotations.clip_rows import audio_annotated, clip_annotations
from epic_levels_pipeline.annotations.readers import load_annotations
from epic_levels_pipeline.bank.build import build_bank
from epic_levels_pipeline.bank.clip_view import ClipView
from epic_levels_pipeline.formats.items import build_items
from epic_levels_pipeline.responses.conditions import conditions_for
from epic_levels_pipeline.responses.runner import ClipMediaInfo, ModelRun, model_responses, offline_responses
from epic_levels_pipeline.scoring.verdicts import verdicts
from epic_levels_pipeline.settings import Paths

from .annotations.hd_epic_files import annotations_root

ROOT = Path(__file__).resolve().parents[1]
HEARD = Clip("hd_epic", "P09-20240623-120359", 1440.0, 1470.0)    # HD-EPIC Sounds rows written for its window
UNHEARD = Clip("hd_epic", "P02-20240211-120927", 840.0, 870.0)   # another video: no sound rows
ALL = ("clip", "no_clip", "silenced")
NO_SILENCED = ("clip", "no_clip")


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    """clip key -> (clip, rows, questions, items) for the two HD-EPIC clips, with HD-EPIC streams for HEARD only."""
    ann = load_annotations(annotations_root(tmp_path_factory.mktemp("silenced"), [HEARD]))
    cat = build_catalogue(ann)
    out = {}
    for clip in (HEARD, UNHEARD):
        rows = clip_annotations(ann, clip)
        bank = build_bank(clip, rows, cat)
        items, _ = build_items(bank.questions, ClipView(clip, rows, cat), cat)
        out[clip.key] = (clip, rows, bank.questions, items)
    return out, cat


def both_items(clips) -> pd.DataFrame:
    return pd.concat([clips[0][k][3] for k in (HEARD.key, UNHEARD.key)], ignore_index=True)


def test_the_rule_reads_the_evidence_not_the_dataset():
    assert audio_annotated("epic_sounds", [])  # EPIC-SOUNDS annotates the whole audio track
    assert audio_annotated("hd_epic", ["narration", "sound", "object_track"])
    assert not audio_annotated("hd_epic", ["narration", "object_track", "recipe_step"])
    assert conditions_for(True) == ALL and conditions_for(False) == NO_SILENCED
    with pytest.raises(ValueError, match="audio_annotated"):
        conditions_for(float("nan"))  # a missing value is refused, not read as true


def test_items_say_whether_the_clip_audio_is_annotated(clips):
    by = clips[0]
    heard_rows, unheard_rows = by[HEARD.key][1], by[UNHEARD.key][1]
    assert (heard_rows["stream"] == "sound").any() and not (unheard_rows["stream"] == "sound").any()
    assert len(by[HEARD.key][3]) and by[HEARD.key][3]["audio_annotated"].all()
    assert len(by[UNHEARD.key][3]) and not by[UNHEARD.key][3]["audio_annotated"].any()


def test_offline_responses_and_verdicts_under_silenced_only_where_sound_is_annotated(clips):
    by, cat = clips
    for key, expected in ((HEARD.key, ALL), (UNHEARD.key, NO_SILENCED)):
        clip, rows, questions, items = by[key]
        responses = offline_responses(clip, items, questions, rows, cat, ["oracle", "chance"])
        assert tuple(responses["condition"].unique()) == expected
        assert len(responses) == len(items) * 2 * len(expected)
        v = verdicts(responses, items)
        assert set(v["condition"]) == set(expected)
    # the oracle under silenced loses exactly what needs the sound: its self-test of the provenance
    clip, rows, questions, items = by[HEARD.key]
    v = verdicts(offline_responses(clip, items, questions, rows, cat, ["oracle"]), items)
    silenced = v[v["condition"] == "silenced"].set_index("item_id")
    heard = {q.question_id for q in questions.itertuples()
             if "sound" in {e["stream"] for e in json.loads(q.provenance)}}
    plain = items[items["format"] != "statements"]
    needs_sound = plain[plain["question_id"].isin(heard)]["item_id"]
    assert len(needs_sound) and not silenced.loc[needs_sound, "correct"].any()
    assert v[v["condition"] == "clip"]["correct"].all()


def test_model_calls_skip_or_send_silenced_as_the_items_say(clips):
    from epic_levels_pipeline.responses.cache import CallCache
    from epic_levels_pipeline.responses.calls import CallResult

    async def echo(request):
        return CallResult(request.cache_key, "Answer: A", "ok")

    by = clips[0]
    with tempfile.TemporaryDirectory() as tmp:
        cache = CallCache(Path(tmp) / "calls.sqlite")
        try:
            run = ModelRun("gemini", "m", echo, cache, rpm=0, concurrency=8)  # no rate limit: a local fake
            got = {key: model_responses(by[key][0], by[key][3], ClipMediaInfo(reason="no source video"), run)[0]
                   for key in (HEARD.key, UNHEARD.key)}
        finally:
            cache.close()
    heard = got[HEARD.key].groupby("condition")["status"].agg(set).to_dict()
    assert heard == {"clip": {"skipped"}, "silenced": {"skipped"}, "no_clip": {"ok"}}
    assert set(got[UNHEARD.key]["condition"]) == set(NO_SILENCED)


def test_export_replies_and_external_responses_follow_the_items(clips):
    from epic_levels_pipeline.sharing.export import export_rows
    from epic_levels_pipeline.sharing.replies import RepliesError, check_replies, external_responses

    items = both_items(clips)
    rows = export_rows(items).set_index("item_id")
    heard_ids = list(clips[0][HEARD.key][3]["item_id"])
    unheard_ids = list(clips[0][UNHEARD.key][3]["item_id"])
    assert all(tuple(c) == ALL for c in rows.loc[heard_ids, "conditions"])
    assert all(tuple(c) == NO_SILENCED for c in rows.loc[unheard_ids, "conditions"])

    good = [(1, {"item_id": heard_ids[0], "condition": "silenced", "reply": "Answer: yes"}, "")]
    stored = check_replies(good, items, "r.jsonl", "0" * 64).frame
    assert list(stored["condition"]) == ["silenced"]
    bad = good + [(2, {"item_id": unheard_ids[0], "condition": "silenced", "reply": "Answer: yes"}, "")]
    with pytest.raises(RepliesError) as err:
        check_replies(bad, items, "r.jsonl", "0" * 64)
    assert err.value.problems == ["r.jsonl:2: condition 'silenced' not asked for this item (one of clip, no_clip)"]

    store = {"m": stored}
    heard = external_responses(HEARD.key, clips[0][HEARD.key][3], store)
    unheard = external_responses(UNHEARD.key, clips[0][UNHEARD.key][3], store)
    assert set(heard["condition"]) == set(ALL) and set(unheard["condition"]) == set(NO_SILENCED)
    ok = heard[heard["status"] == "ok"]
    assert list(zip(ok["item_id"], ok["condition"])) == [(heard_ids[0], "silenced")]


def test_estimate_counts_silenced_calls_for_the_heard_clip_only(clips):
    from epic_levels_pipeline.estimate import estimate

    items = both_items(clips)
    frame = estimate(Paths(ROOT), ["gemini-2.5-flash"], items=items, judge_share=0, assume_media=True)
    answers = frame[~frame["format"].isin(["caption", "integrity"])]
    calls = answers.groupby("condition")["calls"].sum().to_dict()
    heard = clips[0][HEARD.key][3]
    distinct = lambda frame: frame["prompt"].nunique()  # noqa: E731 -- identical requests are one call
    per_clip = sum(distinct(items[items["clip_key"] == key]) for key in (HEARD.key, UNHEARD.key))
    assert calls == {"clip": per_clip, "no_clip": distinct(items), "silenced": distinct(heard)}
    captions = frame[frame["format"] == "caption"].groupby("condition")["calls"].sum().to_dict()
    assert captions["silenced"] == 1 and captions["clip"] == 2
    groups = {(g["clip_key"], g["condition"]) for g in frame.attrs["media_groups"]}
    assert groups == {(HEARD.key, "clip"), (HEARD.key, "silenced"), (UNHEARD.key, "clip")}


def test_caption_track_asks_silenced_where_the_rows_hold_sound(clips, tmp_path):
    from epic_levels_pipeline.captions import caption_references, caption_responses
    from epic_levels_pipeline.captions.models import model_caption_responses
    from epic_levels_pipeline.responses.cache import CallCache
    from epic_levels_pipeline.responses.calls import CallResult

    async def echo(request):
        return CallResult(request.cache_key, "{}", "ok")

    by, cat = clips
    cache = CallCache(tmp_path / "calls.sqlite")
    try:
        for key, expected in ((HEARD.key, ALL), (UNHEARD.key, NO_SILENCED)):
            clip, rows = by[key][0], by[key][1]
            offline = caption_responses(clip, caption_references(clip, rows, cat), cat, ("oracle",),
                                        streams=rows["stream"])
            assert set(offline["condition"]) == set(expected), key
            frame, _ = model_caption_responses(clip, ClipMediaInfo(reason="no source video"),
                                               ModelRun("gemini", "m", echo, cache, rpm=0), rows["stream"])
            skipped = frame.loc[frame["status"] == "skipped", "condition"]
            assert set(frame["condition"]) == set(expected) and set(skipped) == set(expected) - {"no_clip"}, key
    finally:
        cache.close()
    # without the rows' streams the dataset alone decides, as before (no silenced for hd_epic)
    clip, rows = by[HEARD.key][0], by[HEARD.key][1]
    assert set(caption_responses(clip, caption_references(clip, rows, cat), cat, ("oracle",))["condition"]) == \
        set(NO_SILENCED)


def test_export_refuses_items_written_before_the_column(tmp_path):
    from epic_levels_pipeline.sharing.export import ExportError, materialized_items
    from epic_levels_pipeline.storage.parquet import write_parquet
    from epic_levels_pipeline.storage.table_store import TableStore

    store = TableStore(tmp_path / "assets")
    old = pd.DataFrame([{"item_id": "q#yes_no", "clip_key": HEARD.key, "dataset": "hd_epic"}])
    write_parquet(old, store.path("items", HEARD.key))
    with pytest.raises(ExportError, match=f"no audio_annotated column .* e.g. {HEARD.key}"):
        materialized_items(store)
