"""Statistics for scores: chance correction, clip-clustered bootstrap intervals, paired comparisons.

Decisions:

- **Chance correction** is ``(accuracy - chance) / (1 - chance)``: 0 at chance, 1 at perfect, negative
  below chance. ``chance == 1`` (a question anyone gets right) gives NaN, never ±inf.
- **Intervals are percentile bootstrap intervals over clips.** Questions of one clip share the video, so
  they are not independent; resampling clips (clusters) with replacement, then taking every row of each
  drawn clip, keeps that dependence. A single clip has nothing to resample between, so its interval comes
  from resampling its rows (say so when reporting it). The interval of a chance-corrected accuracy is the
  transformed accuracy interval (:func:`chance_corrected_interval`): for a fixed ``chance < 1`` the
  transform is increasing, so percentiles map onto percentiles.
- **Paired comparisons** (two settings answering the same questions) use the exact McNemar test on the
  discordant pairs and a cluster bootstrap of the per-question difference.
- NaN in ``values`` is not dropped silently: it propagates into the statistic (the caller decides what an
  unscored reply is). :func:`paired_summary` refuses NaN.
"""

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
    idx = rng.integers(0, len(values), size=(n_boot, len(values)))
    if stat is np.mean:
        return values[idx].mean(axis=1)
    return np.array([stat(values[row]) for row in idx], dtype=float)


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
    groups = pd.Series(np.asarray(clusters, dtype=object).ravel())
    if len(vals) != len(groups):
        raise ValueError(f"values ({len(vals)}) and clusters ({len(groups)}) differ in length")
    if len(vals) == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    codes, uniques = pd.factorize(groups, use_na_sentinel=False)
    k = len(uniques)
    if k == 1:
        return _percentiles(_row_bootstrap(vals, stat, n_boot, rng), alpha)
    draws = rng.integers(0, k, size=(n_boot, k))
    counts = np.bincount((draws + np.arange(n_boot)[:, None] * k).ravel(), minlength=n_boot * k).reshape(n_boot, k)
    if stat is np.mean:
        sums = np.bincount(codes, weights=vals, minlength=k)
        sizes = np.bincount(codes, minlength=k).astype(float)
        boot = (counts @ sums) / (counts @ sizes)
    else:
        boot = np.array([stat(np.repeat(vals, row[codes])) for row in counts], dtype=float)
    return _percentiles(boot, alpha)


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: ``min(1, 2 P(X <= min(b, c)))``, ``X ~ Bin(b + c, 1/2)``.

    ``b + c == 0`` (no discordant pair) → 1.0. The tail is summed in exact integers (one correctly rounded
    division at the end), so it is exact for any size; thousands of discordant pairs take milliseconds.
    """
    b, c = int(only_a), int(only_b)
    if b < 0 or c < 0:
        raise ValueError("discordant counts must be non-negative")
    n = b + c
    if n == 0:
        return 1.0
    term = tail = 1  # C(n, 0); each next term C(n, i + 1) = C(n, i) * (n - i) / (i + 1), exactly
    for i in range(min(b, c)):
        term = term * (n - i) // (i + 1)
        tail += term
    return min(1.0, 2 * tail / 2 ** n)


def _as_bool(values, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=object).ravel()
    if any(v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA for v in arr):
        raise ValueError(f"{name} has missing values; drop unscored pairs first")
    return arr.astype(bool)


def paired_summary(a_correct, b_correct, clusters, *, n_boot: int = 2000, seed: int = 0,
                   alpha: float = 0.05) -> dict:
    """Compare two settings on the same questions (row i of ``a_correct`` and ``b_correct`` is one question).

    Returns ``n_pairs``, ``both``, ``only_a``, ``only_b``, ``neither``, ``accuracy_a``, ``accuracy_b``,
    ``mcnemar_p`` (exact, :func:`mcnemar_exact`), ``diff`` = mean(a) − mean(b) and ``diff_ci_low``/
    ``diff_ci_high`` (cluster bootstrap of the per-question difference a − b, clusters = clip ids).
    No pairs → counts 0, p 1.0, NaN diff and interval. Missing values raise (pair only scored rows).
    """
    a = _as_bool(a_correct, "a_correct")
    b = _as_bool(b_correct, "b_correct")
    if len(a) != len(b):
        raise ValueError(f"a_correct ({len(a)}) and b_correct ({len(b)}) differ in length")
    only_a, only_b = int((a & ~b).sum()), int((~a & b).sum())
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
        "mcnemar_p": mcnemar_exact(only_a, only_b),
        "diff": float(diff_values.mean()) if len(a) else nan,
        "diff_ci_low": low,
        "diff_ci_high": high,
    }
