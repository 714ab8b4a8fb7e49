"""Statistics: McNemar by hand and clustered by clip, chance correction, clustered bootstrap (pooled chance
included), paired summaries."""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings, strategies as st

from epic_levels_pipeline.scoring.metrics.stats import (
    chance_corrected, chance_corrected_interval, cluster_bootstrap, mcnemar_clustered, mcnemar_exact,
    paired_summary, score_intervals,
)


# --- McNemar --------------------------------------------------------------------------------------------

def test_mcnemar_by_hand():
    # X ~ Bin(10, 1/2); p = 2 * (C(10,0) + C(10,1)) / 2^10
    assert mcnemar_exact(1, 9) == pytest.approx(0.021484375, abs=0, rel=1e-15)
    assert mcnemar_exact(9, 1) == mcnemar_exact(1, 9)
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)
    assert mcnemar_exact(2, 8) == pytest.approx(2 * (1 + 10 + 45) / 1024)


@pytest.mark.parametrize("b", [0, 1, 5, 50])
def test_mcnemar_equal_counts_is_one(b):
    assert mcnemar_exact(b, b) == 1.0


@pytest.mark.parametrize("b, c", [(9000, 11001), (10010, 9991), (10000, 10500), (12000, 13000), (20000, 21000),
                                  (30000, 30000), (0, 20001)])
def test_mcnemar_above_the_exact_limit_is_the_integer_sum(b, c):
    """Above EXACT_MCNEMAR_LIMIT discordant pairs the p-value comes from scipy's binomial distribution function: the
    exact integer sum's value within a relative 1e-12 (deep tails, p ~ 1e-45, included)."""
    from epic_levels_pipeline.scoring.metrics.stats import EXACT_MCNEMAR_LIMIT, _mcnemar_integers

    assert b + c > EXACT_MCNEMAR_LIMIT
    assert mcnemar_exact(b, c) == pytest.approx(_mcnemar_integers(b, c), rel=1e-12, abs=0)
    assert mcnemar_exact(c, b) == mcnemar_exact(b, c)


def test_mcnemar_large_counts_stay_finite():
    p = mcnemar_exact(4000, 4400)
    assert 0 < p < 1 and math.isfinite(p)
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 3)


# --- chance correction ----------------------------------------------------------------------------------

def test_chance_corrected_known_values():
    assert chance_corrected(0.25, 0.25) == 0.0
    assert chance_corrected(1.0, 0.25) == 1.0
    assert chance_corrected(0.5, 0.5) == 0.0
    assert chance_corrected(0.625, 0.25) == pytest.approx(0.5)
    assert chance_corrected(0.0, 0.5) == pytest.approx(-1.0)
    assert math.isnan(chance_corrected(1.0, 1.0))
    assert math.isnan(chance_corrected(0.3, 1.0))


def test_chance_corrected_vectorised():
    acc = np.array([0.25, 1.0, 0.5, 1.0])
    ch = np.array([0.25, 0.25, 0.5, 1.0])
    out = chance_corrected(acc, ch)
    np.testing.assert_allclose(out[:3], [0.0, 1.0, 0.0])
    assert np.isnan(out[3])
    series = chance_corrected(pd.Series([0.25, 1.0], index=["x", "y"]), 0.25)
    assert list(series.index) == ["x", "y"] and series.tolist() == [0.0, 1.0]
    both = chance_corrected(pd.Series([0.5, 0.9]), pd.Series([0.5, 1.0]))
    assert both.iloc[0] == 0.0 and np.isnan(both.iloc[1])
    assert np.isnan(chance_corrected(pd.Series([0.5]), 1.0)).all()


def test_chance_corrected_interval_is_the_transformed_interval():
    low, high = chance_corrected_interval(0.4, 0.7, 0.25)
    assert low == pytest.approx(0.2) and high == pytest.approx(0.6)


# --- cluster bootstrap ----------------------------------------------------------------------------------

def _clustered(n_clusters=40, per=25, spread=0.35, seed=1):
    rng = np.random.default_rng(seed)
    p = np.clip(0.5 + rng.uniform(-spread, spread, n_clusters), 0, 1)
    values = (rng.random((n_clusters, per)) < p[:, None]).astype(float).ravel()
    clusters = np.repeat([f"clip{i}" for i in range(n_clusters)], per)
    return values, clusters


def test_bootstrap_is_reproducible_and_contains_the_mean():
    values, clusters = _clustered()
    first = cluster_bootstrap(values, clusters, seed=7)
    assert first == cluster_bootstrap(values, clusters, seed=7)
    assert first != cluster_bootstrap(values, clusters, seed=8)
    low, high = first
    assert low < values.mean() < high


def test_cluster_bootstrap_widens_with_between_cluster_variance():
    values, clusters = _clustered(spread=0.45)
    c_low, c_high = cluster_bootstrap(values, clusters, seed=0)
    r_low, r_high = cluster_bootstrap(values, np.arange(len(values)), seed=0)  # every row its own cluster
    assert (c_high - c_low) > 1.5 * (r_high - r_low)


def test_generic_stat_agrees_with_the_vectorised_mean():
    values, clusters = _clustered()
    fast = cluster_bootstrap(values, clusters, seed=3)
    slow = cluster_bootstrap(values, clusters, stat=lambda v: float(np.mean(v)), seed=3, n_boot=2000)
    assert fast == pytest.approx(slow, abs=1e-12)
    med = cluster_bootstrap(values, clusters, stat=np.median, seed=3, n_boot=200)
    assert 0 <= med[0] <= med[1] <= 1


def test_bootstrap_edge_cases():
    assert all(math.isnan(x) for x in cluster_bootstrap([], []))
    # one cluster: rows are resampled within it, so the interval is not degenerate
    rng = np.random.default_rng(0)
    values = (rng.random(200) < 0.5).astype(float)
    low, high = cluster_bootstrap(values, ["clip"] * 200, seed=0)
    assert low < values.mean() < high and high - low > 0.05
    # constant values: zero-width interval at the value
    assert cluster_bootstrap([1.0] * 10, list("aabbccddee")) == (1.0, 1.0)
    with pytest.raises(ValueError):
        cluster_bootstrap([1.0, 0.0], ["a"])


def test_bootstrap_is_fast():
    values, clusters = _clustered(n_clusters=100, per=10)
    start = time.perf_counter()
    cluster_bootstrap(values, clusters, n_boot=2000)
    cluster_bootstrap(values, np.arange(len(values)), n_boot=2000)
    assert time.perf_counter() - start < 3.0


# --- paired summary -------------------------------------------------------------------------------------

def test_paired_summary_counts():
    a = [1, 1, 1, 0, 0, 1, 0, 1]
    b = [1, 0, 0, 0, 1, 1, 0, 0]
    clusters = ["c1", "c1", "c2", "c2", "c3", "c3", "c4", "c4"]
    s = paired_summary(a, b, clusters, n_boot=500)
    assert (s["n_pairs"], s["both"], s["only_a"], s["only_b"], s["neither"]) == (8, 2, 3, 1, 2)
    assert s["both"] + s["only_a"] + s["only_b"] + s["neither"] == s["n_pairs"]
    assert s["diff"] == pytest.approx(5 / 8 - 3 / 8)
    assert s["mcnemar_p"] == mcnemar_exact(3, 1) == pytest.approx(2 * (1 + 4) / 16)
    assert s["diff_ci_low"] <= s["diff"] <= s["diff_ci_high"]
    assert s == paired_summary(a, b, clusters, n_boot=500)  # same seed, same result


def test_paired_summary_identical_settings_and_empty():
    s = paired_summary([True, False, True], [True, False, True], ["a", "b", "c"])
    assert (s["only_a"], s["only_b"], s["mcnemar_p"], s["diff"]) == (0, 0, 1.0, 0.0)
    assert (s["diff_ci_low"], s["diff_ci_high"]) == (0.0, 0.0)
    empty = paired_summary([], [], [])
    assert empty["n_pairs"] == 0 and empty["mcnemar_p"] == 1.0 and math.isnan(empty["diff"])
    with pytest.raises(ValueError):
        paired_summary([True, None], [True, False], ["a", "b"])
    with pytest.raises(ValueError):
        paired_summary([True], [True, False], ["a", "b"])


def test_paired_summary_reports_both_p_values():
    a = [True] * 6 + [False] * 2
    b = [False] * 6 + [True] * 2
    s = paired_summary(a, b, ["c1"] * 3 + ["c2"] * 3 + ["c3", "c4"], n_boot=50)
    assert s["mcnemar_p_unclustered"] == mcnemar_exact(6, 2)
    assert s["mcnemar_p"] == mcnemar_clustered([3, 3, 0, 0], [0, 0, 1, 1])


# --- clustered McNemar ----------------------------------------------------------------------------------

def _enumerated(only_a, only_b) -> float:
    """The sign-flip p by listing all 2^K sign patterns (the definition, for small K)."""
    d = np.asarray(only_a) - np.asarray(only_b)
    observed = abs(int(d.sum()))
    hits = sum(abs(int(np.dot(signs, d))) >= observed for signs in itertools.product((1, -1), repeat=len(d)))
    return hits / 2 ** len(d)


clip_counts = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=2, max_size=9)


@settings(deadline=None)
@given(clip_counts)
def test_clustered_p_is_the_enumerated_sign_flip_p(counts):
    only_a, only_b = zip(*counts)
    # the convolution sums rounded binomial terms in floats; the enumeration counts patterns exactly
    assert mcnemar_clustered(only_a, only_b) == pytest.approx(_enumerated(only_a, only_b), rel=1e-12, abs=1e-15)


@settings(deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=0, max_size=300))
def test_independent_clips_give_the_plain_mcnemar_p(pairs):
    # one pair per clip: the sign-flip distribution is exactly Bin(b + c, 1/2), so the tolerance is zero
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    s = paired_summary(a, b, [f"clip{i}" for i in range(len(pairs))], n_boot=20)
    assert s["mcnemar_p"] == s["mcnemar_p_unclustered"] == mcnemar_exact(s["only_a"], s["only_b"])


def _pairs_of(clip_pairs: list[list[tuple[bool, bool]]], copies: dict[int, int]) -> tuple[list, list, list]:
    a, b, clips = [], [], []
    for i, pairs in enumerate(clip_pairs):
        for _ in range(copies.get(i, 1)):
            for x, y in pairs:
                a.append(x)
                b.append(y)
                clips.append(f"clip{i}")
    return a, b, clips


@settings(deadline=None)
@given(st.lists(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=5), min_size=3, max_size=8),
       st.data())
def test_duplicating_one_clip_shrinks_the_plain_p_but_not_the_clustered_p(clip_pairs, data):
    lean = [sum(x and not y for x, y in p) - sum(y and not x for x, y in p) for p in clip_pairs]
    total = sum(lean)
    candidates = [i for i, d in enumerate(lean) if d != 0 and (d > 0) == (total > 0) and total != 0]
    assume(candidates)  # some clip leans the way the total does: it is the one copied
    j = data.draw(st.sampled_from(candidates))
    leaning_clips = sum(d != 0 for d in lean)
    floor = 2.0 ** (1 - leaning_clips)  # the observed sign pattern and its mirror are always as extreme
    plain, clustered = {}, {}
    for k in (1, 2, 5, 50, 200):
        s = paired_summary(*_pairs_of(clip_pairs, {j: k}), n_boot=10)
        plain[k], clustered[k] = s["mcnemar_p_unclustered"], s["mcnemar_p"]
        assert clustered[k] >= floor * (1 - 1e-12)
    assert plain[200] <= plain[1] and plain[200] < 1e-6 < floor
    # once the copied clip outweighs all others together (50 × |d_j| > 7 × 5), its copies change nothing
    assert clustered[50] == pytest.approx(clustered[200], rel=1e-12)


def test_duplicated_clip_worked_example():
    # ten clips, one pair each: six lean A, three lean B, one agrees; then clip 0's pair is copied k times
    only_a = [1, 1, 0, 1, 0, 1, 1, 0, 1, 0]
    only_b = [0, 0, 1, 0, 1, 0, 0, 1, 0, 0]
    assert mcnemar_clustered(only_a, only_b) == mcnemar_exact(6, 3) == pytest.approx(0.5078125)
    copied = [50] + only_a[1:]
    assert mcnemar_exact(sum(copied), sum(only_b)) < 1e-12  # 55 vs 3: the plain test is sure
    # clip 0 outweighs the rest: p = P(sign-flip sum of the other 8 leaning clips >= 5 - 3) = 93/256
    assert mcnemar_clustered(copied, only_b) == pytest.approx(93 / 256, rel=1e-12)


def test_clustered_edge_cases():
    assert mcnemar_clustered([], []) == 1.0
    assert mcnemar_clustered([0, 0, 0], [0, 0, 0]) == 1.0  # no discordant pair
    assert mcnemar_clustered([3, 0], [0, 3]) == 1.0  # leans cancel
    assert mcnemar_clustered([9], [1]) == mcnemar_exact(9, 1)  # one clip: its pairs as independent
    assert mcnemar_clustered([9, 0], [1, 0]) == 1.0  # one leaning clip among two: no evidence beyond it
    assert mcnemar_clustered([1] * 12, [0] * 12) == pytest.approx(2 ** -11)  # the floor 2^(1 - K)
    with pytest.raises(ValueError):
        mcnemar_clustered([1, 2], [1])
    with pytest.raises(ValueError):
        mcnemar_clustered([-1, 2], [1, 0])


def test_clustered_p_is_fast_on_many_clips():
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    p = mcnemar_clustered(rng.integers(0, 30, 2000), rng.integers(0, 30, 2000))
    assert 0 <= p <= 1 and time.perf_counter() - start < 2.0


# --- intervals of pooled chance -------------------------------------------------------------------------

clip_rows = st.lists(st.lists(st.tuples(st.booleans(), st.sampled_from([0.0, 1 / 16, 1 / 15, 0.25, 0.5])),
                              min_size=1, max_size=6), min_size=1, max_size=15)


def _rows(clips):
    correct = [ok for rows in clips for ok, _ in rows]
    chance = [ch for rows in clips for _, ch in rows]
    names = [f"clip{i}" for i, rows in enumerate(clips) for _ in rows]
    return np.array(correct, dtype=float), np.array(chance), names


@settings(deadline=None)
@given(clip_rows, st.sampled_from([0.0, 1 / 16, 1 / 15, 0.25, 0.5]))
def test_one_chance_gives_the_transformed_accuracy_interval(clips, chance):
    correct, _, names = _rows(clips)
    chances = np.full(len(correct), chance)
    acc, cc = score_intervals(correct, chances, names, n_boot=200, seed=4)
    assert acc == cluster_bootstrap(correct, names, n_boot=200, seed=4)
    assert cc == chance_corrected_interval(*acc, chances.mean())  # exactly the numbers of before


@settings(deadline=None)
@given(clip_rows)
def test_pooled_chance_interval_contains_the_estimate(clips):
    correct, chances, names = _rows(clips)
    acc, (low, high) = score_intervals(correct, chances, names, n_boot=300, seed=2)
    assert acc == cluster_bootstrap(correct, names, n_boot=300, seed=2)  # the same draws
    point = chance_corrected(correct.mean(), chances.mean())
    assert low - 1e-9 <= point <= high + 1e-9  # 1e-9: the resample means are summed in another order


@pytest.mark.parametrize("yes_no_right, honest_is_wider", [(False, True), (True, False)])
def test_pooled_chance_interval_follows_the_chance_of_the_drawn_clips(yes_no_right, honest_is_wider):
    # half the clips hold yes/no questions (chance 1/2), half open ones (chance 0); every reply in a clip
    # of one kind is right, in the other wrong. A resample with more yes/no clips has a higher chance, not
    # only another accuracy: when the wrong replies are the yes/no ones, accuracy falls as chance rises
    # and the fixed-chance interval (mean chance 1/4) is too narrow; when they are the open ones, the two
    # rise together and it is too wide.
    names = [f"clip{i}" for i in range(20) for _ in range(5)]
    yes_no = np.array([int(n[4:]) % 2 == 0 for n in names])
    correct = (yes_no == yes_no_right).astype(float)
    chances = np.where(yes_no, 0.5, 0.0)
    acc, cc = score_intervals(correct, chances, names, n_boot=1000)
    fixed = chance_corrected_interval(*acc, chances.mean())
    assert ((cc[1] - cc[0]) > 1.2 * (fixed[1] - fixed[0])) if honest_is_wider else \
        ((cc[1] - cc[0]) < 0.8 * (fixed[1] - fixed[0]))
    point = chance_corrected(correct.mean(), chances.mean())
    assert cc[0] <= point <= cc[1]


def test_score_intervals_edge_cases():
    nan_pair = score_intervals([], [], [])
    assert all(math.isnan(x) for pair in nan_pair for x in pair)
    # one clip, mixed chance: rows (with their chance) are resampled
    rng = np.random.default_rng(0)
    correct = (rng.random(60) < 0.6).astype(float)
    chances = np.tile([0.5, 0.0, 0.25], 20)
    _, (low, high) = score_intervals(correct, chances, ["clip"] * 60, n_boot=500)
    assert low < chance_corrected(correct.mean(), chances.mean()) < high
    _, cc = score_intervals([1.0, 0.0], [0.5, float("nan")], ["a", "b"])
    assert all(math.isnan(x) for x in cc)  # unknown chance is not guessed
    _, cc = score_intervals([1.0, 1.0, 0.0], [1.0, 1.0, 0.5], ["a", "b", "c"], n_boot=200)
    assert all(math.isnan(x) for x in cc)  # some resamples draw only chance-1 rows: no value, said so
    with pytest.raises(ValueError):
        score_intervals([1.0, 0.0], [0.5], ["a", "b"])
    with pytest.raises(ValueError):
        score_intervals([1.0, 0.0], [0.5, 0.5], ["a"])
