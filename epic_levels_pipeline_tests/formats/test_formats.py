"""Five formats: same right answer everywhere, stated output formats, the checker, format-3 truths, chance."""

import json
import re

import pytest
from hypothesis import given, strategies as st

from epic_levels_pipeline.formats.items import list_dependent_phrases, open_problems
from epic_levels_pipeline.formats.registry import ITEM_FORMATS as FORMATS, chance
from epic_levels_pipeline.bank.build import LETTERS


@pytest.mark.parametrize("phrase", ["which of the following", "of these", "listed", "options", "above", "below"])
def test_checker_rejects_each_list_dependent_phrase(phrase):
    prompt = f"Pick {phrase} the object the camera wearer holds. Answer with the name of the object."
    assert list_dependent_phrases(prompt) == [phrase]
    assert open_problems(prompt, ["spoon"]) == [f"list-dependent wording {phrase!r}"]


def test_checker_rejects_a_leaked_option():
    assert open_problems("Is the camera wearer holding the spoon? Answer with the name of the object.",
                         ["spoon", "knife"]) == ["leaks option 'spoon'"]


def test_chance_per_format():
    assert chance("yes_no") == 0.5 and chance("multiple_choice") == 0.25
    assert chance("statements") == pytest.approx(1 / 15) and chance("option_judgement") == 1 / 4
    assert chance("open") == 0 and chance("open_with_reason", base_format="option_judgement") == 1 / 4
    assert chance("statements", n_statements=3) == pytest.approx(1 / 7)


def test_five_formats_with_one_right_answer(offline_bank):
    questions, items = offline_bank["questions"], offline_bank["items"]
    for q in questions.itertuples():
        its = items[items["question_id"] == q.question_id].set_index("format")
        assert {"yes_no", "multiple_choice", "statements", "open_with_reason"} <= set(its.index)
        assert ("open" in its.index) != ("option_judgement" in its.index)
        assert its.loc["multiple_choice", "expected"] == LETTERS[q.answer_index]
        if "open" in its.index:
            assert its.loc["open", "expected"] == q.answer
            assert its.loc["open_with_reason", "prompt"].endswith(
                "Because: <one sentence on what you saw or heard that supports your answer>")
        else:
            truth = its.loc["option_judgement", "expected"].split(",")
            assert truth.index("true") == q.answer_index and truth.count("true") == 1
        statements = json.loads(its.loc["statements", "statements"])
        key_statement = q.statement.format(option=q.answer)
        assert any(s["truth"] and s["text"].lower() == key_statement.lower() for s in statements)
    assert set(items["format"]) == set(FORMATS)


def test_open_items_have_no_list_dependent_wording(offline_bank):
    items = offline_bank["items"]
    open_items = items[items["base_format"] == "open"]
    assert len(open_items) > 100
    for item in open_items.itertuples():
        assert open_problems(item.prompt, list(item.options)) == [], item.item_id


def test_statements_have_a_true_statement_and_solver_truths(offline_bank):
    items = offline_bank["items"]
    for item in items[items["format"] == "statements"].itertuples():
        statements = json.loads(item.statements)
        assert len(statements) == 4 and any(s["truth"] for s in statements)
        assert item.expected == ",".join(LETTERS[i] for i, s in enumerate(statements) if s["truth"])


def test_yes_no_is_balanced(offline_bank):
    yes = offline_bank["items"].query("format == 'yes_no'")
    share = (yes["expected"] == "yes").mean()
    assert abs(share - 0.5) <= 0.05
    # false statements use real distractors: the statement's option is one of the question's options
    assert all(v in values for v, values in zip(yes["statement_value"], yes["option_values"]))


@given(st.lists(st.sampled_from(["a/x", "a/y", "b/x"]), min_size=1, max_size=40), st.integers(0, 10**6))
def test_yes_no_truths_are_balanced_within_each_stratum(strata, seed):
    from collections import Counter

    from epic_levels_pipeline.formats.items import yes_no_truths

    ids = [f"clip/{s}/{i:04d}" for i, s in enumerate(strata)]
    by_id = dict(zip(ids, strata))
    truths = yes_no_truths(ids, seed, "epic_sounds/P01_01/0-30", by_id)
    assert set(truths) == set(ids)
    true, total = Counter(), Counter(strata)
    for q, t in truths.items():
        true[by_id[q]] += t
    for stratum, n in total.items():
        assert abs(2 * true[stratum] - n) <= 1, (stratum, true[stratum], n)
    assert yes_no_truths(ids, seed, "epic_sounds/P01_01/0-30", by_id) == truths


def test_format_check_names_each_question_missing_a_format(offline_bank):
    from epic_levels_pipeline.formats.items import format_problems

    questions, items = offline_bank["questions"], offline_bank["items"]
    assert format_problems(items, questions) == []
    first, second = questions["question_id"].iloc[0], questions["question_id"].iloc[1]
    gone = ((items["question_id"] == first) & (items["format"] == "statements")) | (
        (items["question_id"] == second) & items["format"].isin(["open", "option_judgement", "yes_no"]))
    assert format_problems(items[~gone], questions) == [f"{first}: missing ['statements']",
                                                        f"{second}: missing ['open|option_judgement', 'yes_no']"]


_WORDS = st.sampled_from(["spoon", "Spoon", "the", "of these", "listed", "ABOVE", "below", "1", "video 1", "<TIME 00:01 video 1>",
                          "a", "knife.", "tap", "é", "İ", " ", "options", "which of the following"])


@given(st.lists(_WORDS, max_size=12).map(" ".join), st.lists(_WORDS.map(lambda w: w + " ") | _WORDS, max_size=5))
def test_open_checks_find_what_a_plain_regex_search_finds(prompt, options):
    """The substring pre-test in front of each search never changes what the checks find."""
    from epic_levels_pipeline.formats.items import LIST_DEPENDENT, leaked_options

    text = prompt.lower()
    assert list_dependent_phrases(prompt) == [p for p in LIST_DEPENDENT if re.search(rf"\b{re.escape(p)}\b", text)]
    masked = re.sub(r"<[^<>]*>", " ", text)
    assert leaked_options(prompt, options) == [
        o for o in options if o.strip() and re.search(rf"(?<![a-z]){re.escape(o.strip().lower())}(?![a-z])", masked)]
