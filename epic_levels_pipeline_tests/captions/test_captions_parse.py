"""Parsing and canonicalisation of replies: extraction, clamping, dropped links, unparsed replies."""

import json
import math

import pandas as pd

from epic_levels_pipeline.captions.parse import extract_json, parse_caption
from epic_levels_pipeline.captions.schema import Caption, caption_json_schema, openai_response_format


def reply(events=(), actions=(), references=(), links=()):
    return json.dumps({"events": list(events), "actions": list(actions), "references": list(references),
                       "links": [{"source": a, "target": b} for a, b in links]})


def test_fenced_block_is_read_first():
    text = 'Here it is:\n```json\n{"events": [], "actions": [], "references": [], "links": []}\n```\nThanks {x}'
    assert extract_json(text) == {"events": [], "actions": [], "references": [], "links": []}
    assert extract_json('prefix {"a": 1} suffix') == {"a": 1}


def test_unparsable_replies():
    for text in ("", "I cannot watch videos.", "[1, 2]", '{"events": [,]}'):
        p = parse_caption(text, "epic_sounds", 30)
        assert not p.parsed and p.error


def test_times_are_clamped_and_empty_spans_dropped():
    p = parse_caption(reply(events=[{"id": "E1", "start_s": -2, "stop_s": 3, "sound": "water"},
                                    {"id": "E2", "start_s": 28, "stop_s": 45, "sound": "water"},
                                    {"id": "E3", "start_s": 31, "stop_s": 40, "sound": "beep"},
                                    {"id": "E4", "start_s": 5, "stop_s": 4, "sound": "beep"}]), "epic_sounds", 30)
    s = p.structure
    assert [(u.id, u.start_s, u.stop_s) for u in s.events] == [("E1", 0.0, 3.0), ("E2", 28.0, 30.0)]
    assert p.checks["times_out_of_range"] == 3      # E1, E2 and E3 were clamped
    assert p.checks["empty_spans"] == 2             # E3 (30–30 after clamping) and the reversed E4


def test_dangling_wrong_kind_and_non_overlapping_links_are_dropped_and_counted():
    p = parse_caption(reply(
        events=[{"id": "E1", "start_s": 0, "stop_s": 2, "sound": "water"}],
        actions=[{"id": "A1", "start_s": 1, "stop_s": 3, "verb": "wash", "noun": "plate", "description": "wash plate"},
                 {"id": "A2", "start_s": 10, "stop_s": 12, "verb": "take", "noun": "cup", "description": "take cup"}],
        references=[{"id": "R1", "name": "plate"}],
        links=[("E1", "A1"), ("E1", "A1"), ("E1", "A2"), ("A1", "R1"), ("A1", "R9"), ("R1", "A1"), ("E1", "R1")]),
        "epic_sounds", 30)
    assert p.structure.links == [("E1", "A1"), ("A1", "R1")]
    assert p.checks["dangling_links"] == 1           # A1 -> R9
    assert p.checks["invalid_reference_use"] == 2    # R1 -> A1, E1 -> R1
    assert p.checks["links_without_overlap"] == 1    # E1 (0–2) -> A2 (10–12)


def test_missing_fields_and_duplicate_ids():
    p = parse_caption(json.dumps({"events": [{"id": "E1", "start_s": 0, "stop_s": 1, "sound": "x"},
                                             {"id": "E1", "start_s": 2, "stop_s": 3, "sound": "y"},
                                             {"start_s": 2, "stop_s": 3}, {"id": "E3", "start_s": "soon"}]}),
                      "epic_sounds", 30)
    assert [u.id for u in p.structure.events] == ["E1"] and p.structure.events[0].label == "x"
    assert p.checks["duplicate_ids"] == 1
    assert p.checks["missing_fields"] == 2 + 3       # two bad events; actions, references, links lists absent


def test_schema_is_flat_for_providers():
    schema = caption_json_schema()
    assert "$defs" not in json.dumps(schema) and "$ref" not in json.dumps(schema)
    assert set(schema["properties"]) == {"references", "events", "actions", "links"}
    assert schema["properties"]["events"]["items"]["additionalProperties"] is False
    assert openai_response_format()["json_schema"]["strict"] is True
    Caption.model_validate_json(reply())


def test_malformed_reply_scores_zero_and_is_counted(bundled):
    from epic_levels_pipeline.captions import caption_alignments, caption_references, caption_scores
    from epic_levels_pipeline.captions.sources import Clip, clip_annotations

    ann, cat = bundled
    clip = Clip.from_key("epic_sounds__P09_08__45-75")
    refs = caption_references(clip, clip_annotations(ann, clip), cat)
    responses = pd.DataFrame([
        {"clip_key": clip.key, "dataset": clip.dataset, "condition": "clip", "responder": "gemini", "model": "m",
         "prompt": "", "reply": "Sorry, here is a description: a person washes blueberries.", "status": "ok", "error": None},
        {"clip_key": clip.key, "dataset": clip.dataset, "condition": "clip", "responder": "gemini", "model": "m2",
         "prompt": "", "reply": None, "status": "error", "error": "retries exhausted"}])
    alignments, scored = caption_alignments(refs, responses, cat)
    assert not scored["parsed"].any()
    assert scored.loc[scored["model"] == "m2", "parse_error"].iat[0] == "no reply (status error: retries exhausted)"
    for name in ("event_f1", "event_label_r", "action_p", "reference_name_f1", "evsa_f1"):
        assert (scored[name] == 0).all(), name
    assert (scored["parse_failure"] == 1).all()
    # Every reference unit is still listed, unmatched.
    greedy = alignments[(alignments["matcher"] == "greedy") & (alignments["model"] == "m")]
    assert greedy["resp_id"].isna().all() and len(greedy) == len(refs)
    s = caption_scores(scored)
    row = s[(s["metric"] == "parse_failure") & (s["dataset"] == "*") & (s["model"] == "m") & (s["matcher"] == "greedy")]
    assert row["value"].iat[0] == 1.0 and row["n"].iat[0] == 1
    assert math.isnan(scored["ccc"].iat[0])          # epic_sounds: CCC does not apply
