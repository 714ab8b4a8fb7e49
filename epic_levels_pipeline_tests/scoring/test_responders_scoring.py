"""Offline responders and rule scoring over the bundled bank."""

import json

import pandas as pd
import pytest

from epic_levels_pipeline.responses.runner import ClipMediaInfo, ModelRun, model_responses
from epic_levels_pipeline.scoring.verdicts import rule_verdict
from epic_levels_pipeline.annotations.clips import Clip


def test_oracle_is_right_everywhere_under_clip_and_every_reply_parses_by_rule(offline_bank):
    v = offline_bank["verdicts"]
    oracle = v[(v["responder"] == "oracle") & (v["condition"] == "clip")]
    assert len(oracle) and oracle["correct"].all()
    assert set(oracle["scored_by"]) == {"rule"}


def test_oracle_loses_exactly_the_sound_dependent_answers_when_silenced(offline_bank):
    v, q, items = offline_bank["verdicts"], offline_bank["questions"], offline_bank["items"]
    silenced = v[(v["responder"] == "oracle") & (v["condition"] == "silenced")].set_index("item_id")
    streams = {r.question_id: {e["stream"] for e in json.loads(r.provenance)} for r in q.itertuples()}
    needs_sound = {}
    for item in items[items["dataset"] == "epic_sounds"].itertuples():
        if item.format == "statements":
            sources = [s["source"] for s in json.loads(item.statements)]
            needs_sound[item.item_id] = any(
                s == "sound presence" or (s.startswith("question:") and "sound" in streams[s.split(":", 1)[1]]) for s in sources)
        else:
            needs_sound[item.item_id] = "sound" in streams[item.question_id]
    lost = ~silenced["correct"].astype(bool)
    assert lost.to_dict() == {k: needs_sound[k] for k in silenced.index}
    assert any(needs_sound.values()) and not all(needs_sound.values())


def test_presence_knows_what_not_when(offline_bank):
    v = offline_bank["verdicts"]
    mc = v[(v["responder"] == "presence") & (v["condition"] == "clip") & (v["format"] == "multiple_choice")]
    by = mc.groupby(["level", "distractor_strategy"])["correct"].mean()
    assert by[("L1", "absent_from_clip")] == 1.0
    assert by[("L2", "absent_from_clip")] == 1.0
    assert by[("L2", "same_clip_other_moments")] < 0.5


def test_media_needing_responder_is_skipped_without_media():
    items = pd.DataFrame([{"item_id": "q#multiple_choice", "question_id": "q", "clip_key": "epic_sounds__P09_08__45-75",
                           "dataset": "epic_sounds", "level": "L2", "subtype": "low_sound_object",
                           "distractor_strategy": "same_clip_other_moments", "format": "multiple_choice",
                           "base_format": "multiple_choice", "prompt": "Q?", "audio_annotated": True}])
    run = ModelRun("gemini", "m", caller=None, cache=None)
    frame, stats = model_responses(Clip.from_key("epic_sounds__P09_08__45-75"), items.iloc[:0], ClipMediaInfo(), run)
    assert frame.empty and stats is None
    # no media: clip and silenced rows are skipped with the reason; no_clip would need the caller
    media = ClipMediaInfo(status="skipped", reason="no source video data/media/epic_sounds/P09_08.{mp4,...}")

    async def never(request):  # pragma: no cover - must not be called for skipped rows
        raise AssertionError("called")

    from epic_levels_pipeline.responses.cache import CallCache
    import tempfile, pathlib
    with tempfile.TemporaryDirectory() as tmp:
        cache = CallCache(pathlib.Path(tmp) / "c.sqlite")

        async def echo(request):
            from epic_levels_pipeline.responses.calls import CallResult
            return CallResult(request.cache_key, "Answer: A", "ok")

        frame, _ = model_responses(Clip.from_key("epic_sounds__P09_08__45-75"), items, media,
                                   ModelRun("gemini", "m", echo, cache))
        cache.close()
    by = frame.set_index("condition")
    assert by.loc["clip", "status"] == "skipped" and by.loc["silenced", "status"] == "skipped"
    assert "no source video" in by.loc["clip", "error"]
    assert by.loc["no_clip", "status"] == "ok"


class Item:
    def __init__(self, **kw):
        self.__dict__.update(kw)


MC = Item(base_format="multiple_choice", options=["a", "b", "c", "d"], expected="B")
OPEN = Item(base_format="open", options=["spoon", "knife", "pan lid", "pan"], expected="pan lid", answer_type="entity",
            candidate_synonyms=json.dumps([["spoon", "teaspoon"], ["knife"], ["pan lid", "lid"], ["pan", "frying pan"]]))
COUNT = Item(base_format="open", options=["1", "2", "3", "4"], expected="2", answer_type="number",
             candidate_synonyms=json.dumps([["1"], ["2"], ["3"], ["4"]]))


@pytest.mark.parametrize("item,reply,scored_by,correct", [
    (MC, "Answer: B", "rule", True),
    (MC, "answer: b", "rule", True),
    (MC, "**Answer:** B", "rule", True),
    (MC, "Answer: A, B", "unparsed", False),
    (MC, "Answer: not B", "unparsed", False),
    (MC, "Answer: Bowl", "unparsed", False),
    (OPEN, "Answer: the pan lid", "rule", True),
    (OPEN, "Answer: the frying pan", "rule", False),
    (OPEN, "Answer: not the spoon", "undecided", None),
    (OPEN, "Answer: maybe the knife", "undecided", None),
    (OPEN, "Answer: a teaspoon or a knife", "undecided", None),
    (OPEN, "Answer: a whisk", "undecided", None),
    (OPEN, "Answer: cannot tell", "rule", False),
    (OPEN, "I think it is the lid", "unparsed", False),
    (COUNT, "Answer: two", "rule", True),
    (COUNT, "Answer: twice", "rule", True),
    (COUNT, "Answer: 3", "rule", False),
])
def test_rule_verdicts(item, reply, scored_by, correct):
    parsed, ok, by, note, _ = rule_verdict(item, reply)
    assert by == scored_by, note
    assert ok == correct
