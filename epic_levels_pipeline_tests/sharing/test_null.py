"""The shuffled null of imported replies: replies moved within their stated form score near 0 pooled."""

import numpy as np
from hypothesis import given, settings, strategies as st

from epic_levels_pipeline.sharing.null import RuleScorer, null_score, perfect_replies, shuffled_replies

_SCORERS: dict = {}  # one rule scorer per bank for the session (its verdicts are remembered per item × reply)


def _scorer(items) -> RuleScorer:
    key = id(items)
    if key not in _SCORERS:
        _SCORERS[key] = RuleScorer(items)
    return _SCORERS[key]


def test_perfect_replies_score_one_in_every_condition(offline_bank):
    items = offline_bank["items"]
    table = null_score(items, perfect_replies(items), _scorer(items))
    assert set(table["condition"]) == {"clip", "no_clip", "silenced", "*"}
    assert (table["chance_corrected"] == 1.0).all() and (table["n_undecided"] == 0).all()


@settings(max_examples=5)
@given(seed=st.integers(0, 2 ** 31 - 1))
def test_a_shuffle_keeps_every_reply_in_its_items_stated_form(offline_bank, seed):
    """Moved within format, stated form and condition, no reply breaks its new item's form (none is unparsed);
    moved within format and condition alone, open_with_reason replies land in the other form and are."""
    items = offline_bank["items"]
    scorer = _scorer(items)
    mixed = items[items["format"] == "open_with_reason"]
    lines = perfect_replies(mixed)
    for within, broken in (("form", False), ("format", True)):
        moved = shuffled_replies(lines, mixed, seed, within=within)
        assert sorted(m["reply"] for m in moved) == sorted(line["reply"] for line in lines)
        kinds = {scorer(m["item_id"], m["reply"])[0] for m in moved}
        assert ("unparsed" in kinds) is broken, (within, kinds)


def test_shuffle_is_seeded_and_order_free(offline_bank):
    items = offline_bank["items"]
    lines = perfect_replies(items)
    one = shuffled_replies(lines, items, 7)
    again = shuffled_replies(list(reversed(lines)), items, 7)
    assert {(m["item_id"], m["condition"]): m["reply"] for m in one} == \
        {(m["item_id"], m["condition"]): m["reply"] for m in again}
    assert one != shuffled_replies(lines, items, 8)


@settings(max_examples=3)
@given(base=st.integers(0, 2 ** 20))
def test_pooled_shuffled_score_within_two_points_of_zero(offline_bank, base):
    """Eight shuffles pooled over every condition: the formats whose chance covers every content-blind reply (all
    but the open answers) score within ±0.02 of 0 chance-corrected (one shuffle: mean about +0.003, standard
    deviation about 0.009 on the bundled bank), and no moved reply breaks its item's form. Open answers stay above
    0 for a reason of their own (their chance is 0, yet questions share answers: counts above all), so the pool
    over every format sits near +0.025 (``bench/shuffled_null.py``)."""
    items = offline_bank["items"]
    closed = items[items["base_format"] != "open"]
    scorer = _scorer(items)
    lines = perfect_replies(closed)
    pooled = [line for seed in range(base, base + 8) for line in shuffled_replies(lines, closed, seed)]
    table = null_score(closed, pooled, scorer).set_index(["scope", "condition"])
    assert (table["n_unparsed"] == 0).all() and (table["n_undecided"] == 0).all()
    row = table.loc[("closed", "*")]
    assert abs(row["chance_corrected"]) <= 0.02, row
    assert table.loc[("all", "*"), "n"] == row["n"]  # nothing open was scored
