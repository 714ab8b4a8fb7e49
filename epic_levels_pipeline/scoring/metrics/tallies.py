"""Clip-clustered bootstrap intervals of many groups at once, from per-clip sums instead of rows (integer codes,
sorted once; one draw matrix per number of clips), the same intervals :func:`.stats.score_intervals` gives on the
rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .stats import _draw_counts, chance_corrected

_KEY_LIMIT = 2 ** 62  # a combined integer key stays below this (int64)
_BLOCK = 1 << 22  # draw-count products are done for at most this many (clip, group) cells at a time


def codes(values) -> tuple[np.ndarray, pd.Index]:
    """Integer codes of ``values`` (0 … n − 1, in sorted order of the values; a missing value is a value,
    sorted last, as in ``groupby(sort=True, dropna=False)``) and the values they stand for (their dtype kept)."""
    found, uniques = pd.factorize(values, sort=True, use_na_sentinel=False)
    return found.astype(np.int64, copy=False), pd.Index(uniques)


def combined_key(columns, sizes) -> tuple[np.ndarray, int]:
    """One int64 key per row whose order is the lexicographic order of the rows' ``columns`` (integer codes,
    column ``j`` in ``0 … sizes[j] − 1``), and how many values it spans. Ranks replace the key before it
    would overflow (ranks keep the order)."""
    columns = list(columns)
    key, span = np.zeros(len(columns[0]) if columns else 0, dtype=np.int64), 1
    for column, size in zip(columns, sizes):
        size = max(int(size), 1)
        if span * size >= _KEY_LIMIT:
            uniques, key = np.unique(key, return_inverse=True)
            span = max(len(uniques), 1)
        key = key * size + np.asarray(column, dtype=np.int64)
        span *= size
    return key, span


def group_ids(columns, sizes) -> tuple[np.ndarray, np.ndarray, int]:
    """Group number of each row over integer-coded ``columns`` (groups numbered in sorted order of their
    tuples, as ``groupby(sort=True).ngroup()``), a row of each group, and how many groups."""
    key, _ = combined_key(columns, sizes)
    uniques, first, ids = np.unique(key, return_index=True, return_inverse=True)
    return ids.reshape(-1), first, len(uniques)


def distinct_per_group(group: np.ndarray, code: np.ndarray, n_codes: int, n_groups: int) -> np.ndarray:
    """How many distinct ``code`` values each group's rows hold (``nunique`` per group)."""
    _, first = np.unique(combined_key([group, code], [n_groups, n_codes])[0], return_index=True)
    return np.bincount(group[first], minlength=n_groups)


def sorted_runs(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The order sorting ``key`` (stable) and the start of each run of equal keys in that order."""
    order = np.argsort(key, kind="stable")
    ordered = key[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1]))) if len(key) else np.zeros(0, int)
    return order, starts


def _percentiles(boot: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Column-wise percentile interval of ``boot`` (``n_boot × groups``), as ``stats._percentiles`` per column."""
    low, high = np.quantile(boot, [alpha / 2, 1 - alpha / 2], axis=0)
    return low, high


def cluster_intervals(pair_group: np.ndarray, pair_size: np.ndarray, pair_value: np.ndarray, pair_chance: np.ndarray,
                      one_chance: np.ndarray, singles: tuple, n_groups: int, *, n_boot: int = 1000, seed: int = 0,
                      alpha: float = 0.05) -> dict[str, np.ndarray]:
    """:func:`.stats.score_intervals` of every group at once, from per-clip sums.

    ``pair_*``: one entry per group × clip holding counted rows, sorted by group then clip (clips in sorted
    order of their ids): the rows, the sum of their values and of their chances. ``one_chance``: per group,
    whether its rows have one distinct chance. ``singles``: ``(group, value, chance, count)`` arrays, the
    value counts of the groups of one clip (any order). Returns arrays (one entry per group)
    ``accuracy_low``, ``accuracy_high``, ``cc_low``, ``cc_high`` and ``chance`` (the group's mean chance):
    groups of several clips weight their clips' sums by the draw counts of :func:`.stats._draw_counts` (one
    matrix per number of clips, shared by the groups of that number); a group of one clip resamples its
    rows in sorted (value, chance) order (``stats._row_bootstrap``'s draws); one chance transforms the
    accuracy interval, pooled chance recomputes both means per resample; no rows gives NaN.
    """
    out = {k: np.full(n_groups, np.nan) for k in ("accuracy_low", "accuracy_high", "cc_low", "cc_high", "chance")}
    if not len(pair_group):
        return out
    k_of = np.bincount(pair_group, minlength=n_groups)
    size = np.bincount(pair_group, weights=pair_size, minlength=n_groups)
    has = k_of > 0
    out["chance"][has] = np.bincount(pair_group, weights=pair_chance, minlength=n_groups)[has] / size[has]

    def finish(gs, boot_acc, boot_chance):
        low, high = _percentiles(boot_acc, alpha)
        out["accuracy_low"][gs], out["accuracy_high"][gs] = low, high
        one = one_chance[gs]
        chance = out["chance"][gs[one]]
        out["cc_low"][gs[one]] = chance_corrected(low[one], chance)
        out["cc_high"][gs[one]] = chance_corrected(high[one], chance)
        if not one.all():
            cc = np.asarray(chance_corrected(boot_acc[:, ~one], boot_chance[:, ~one]), dtype=float)
            c_low, c_high = _percentiles(cc, alpha)
            bad = np.isnan(cc).any(axis=0)
            idx = gs[~one]
            out["cc_low"][idx], out["cc_high"][idx] = np.where(bad, np.nan, c_low), np.where(bad, np.nan, c_high)

    # one clip: its rows, sorted by (value, chance), resampled (stats._row_bootstrap's draws); groups of one size share them
    s_group, s_value, s_chance, s_count = (np.asarray(a) for a in singles)
    keep = s_count > 0
    s_group, s_value, s_chance, s_count = s_group[keep], s_value[keep], s_chance[keep], s_count[keep]
    if len(s_group):
        order = np.lexsort((s_chance, s_value, s_group))
        s_group, s_value, s_chance, s_count = s_group[order], s_value[order], s_chance[order], s_count[order]
        gs_all, starts = np.unique(s_group, return_index=True)
        ends = np.append(starts[1:], len(s_group))
        n_rows = np.add.reduceat(s_count, starts).astype(np.int64)
        for n in np.unique(n_rows):
            pick = np.flatnonzero(n_rows == n)
            gs = gs_all[pick]
            idx = np.random.default_rng(seed).integers(0, int(n), size=(n_boot, int(n)))
            acc, chance = np.empty((n_boot, len(gs))), np.empty((n_boot, len(gs)))
            for j, i in enumerate(pick):
                run = slice(starts[i], ends[i])
                values = np.repeat(s_value[run].astype(float), s_count[run])
                chances = np.repeat(s_chance[run].astype(float), s_count[run])
                acc[:, j] = values[idx].mean(axis=1)
                chance[:, j] = chances[idx].mean(axis=1)
            finish(gs, acc, chance)
    # several clips: per-clip sums weighted by the draw counts of k clips (stats._draw_counts), one product per k
    # (rows, values and, for pooled chance only, chances side by side); groups in blocks of bounded size
    first = np.concatenate(([0], np.cumsum(k_of)[:-1]))
    for k in np.unique(k_of[k_of > 1]):
        k = int(k)
        counts = _draw_counts(k, n_boot, np.random.default_rng(seed)).astype(float)
        gs_k = np.flatnonzero(k_of == k)
        step = max(1, min(_BLOCK // k, _BLOCK // max(n_boot, 1)))
        for lo in range(0, len(gs_k), step):
            gs = gs_k[lo:lo + step]
            cells = first[gs][:, None] + np.arange(k)  # each group's clips in sorted order
            pooled = ~one_chance[gs]
            product = counts @ np.concatenate([pair_size[cells], pair_value[cells], pair_chance[cells[pooled]]]).T
            m = len(gs)
            drawn = product[:, :m]
            boot_chance = np.full((n_boot, m), np.nan)
            boot_chance[:, pooled] = product[:, 2 * m:] / drawn[:, pooled]
            finish(gs, product[:, m:2 * m] / drawn, boot_chance)
    return out


def tally_intervals(tally: pd.DataFrame, n_groups: int, *, n_boot: int = 1000, seed: int = 0,
                    alpha: float = 0.05) -> dict[str, np.ndarray]:
    """:func:`.stats.score_intervals` of every group at once, from a tally instead of rows.

    ``tally`` has columns ``group`` (0 … ``n_groups`` − 1), ``clip_key``, ``value``, ``chance`` and ``count``:
    ``count`` rows of that value and chance in that clip. Returns arrays (one entry per group)
    ``accuracy_low``, ``accuracy_high``, ``cc_low``, ``cc_high``, ``chance`` (the group's mean chance) —
    the numbers ``score_intervals`` gives on the rows (up to the order chance sums are added in): groups
    with one distinct chance get the accuracy interval transformed; pooled chance recomputes both means per
    resample; one clip resamples its rows in sorted (value, chance) order; no rows gives NaN.
    """
    t = tally[tally["count"] > 0]
    group = t["group"].to_numpy(dtype=np.int64)
    clip, clips = codes(t["clip_key"].astype(str).to_numpy()) if len(t) else (np.zeros(0, np.int64), [])
    value = t["value"].to_numpy(dtype=float)
    chance = t["chance"].to_numpy(dtype=float)
    count = t["count"].to_numpy(dtype=np.int64)
    return tally_rows_intervals(group, clip, len(clips), value, chance, count, n_groups,
                                n_boot=n_boot, seed=seed, alpha=alpha)


def tally_rows_intervals(group, clip, n_clips: int, value, chance, count, n_groups: int, *, n_boot: int = 1000,
                         seed: int = 0, alpha: float = 0.05) -> dict[str, np.ndarray]:
    """:func:`tally_intervals` on arrays: ``clip`` are integer codes (in sorted order of the clip ids, ``n_clips``
    of them); rows with a count of 0 are left out."""
    keep = count > 0
    group, clip, value, chance, count = group[keep], clip[keep], value[keep], chance[keep], count[keep]
    order, starts = sorted_runs(combined_key([group, clip], [n_groups, n_clips])[0])
    c = count[order].astype(float)
    pair_group = group[order][starts]
    pair_size = np.add.reduceat(c, starts) if len(starts) else c
    pair_value = np.add.reduceat(value[order] * c, starts) if len(starts) else c
    pair_chance = np.add.reduceat(chance[order] * c, starts) if len(starts) else c
    chance_code, chances = codes(chance) if len(chance) else (np.zeros(0, np.int64), [])
    one_chance = distinct_per_group(group, chance_code, len(chances), n_groups) == 1
    k_of = np.bincount(pair_group, minlength=n_groups)
    single = k_of[group] == 1
    return cluster_intervals(pair_group, pair_size, pair_value, pair_chance, one_chance,
                             (group[single], value[single], chance[single], count[single]), n_groups,
                             n_boot=n_boot, seed=seed, alpha=alpha)
