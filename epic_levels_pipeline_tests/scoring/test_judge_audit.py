"""Judge audit: sampling, the two candidate orders, the rates, and the real google-genai judge on the local server.

The items and replies are synthetic (built here); verdicts come from :func:`scoring.verdicts`, so the audit sees
exactly what the pipeline would give it.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from epic_levels_pipeline.responses.cache import CallCache
from epic_levels_pipeline.responses.providers.gemini import GeminiCaller, GeminiSettings
from epic_levels_pipeline.scoring.judge_audit import (AUDIT_COLUMNS, NO_JUDGE_NOTE, NO_ROWS_NOTE, audit_details, eligible,
                                              judge_audit, second_order)
from epic_levels_pipeline.bank.build import LETTERS
from epic_levels_pipeline.scoring.verdicts import gemini_judge, judge_order, verdicts as make_verdicts

try:
    from epic_levels_pipeline_tests.fakes.gemini_server import GeminiTestServer
except ImportError:  # tests dir is not a package; pytest puts it on sys.path itself
    from gemini_server import GeminiTestServer

OBJECTS = [["cupboard", "glass", "spatula", "bowl"], ["pan", "sponge", "plate", "lid"],
           ["fork", "towel", "cup", "tap"], ["knife", "board", "onion", "pot"]]
SUFFIX = "\n\nReply in exactly this format:\nAnswer: <your answer>"


def _item(k: int, fmt: str = "open", base: str = "open") -> dict:
    options = OBJECTS[k % len(OBJECTS)]
    rot = k % 4
    options = options[rot:] + options[:rot]
    expected = OBJECTS[k % len(OBJECTS)][0]
    question = f"Which object does the camera wearer hold in scene {k}?"
    return {"item_id": f"clip{k % 3}/q{k}/{fmt}", "question_id": f"clip{k % 3}/q{k}", "clip_key": f"clip{k % 3}",
            "dataset": "hd_epic", "video_id": "v", "subtype": "held_object", "level": "L2",
            "distractor_strategy": "present_in_clip", "format": fmt, "base_format": base,
            "prompt": question + " Answer with the name of the object." + SUFFIX,
            "expected": expected, "answer_type": "entity", "chance": 0.0, "options": options,
            "option_values": options, "option_truth": [o == expected for o in options],
            "candidate_synonyms": json.dumps([[o] for o in options]), "statements": None,
            "statement_value": None, "statement_true": None}


def _response(item: dict, responder: str, condition: str, reply: str) -> dict:
    keys = ["item_id", "question_id", "clip_key", "dataset", "level", "subtype", "distractor_strategy", "format",
            "base_format"]
    return {**{k: item[k] for k in keys}, "condition": condition, "responder": responder, "model": "m1",
            "reply": reply, "status": "ok", "error": ""}


def build(n_items: int = 12, responders=("alpha", "beta")) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Items (open and open_with_reason per question, plus one multiple-choice item) and their verdicts.

    Replies: most name one option (rule-decided, eligible); one abstains and one names two options (undecided):
    neither is eligible, nor is the multiple-choice reply.
    """
    items = []
    for k in range(n_items):
        items.append(_item(k))
        items.append(_item(k, "open_with_reason"))
    mc = _item(99, "multiple_choice", "multiple_choice")
    mc["expected"] = "A"
    items.append(mc)
    responses = []
    for r_i, responder in enumerate(responders):
        for j, item in enumerate(items):
            if item["base_format"] != "open":
                responses.append(_response(item, responder, "clip", "Answer: A"))
                continue
            if j == 0:
                reply = "Answer: cannot tell"
            elif j == 1:
                reply = f"Answer: {item['options'][0]} or {item['options'][1]}"
            else:
                reply = f"Answer: {item['options'][(j + r_i) % 4]}"
            for condition in ("clip", "no_clip"):
                responses.append(_response(item, responder, condition, reply))
    items_frame = pd.DataFrame(items)
    verdicts = make_verdicts(pd.DataFrame(responses), items_frame)
    return verdicts, items_frame


def first_shown(requests):
    """A purely positional judge: always the first candidate shown."""
    return [(0, '{"choice": "A"}') for _ in requests]


def reads_meaning(requests):
    """A judge that reads the reply: the shown candidate equal to it, else none."""
    out = []
    for r in requests:
        hits = [i for i, c in enumerate(r.candidates) if c.lower() == r.reply.strip().lower()]
        out.append((hits[0] if len(hits) == 1 else None, json.dumps({"choice": LETTERS[hits[0]] if hits else "none"})))
    return out


def test_eligible_rows_are_rule_decided_open_replies_that_name_a_candidate():
    verdicts, _ = build()
    rows = eligible(verdicts)
    assert set(rows["base_format"]) == {"open"} and set(rows["scored_by"]) == {"rule"}
    assert "(abstained)" not in set(rows["parsed"]) and set(rows["format"]) == {"open", "open_with_reason"}
    # the abstention, the two-candidate reply (undecided) and the multiple-choice reply are all left out
    assert (verdicts["parsed"] == "(abstained)").any() and (verdicts["scored_by"] == "undecided").any()
    assert len(rows) == len(verdicts[(verdicts["base_format"] == "open")]) - 2 * 2 * 2


def test_second_order_differs_at_every_position_and_is_seeded():
    for k in range(40):
        first = judge_order(f"item{k}", "alpha", "clip", 4)
        second = second_order(first, f"item{k}", "alpha", "clip", seed=3)
        assert sorted(second) == sorted(first) and all(a != b for a, b in zip(first, second))
        assert second == second_order(first, f"item{k}", "alpha", "clip", seed=3)
    assert second_order([1, 0], "x", "r", "c") == [0, 1]
    assert second_order([0], "x", "r", "c") == [0]


def test_judge_that_reads_meaning_agrees_with_rules_and_itself():
    verdicts, items = build()
    frame = judge_audit(verdicts, items, reads_meaning, sample_size=10)
    assert list(frame.columns) == AUDIT_COLUMNS
    assert list(frame["responder"]) == ["alpha", "beta", "*"] and list(frame["n"]) == [10, 10, 20]
    assert (frame["judge_rule_agreement"] == 1.0).all() and (frame["judge_self_agreement"] == 1.0).all()
    assert (frame["judge_none_rate"] == 0.0).all() and (frame["judge_errors"] == 0).all()
    assert (frame["note"] == "").all()


def test_positional_judge_shows_as_self_disagreement():
    verdicts, items = build()
    frame = judge_audit(verdicts, items, first_shown, sample_size=30).set_index("responder")
    assert frame.loc["*", "judge_self_agreement"] == 0.0  # the second order never repeats a position
    assert frame.loc["*", "judge_rule_agreement"] < 0.6   # right only when the rule's option happens to come first
    details = audit_details(verdicts, items, first_shown, sample_size=30)
    expected = (details["order_1"].map(lambda o: json.loads(o)[0]) == details["rule"]).mean()
    assert frame.loc["*", "judge_rule_agreement"] == pytest.approx(expected)


def test_requests_hold_question_reply_and_shuffled_candidates_only():
    verdicts, items = build()
    seen = []

    def spy(requests):
        seen.extend(requests)
        return reads_meaning(requests)

    judge_audit(verdicts, items, spy, sample_size=50)
    by_item = items.set_index("item_id")
    assert len(seen) == 2 * len(eligible(verdicts))  # every eligible row sampled (50 > rows), asked twice
    for request in seen:
        item_id = request.key.split("|")[2]
        options = list(by_item.loc[item_id, "options"])
        assert sorted(request.candidates) == sorted(options)
        assert request.candidates == [options[i] for i in request.order]
        assert "Reply in exactly this format" not in request.question and "Answer with" not in request.question
        assert request.question.startswith("Which object")
        assert not request.reply.startswith("Answer:")


def test_sample_is_seeded_and_independent_of_row_order():
    verdicts, items = build(n_items=20)
    calls = []

    def spy(requests):
        calls.append(sorted(r.key for r in requests))
        return reads_meaning(requests)

    a = judge_audit(verdicts, items, spy, sample_size=7, seed=5)
    b = judge_audit(verdicts.sample(frac=1, random_state=1), items, spy, sample_size=7, seed=5)
    judge_audit(verdicts, items, spy, sample_size=7, seed=6)
    pd.testing.assert_frame_equal(a, b)
    assert calls[0] == calls[1] and calls[0] != calls[2]
    assert list(a["n"]) == [7, 7, 14]


def test_errors_none_and_misaligned_judges():
    verdicts, items = build()
    failed = judge_audit(verdicts, items, lambda rs: [(None, "error: boom") for _ in rs], sample_size=5)
    row = failed.set_index("responder").loc["alpha"]
    assert row["judge_errors"] == 10 and np.isnan(row["judge_rule_agreement"]) and row["note"]
    out_of_range = judge_audit(verdicts, items, lambda rs: [(7, "{}") for _ in rs], sample_size=5)
    assert (out_of_range["judge_errors"] == 2 * out_of_range["n"]).all()
    says_none = judge_audit(verdicts, items, lambda rs: [(None, '{"choice": "none"}') for _ in rs], sample_size=5)
    assert (says_none["judge_none_rate"] == 1.0).all() and (says_none["judge_rule_agreement"] == 0.0).all()
    assert (says_none["judge_self_agreement"] == 1.0).all()
    with pytest.raises(ValueError, match="results"):
        judge_audit(verdicts, items, lambda rs: [], sample_size=5)


def test_no_judge_and_nothing_to_audit():
    verdicts, items = build()
    none = judge_audit(verdicts, items, None)
    assert list(none.columns) == AUDIT_COLUMNS and len(none) == 1
    assert none.loc[0, "note"] == NO_JUDGE_NOTE and none.loc[0, "n"] == 0
    calls = []
    empty = judge_audit(verdicts.iloc[0:0], items, lambda rs: calls.append(rs) or [])
    assert empty.loc[0, "note"] == NO_ROWS_NOTE and not calls
    assert judge_audit(pd.DataFrame(), pd.DataFrame(), first_shown).loc[0, "note"] == NO_ROWS_NOTE


# -- the real google-genai judge against the local server --------------------------------------------------

_CANDIDATE = re.compile(r"^([A-D])\. (.+)$", re.M)
REFUSED = set(OBJECTS[3])


def _judge_reply(body: dict) -> str:
    text = "".join(p.get("text", "") for c in body.get("contents", []) for p in c.get("parts", []))
    answer = re.search(r"Answer given: (.+)", text).group(1).strip()
    if answer in REFUSED:  # these the fake model refuses: {"choice": "none"}
        return json.dumps({"choice": "none"})
    for letter, candidate in _CANDIDATE.findall(text):
        if candidate.strip() == answer:
            return json.dumps({"choice": letter})
    return json.dumps({"choice": "none"})


def test_real_gemini_judge_on_the_local_server(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    verdicts, items = build(n_items=8, responders=("alpha",))
    by_item = items.set_index("item_id")
    with GeminiTestServer(reply_fn=_judge_reply) as server:
        cache = CallCache(tmp_path / "calls.sqlite")
        try:
            settings = GeminiSettings(model="gemini-test", base_url=server.base_url, timeout_s=20,
                                      sdk_retry_attempts=1)
            real = gemini_judge(GeminiCaller(settings, cache), cache, model="gemini-test", rpm=None, concurrency=4)
            asked = []

            def judge(requests):
                asked.extend(requests)
                return real(requests)

            frame = judge_audit(verdicts, items, judge, sample_size=50)
            n = len(eligible(verdicts))
            assert len(asked) == 2 * n
            # cached by model + prompt: two requests with the same question, answer and order are one call
            distinct = {(r.question, r.reply, tuple(r.candidates)) for r in asked}
            assert server.generate_calls == len(distinct) > n
            details = audit_details(verdicts, items, judge, sample_size=50)
            assert server.generate_calls == len(distinct)  # the same audit again: nothing re-asked

            prompts = server.prompts()
            shuffled = 0
            for prompt in prompts:
                answer = re.search(r"Answer given: (.+)", prompt).group(1).strip()
                shown = [c.strip() for _, c in _CANDIDATE.findall(prompt)]
                question = re.search(r"Question: (.+)", prompt).group(1).strip()
                item = by_item[by_item["prompt"].str.startswith(question)].iloc[0]
                options = list(item["options"])
                assert question.startswith("Which object") and "Reply in exactly this format" not in prompt
                assert answer in options and sorted(shown) == sorted(options)
                shuffled += shown != options
                lowered = prompt.lower()
                assert "correct answer" not in lowered and "right answer" not in lowered
                assert not re.search(r"\b(key|expected|correct)\b", lowered)
                assert f"({item['expected']})" not in prompt and "*" not in prompt  # no marker on the key
            assert shuffled > 0

            row = frame.set_index("responder").loc["alpha"]
            knives = details[details["answer"].isin(REFUSED)]
            assert len(knives) and (knives["judge_1"] == -1).all() and (knives["judge_2"] == -1).all()
            assert not knives["error_1"].any()  # "none" is an answer, not a failure
            others = details[~details["answer"].isin(REFUSED)]
            assert (others["judge_1"] == others["rule"]).all() and (others["judge_2"] == others["rule"]).all()
            assert row["n"] == n and row["judge_errors"] == 0
            assert row["judge_rule_agreement"] == pytest.approx(len(others) / n)
            assert row["judge_none_rate"] == pytest.approx(len(knives) / n)
            assert row["judge_self_agreement"] == 1.0

            before = server.generate_calls
            again = judge_audit(verdicts, items, judge, sample_size=50)
            assert server.generate_calls == before  # second run: every answer from the cache
            pd.testing.assert_frame_equal(again, frame)
        finally:
            cache.close()
