"""Statistics: McNemar by hand, chance correction, clustered bootstrap, paired summaries."""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
import pytest

from epic_levels_pipeline.scoring.metrics.stats import (
    chance_corrected, chance_corrected_interval, cluster_bootstrap, mcnemar_exact, paired_summary,
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
