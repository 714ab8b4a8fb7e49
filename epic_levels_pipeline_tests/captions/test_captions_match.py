"""The matcher on hand-made spans: greedy vs Hungarian, the tie rules, order independence."""

import random

import pytest

from epic_levels_pipeline.captions.match import greedy_match, hungarian_match, tiou
from epic_levels_pipeline.captions.structure import Unit


def units(kind, spans, prefix):
    return [Unit(kind, f"{prefix}{i}", a, b) for i, (a, b) in spans]


def ids(pairs, refs, resps):
    return sorted((refs[i].id, resps[j].id) for i, j, _ in pairs)


def test_tiou():
    assert tiou(0, 10, 0, 10) == 1.0
    assert tiou(0, 10, 10, 20) == 0.0            # touching is not overlapping
    assert tiou(0, 10, 5, 15) == pytest.approx(5 / 15)
    assert tiou(0, 10, 2, 4) == pytest.approx(0.2)


def test_greedy_and_hungarian_differ():
    """R1 0–10 / P1 2–14 is the best pair (tIoU 8/14 = .571); greedy takes it, and then R2 8–18 (only
    overlapping P1, .375) and P2 0–4 (only overlapping R1, .4) are left unmatched. The optimum pairs
    R1–P2 and R2–P1: two matches instead of one."""
    refs = units("action", [(1, (0, 10)), (2, (8, 18))], "R")
    resps = units("action", [(1, (2, 14)), (2, (0, 4))], "P")
    assert ids(greedy_match(refs, resps, 0.3), refs, resps) == [("R1", "P1")]
    assert ids(hungarian_match(refs, resps, 0.3), refs, resps) == [("R1", "P2"), ("R2", "P1")]


def test_threshold_is_inclusive_and_applied():
    refs = units("event", [(1, (0, 10))], "R")
    resps = units("event", [(1, (0, 2))], "P")          # tIoU exactly 0.2
    assert len(greedy_match(refs, resps, 0.2)) == 1
    assert greedy_match(refs, resps, 0.21) == []
    assert len(hungarian_match(refs, resps, 0.2)) == 1 and hungarian_match(refs, resps, 0.21) == []


def test_tie_goes_to_the_earlier_start():
    """P1 4–8 overlaps R1 2–6 and R2 6–10 by 2 s each (tIoU 1/3 both): the earlier-starting R1 gets it."""
    refs = units("action", [(1, (6, 10)), (2, (2, 6))], "R")    # listed later-first on purpose
    resps = units("action", [(1, (4, 8))], "P")
    assert ids(greedy_match(refs, resps, 0.3), refs, resps) == [("R2", "P1")]


def test_tie_then_goes_to_the_smaller_id_in_natural_order():
    """Identical spans: R2 before R10 (natural order), and P3 before P11 on the response side."""
    refs = [Unit("event", "R10", 0, 4), Unit("event", "R2", 0, 4)]
    resps = [Unit("event", "P11", 0, 4), Unit("event", "P3", 0, 4), Unit("event", "P20", 20, 24)]
    pairs = ids(greedy_match(refs, resps, 0.2), refs, resps)
    assert pairs == [("R10", "P11"), ("R2", "P3")]


def test_greedy_does_not_depend_on_listing_order():
    rng = random.Random(3)
    refs = [Unit("event", f"R{i}", s, s + rng.uniform(0.5, 4)) for i, s in enumerate(rng.uniform(0, 20) for _ in range(12))]
    resps = [Unit("event", f"P{i}", s, s + rng.uniform(0.5, 4)) for i, s in enumerate(rng.uniform(0, 20) for _ in range(12))]
    base = ids(greedy_match(refs, resps, 0.2), refs, resps)
    for _ in range(5):
        a, b = refs[:], resps[:]
        rng.shuffle(a)
        rng.shuffle(b)
        assert ids(greedy_match(a, b, 0.2), a, b) == base
    assert len(hungarian_match(refs, resps, 0.2)) >= len(base)
