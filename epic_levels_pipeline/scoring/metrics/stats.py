"""Statistics for scores: chance correction, clip-clustered percentile bootstrap intervals, and paired comparisons by
a clip-level sign-flip McNemar test (the exact McNemar test when each clip holds one pair). Intervals depend only
on what the clips hold, not on row order; NaN propagates, never dropped silently (docs/design/scoring.md)."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import pandas as pd


def chance_corrected(accuracy, chance):
    """``(accuracy - chance) / (1 - chance)``; NaN where ``chance == 1``.

    Works on scalars (returns a float), numpy arrays (broadcast) and pandas Series/DataFrames (index kept,
    pandas alignment rules apply when both are pandas).
    """
    if isinstance(accuracy, (pd.Series, pd.DataFrame)) or isinstance(chance, (pd.Series, pd.DataFrame)):
        denom = 1 - chance
        out = (accuracy - chance) / denom
        if isinstance(denom, (pd.Series, pd.DataFrame)):
            return out.where(denom != 0)
        return out * np.nan if denom == 0 else out
    acc = np.asarray(accuracy, dtype=float)
    ch = np.asarray(chance, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(ch == 1, np.nan, (acc - ch) / (1 - ch))
    return float(out) if out.ndim == 0 else out


def chance_corrected_interval(low, high, chance) -> tuple:
    """The chance-corrected interval: the accuracy interval's ends transformed (monotone for ``chance < 1``)."""
    return chance_corrected(low, chance), chance_corrected(high, chance)


def _percentiles(boot: np.ndarray, alpha: float) -> tuple[float, float]:
    low, high = np.quantile(boot, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def _row_bootstrap(values: np.ndarray, stat: Callable, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    values = np.sort(values)  # the draws pick positions: sorted, the result depends on the values' counts only
    idx = rng.integers(0, len(values), size=(n_boot, len(values)))
    if stat is np.mean:
        return values[idx].mean(axis=1)
    return np.array([stat(values[row]) for row in idx], dtype=float)


def _draw_counts(k: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_boot, k)`` matrix: how often each of ``k`` clusters is drawn in each resample of ``k`` draws.
    They depend only on ``k`` and the generator: every group of ``k`` clips gets the same draws."""
    draws = rng.integers(0, k, size=(n_boot, k))
    return np.bincount((draws + np.arange(n_boot)[:, None] * k).ravel(), minlength=n_boot * k).reshape(n_boot, k)


def cluster_draws(k: int, n_boot: int, seed: int = 0) -> np.ndarray:
    """``(n_boot, k)``: how often each of ``k`` clusters is drawn in each resample — the draws every cluster
    bootstrap here makes for ``k`` clusters and ``seed``."""
    return _draw_counts(k, n_boot, np.random.default_rng(seed))


def _clusters(values: np.ndarray, clusters, name: str = "values") -> tuple[np.ndarray, int]:
    """Integer codes of ``clusters`` (one per row of ``values``; in sorted order of the ids, so the draws do
    not depend on row order) and how many distinct clusters there are."""
    groups = pd.Series(np.asarray(clusters, dtype=object).ravel())
    if len(values) != len(groups):
        raise ValueError(f"{name} ({len(values)}) and clusters ({len(groups)}) differ in length")
    codes, uniques = pd.factorize(groups.astype(str), sort=True, use_na_sentinel=False)
    return codes, len(uniques)


def cluster_bootstrap(values, clusters, *, stat: Callable = np.mean, n_boot: int = 2000, seed: int = 0,
                      alpha: float = 0.05) -> tuple[float, float]:
    """Percentile ``1 - alpha`` interval of ``stat`` by resampling clusters (clip ids) with replacement.

    Each resample draws as many clusters as there are, with replacement, and computes ``stat`` on the
    concatenated rows of the drawn clusters (a cluster drawn twice counts twice). Edge cases:

    - no rows → ``(nan, nan)``;
    - one cluster → rows are resampled within it (an ordinary bootstrap; clustering cannot be estimated);
    - ``stat is np.mean`` takes a vectorised path (cluster sums and sizes weighted by draw counts); any other
      ``stat`` gets the same draws, rows repeated by their cluster's count, so both paths agree.

    The same ``seed`` gives the same interval.
    """
    vals = np.asarray(values, dtype=float).ravel()
    codes, k = _clusters(vals, clusters)
    if len(vals) == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    if k == 1:
        return _percentiles(_row_bootstrap(vals, stat, n_boot, rng), alpha)
    counts = _draw_counts(k, n_boot, rng)
    if stat is np.mean:
        sums = np.bincount(codes, weights=vals, minlength=k)
        sizes = np.bincount(codes, minlength=k).astype(float)
        boot = (counts @ sums) / (counts @ sizes)
    else:
        boot = np.array([stat(np.repeat(vals, row[codes])) for row in counts], dtype=float)
    return _percentiles(boot, alpha)


def score_intervals(correct, chance, clusters, *, n_boot: int = 2000, seed: int = 0,
                    alpha: float = 0.05) -> tuple[tuple[float, float], tuple[float, float]]:
    """Clip-clustered ``1 - alpha`` intervals of a group's accuracy and of its chance-corrected accuracy:
    ``((accuracy_low, accuracy_high), (chance_corrected_low, chance_corrected_high))``.

    The accuracy interval is :func:`cluster_bootstrap` of ``correct``. With one chance the chance-corrected interval
    is the accuracy interval transformed; with pooled chances each resample (the same draws) recomputes both means.
    A resample of mean chance 1, or NaN in ``chance``, gives a NaN interval; no rows → all NaN."""
    ok = np.asarray(correct, dtype=float).ravel()
    ch = np.asarray(chance, dtype=float).ravel()
    if len(ok) != len(ch):
        raise ValueError(f"correct ({len(ok)}) and chance ({len(ch)}) differ in length")
    codes, k = _clusters(ok, clusters, "correct")
    nan = float("nan")
    if len(ok) == 0:
        return (nan, nan), (nan, nan)
    if np.all(ch == ch[0]):
        low, high = cluster_bootstrap(ok, clusters, n_boot=n_boot, seed=seed, alpha=alpha)
        return (low, high), chance_corrected_interval(low, high, float(ch.mean()))  # the group's chance, as reported
    rng = np.random.default_rng(seed)
    if k == 1:  # the draws of _row_bootstrap, applied to both columns, rows sorted by (correct, chance)
        order = np.lexsort((ch, ok))
        ok, ch = ok[order], ch[order]
        idx = rng.integers(0, len(ok), size=(n_boot, len(ok)))
        boot_acc, boot_chance = ok[idx].mean(axis=1), ch[idx].mean(axis=1)
    else:
        counts = _draw_counts(k, n_boot, rng)
        sizes = counts @ np.bincount(codes, minlength=k).astype(float)
        boot_acc = (counts @ np.bincount(codes, weights=ok, minlength=k)) / sizes
        boot_chance = (counts @ np.bincount(codes, weights=ch, minlength=k)) / sizes
    boot_cc = np.asarray(chance_corrected(boot_acc, boot_chance), dtype=float)
    cc = (nan, nan) if np.isnan(boot_cc).any() else _percentiles(boot_cc, alpha)
    return _percentiles(boot_acc, alpha), cc


EXACT_MCNEMAR_LIMIT = 20_000  # discordant pairs up to which the McNemar tail is summed in exact integers


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: ``min(1, 2 P(X <= min(b, c)))``, ``X ~ Bin(b + c, 1/2)``.

    ``b + c == 0`` (no discordant pair) → 1.0. Up to :data:`EXACT_MCNEMAR_LIMIT` discordant pairs the tail is
    summed in exact integers (one correctly rounded division at the end: milliseconds); above it, where that sum
    grows with the square of the pairs (seconds at 10^5, minutes at 10^6: two models over every clip), the
    binomial distribution function of ``scipy.stats`` (relative error below 1e-12 in the tests).
    """
    b, c = int(only_a), int(only_b)
    if b < 0 or c < 0:
        raise ValueError("discordant counts must be non-negative")
    n = b + c
    if n == 0:
        return 1.0
    if n > EXACT_MCNEMAR_LIMIT:
        from scipy.stats import binom

        return min(1.0, 2 * float(binom.cdf(min(b, c), n, 0.5)))
    return _mcnemar_integers(b, c)


def _mcnemar_integers(b: int, c: int) -> float:
    """:func:`mcnemar_exact` summed in exact integers (any size; time grows with ``min(b, c) · (b + c)``)."""
    n = b + c
    term = tail = 1  # C(n, 0); each next term C(n, i + 1) = C(n, i) * (n - i) / (i + 1), exactly
    for i in range(min(b, c)):
        term = term * (n - i) // (i + 1)
        tail += term
    return min(1.0, 2 * tail / 2 ** n)


def _binomial_half_pmf(k: int) -> np.ndarray:
    """``P(X = j)``, ``X ~ Bin(k, 1/2)``, ``j = 0..k``: exact integer binomials, one rounded division each."""
    out, term, total = np.empty(k + 1), 1, 2 ** k
    for j in range(k + 1):
        out[j] = term / total
        term = term * (k - j) // (j + 1)
    return out


def mcnemar_clustered(only_a, only_b) -> float:
    """Two-sided clip-clustered McNemar p-value: an exact sign-flip permutation test over clips.

    ``only_a[i]`` / ``only_b[i]`` are clip ``i``'s discordant pairs; each clip's net difference gets a fair sign
    under the null and ``p = P(|sum(s_i |d_i|)| >= |T|)`` is computed exactly over the ``2^K`` patterns. One pair
    per clip gives :func:`mcnemar_exact`; a clip counts once however many pairs it holds. No discordant pair or a
    net difference of 0 → 1.0; one clip → :func:`mcnemar_exact` of its counts. Negative counts or arrays of
    different lengths raise. Why this test over the alternatives: docs/design/scoring.md."""
    b = np.asarray(only_a, dtype=np.int64).ravel()
    c = np.asarray(only_b, dtype=np.int64).ravel()
    if len(b) != len(c):
        raise ValueError(f"only_a ({len(b)}) and only_b ({len(c)}) differ in length (one entry per clip)")
    if (b < 0).any() or (c < 0).any():
        raise ValueError("discordant counts must be non-negative")
    if len(b) == 1:
        return mcnemar_exact(int(b[0]), int(c[0]))
    d = b - c
    observed = abs(int(d.sum()))
    d = d[d != 0]
    if observed == 0:
        return 1.0
    sizes, counts = np.unique(np.abs(d), return_counts=True)
    if len(sizes) == 1:  # T / m = (leaning to A) - (leaning to B): a binomial, exactly
        return mcnemar_exact(int((d > 0).sum()), int((d < 0).sum()))
    # distribution of sum(s_i |d_i|) on the integers -S..S, built one group of equal |d_i| at a time,
    # largest group first so the long convolutions are with short kernels. A group's kernel is Bin(k, 1/2) on
    # every (2m)-th place (s = m(2j - k), j clips of this size signed +): the convolution adds its k + 1 shifted,
    # weighted copies of the distribution instead of multiplying by all 2mk + 1 places (the same sums of
    # non-negative terms without the zeros; the place of clips with many pairs made the full kernel long)
    dist = np.ones(1)
    for m, k in sorted(zip(sizes.tolist(), counts.tolist()), key=lambda g: -g[1]):
        out = np.zeros(len(dist) + 2 * m * k)
        for j, weight in enumerate(_binomial_half_pmf(k)):
            out[2 * m * j: 2 * m * j + len(dist)] += weight * dist
        dist = out
    half = (len(dist) - 1) // 2
    t = np.abs(np.arange(-half, half + 1))
    return min(1.0, math.fsum(dist[t >= observed]))


def _as_bool(values, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=object).ravel()
    if any(v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA for v in arr):
        raise ValueError(f"{name} has missing values; drop unscored pairs first")
    return arr.astype(bool)


def paired_summary(a_correct, b_correct, clusters, *, n_boot: int = 2000, seed: int = 0,
                   alpha: float = 0.05) -> dict:
    """Compare two settings on the same questions (row i of ``a_correct`` and ``b_correct`` is one question).

    Returns ``n_pairs``, ``both``, ``only_a``, ``only_b``, ``neither``, ``accuracy_a``, ``accuracy_b``,
    ``mcnemar_p`` (clip-clustered, :func:`mcnemar_clustered`), ``mcnemar_p_unclustered`` (exact McNemar
    with pairs treated as independent, :func:`mcnemar_exact`), ``diff`` = mean(a) − mean(b) and
    ``diff_ci_low``/``diff_ci_high`` (cluster bootstrap of the per-question difference a − b, clusters =
    clip ids). No pairs → counts 0, p 1.0, NaN diff and interval. Missing values raise (pair only scored
    rows).
    """
    a = _as_bool(a_correct, "a_correct")
    b = _as_bool(b_correct, "b_correct")
    if len(a) != len(b):
        raise ValueError(f"a_correct ({len(a)}) and b_correct ({len(b)}) differ in length")
    codes, k = _clusters(a, clusters, "a_correct")
    per_clip_a = np.bincount(codes, weights=(a & ~b), minlength=k).astype(np.int64)
    per_clip_b = np.bincount(codes, weights=(~a & b), minlength=k).astype(np.int64)
    only_a, only_b = int(per_clip_a.sum()), int(per_clip_b.sum())
    diff_values = a.astype(float) - b.astype(float)
    low, high = cluster_bootstrap(diff_values, clusters, n_boot=n_boot, seed=seed, alpha=alpha)
    nan = float("nan")
    return {
        "n_pairs": int(len(a)),
        "both": int((a & b).sum()),
        "only_a": only_a,
        "only_b": only_b,
        "neither": int((~a & ~b).sum()),
        "accuracy_a": float(a.mean()) if len(a) else nan,
        "accuracy_b": float(b.mean()) if len(b) else nan,
        "mcnemar_p": mcnemar_clustered(per_clip_a, per_clip_b),
        "mcnemar_p_unclustered": mcnemar_exact(only_a, only_b),
        "diff": float(diff_values.mean()) if len(a) else nan,
        "diff_ci_low": low,
        "diff_ci_high": high,
    }
