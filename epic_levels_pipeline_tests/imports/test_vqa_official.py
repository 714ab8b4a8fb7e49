"""HD-EPIC's VQA benchmark by its authors' protocol: the two letter rules, the tags, the means of the paper."""

import numpy as np
import pandas as pd
import pytest

from epic_levels_pipeline.formats.parsing import letter_as_written, letter_upper_cased
from epic_levels_pipeline.formats.registry import rule_verdict
from epic_levels_pipeline.imports.vqa_conversion import convert
from epic_levels_pipeline.imports.vqa_official import PARTIAL_COLUMNS, official_partials, official_scores
from epic_levels_pipeline.imports.vqa_tags import render_tags
from epic_levels_pipeline.reporting.vqa_sections import PUBLISHED, PUBLISHED_COLUMNS, published_layout

# reply -> (the authors' reading, lmms-eval's reading); None = unreadable (wrong)
READINGS = {
    "B": ("B", "B"),
    "b": (None, "B"),
    "b.": (None, "B"),
    " (B) the spoon": ("B", "B"),
    "The answer is B": (None, None),  # T is no option under either rule
    "Answer: B": ("A", "A"),
    "answer: b": (None, "A"),
    "cannot tell": (None, "C"),
    "I think it's d": (None, None),  # I (as written and upper-cased): no option either way
    "e": (None, "E"),
    "": (None, None),
    "F": (None, None),  # beyond five choices
}


@pytest.mark.parametrize("reply", list(READINGS))
def test_the_two_letter_rules_on_lowercase_and_chatty_replies(reply):
    authors, lmms = READINGS[reply]
    got = letter_as_written(reply, n_options=5), letter_upper_cased(reply, n_options=5)
    assert (got[0].value if got[0].ok else None, got[1].value if got[1].ok else None) == (authors, lmms)


def test_time_and_box_tags_as_the_authors_write_them():
    inputs = {"video 1": {"id": "P01-x", "start_time": "00:10:00.000"}, "video 2": {"id": "P01-y"}}
    text = "From <TIME 00:10:05.5 video 1> to <TIME 01:02:03.9 video 2>, box <BBOX 704 0 1408 352.0>"
    assert render_tags(text, inputs) == "From 00:05 to 01:02:03, box (500, 0, 1000, 250)"
    assert render_tags("<TIME nonsense video 1>", inputs) == "<TIME nonsense video 1>"


def _question(n_choices: int = 5) -> dict:
    return {"qid": "p_0", "inputs": {"video 1": {"id": "P01-20240202-110250", "start_time": "00:00:10"}},
            "question": "How many times did I open <BBOX 1 2 3 4> in <TIME 00:00:12 video 1>?",
            "choices": [str(i) for i in range(n_choices)], "correct_idx": 2}


def test_the_official_item_is_the_question_with_its_choices_and_a_letter():
    item = next(i for i in convert(_question(), source="p.json")["items"] if i["format"] == "official_mcq")
    assert item["expected"] == "C" and item["chance"] == pytest.approx(0.2)
    assert "Question: How many times did I open (0, 1, 2, 2) in 00:02?. Answers: (A) 0. (B) 1. (C) 2. (D) 3. " \
           "(E) 4. Correct:" in item["prompt"]
    row = pd.Series(item)
    assert rule_verdict(row, "C")[1:3] == (True, "rule")
    assert rule_verdict(row, "Answer: C")[1:3] == (False, "rule")  # read as A, as the authors read it
    assert rule_verdict(row, "c")[1:3] == (False, "unparsed")


def _partials(rows) -> pd.DataFrame:
    """``(prototype, video, n, correct)`` → partial rows of one responder under clip."""
    out = [{"responder": "m", "model": "x", "condition": "clip", "prototype": p, "clip_key": v, "chance": 0.2,
            "n": n, "correct": c, "n_unreadable": 0, "n_failed": 0, "n_skipped": 0, "correct_lmms": c,
            "n_unreadable_lmms": 0} for p, v, n, c in rows]
    return pd.DataFrame(out, columns=PARTIAL_COLUMNS)


def test_categories_are_means_of_types_and_the_headline_a_mean_of_categories():
    # recipe: a large easy type and a small hard one; gaze: one type. Pooled, the large type dominates.
    p = _partials([("recipe_step_recognition", f"v{i}", 10, 9) for i in range(10)]
                  + [("recipe_prep_localization", "v0", 10, 1), ("recipe_prep_localization", "v1", 10, 1)]
                  + [("gaze_gaze_estimation", f"v{i}", 5, 2) for i in range(4)])
    s = official_scores(p, n_boot=200).set_index(["aggregate", "category", "question_type"])
    assert s.loc[("type", "recipe", "recipe_step_recognition"), "accuracy"] == pytest.approx(0.9)
    assert s.loc[("category", "recipe", "*"), "accuracy"] == pytest.approx((0.9 + 0.1) / 2)
    assert s.loc[("category", "gaze", "*"), "accuracy"] == pytest.approx(0.4)
    head = s.loc[("headline", "*", "*")]
    assert head["accuracy"] == pytest.approx((0.5 + 0.4) / 2) and head["n_categories"] == 2
    assert "fine_grained" in head["note"] and "object_motion" in head["note"]
    assert s.loc[("pooled", "*", "*"), "accuracy"] == pytest.approx((90 + 2 + 8) / 140)
    assert s.loc[("category", "recipe", "*"), "note"].startswith("mean of 2 of 8 types")
    for _, r in s.iterrows():
        assert r["ci_low"] - 1e-9 <= r["accuracy"] <= r["ci_high"] + 1e-9, r.name


def test_failed_calls_count_wrong_and_skipped_rows_are_left_out():
    item = next(i for i in convert(_question(), source="p.json")["items"] if i["format"] == "official_mcq")
    items = pd.DataFrame([{**item, "prototype": "gaze_gaze_estimation", "clip_key": "hd_epic_vqa__v"}])
    base = {"item_id": item["item_id"], "clip_key": "hd_epic_vqa__v", "format": "official_mcq", "model": "x"}
    responses = pd.DataFrame([
        {**base, "responder": "a", "condition": "clip", "reply": "C", "status": "ok"},
        {**base, "responder": "b", "condition": "clip", "reply": "", "status": "error"},
        {**base, "responder": "c", "condition": "clip", "reply": "", "status": "skipped"},
        {**base, "responder": "d", "condition": "clip", "reply": "c", "status": "ok"},
    ])
    p = official_partials(responses, items).set_index("responder")
    assert (p.loc["a", "n"], p.loc["a", "correct"]) == (1, 1)
    assert (p.loc["b", "n"], p.loc["b", "correct"], p.loc["b", "n_failed"]) == (1, 0, 1)
    assert (p.loc["c", "n"], p.loc["c", "n_skipped"]) == (0, 1)
    assert (p.loc["d", "correct"], p.loc["d", "n_unreadable"], p.loc["d", "correct_lmms"]) == (0, 1, 1)


def test_every_published_average_is_the_mean_of_its_seven_categories():
    for model, kind, *values in PUBLISHED:
        assert np.mean(values[:7]) == pytest.approx(values[7], abs=0.1), (model, kind)  # each figure rounded to 0.1
    layout = published_layout(pd.DataFrame())
    gemini = layout[(layout["model"] == "Gemini Pro") & (layout["input"] == "video-language")].iloc[0]
    assert gemini["Avg."] == 37.0 and gemini["source"] == "published" and len(PUBLISHED_COLUMNS) == 7
    assert layout.iloc[-1]["model"] == "chance" and layout.iloc[-1]["Avg."] == 20.0


def test_the_report_shows_the_published_layout_with_the_authors_rows_labelled():
    from epic_levels_pipeline.reporting.report import build_report
    from epic_levels_pipeline.reporting.vqa_sections import SECTION_VQA_OFFICIAL

    p = _partials([("recipe_step_recognition", "v0", 10, 9), ("gaze_gaze_estimation", "v1", 10, 2)])
    report = build_report(None, None, None, None, vqa_official=official_scores(p, n_boot=50))
    section = report.markdown.split(f"## {SECTION_VQA_OFFICIAL}")[1]
    assert "| this run | m/x | video-language | 90.0 |" in section
    assert "| published | Gemini Pro | video-language | 53.4 | 44.0 | 35.0 | 39.6 | 31.6 | 23.0 | 32.8 | 37.0 |" in section
    assert "recipe_step_recognition" in section and "lmms-eval" in section
    assert SECTION_VQA_OFFICIAL not in build_report(None, None, None, None).markdown  # not given: no section
