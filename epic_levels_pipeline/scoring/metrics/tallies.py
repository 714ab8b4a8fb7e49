"""Clip-clustered bootstrap intervals of many groups at once, from a tally (value counts per group and clip)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .stats import _draw_counts, chance_corrected


def _percentiles(boot: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Column-wise percentile interval of ``boot`` (``n_boot × groups``), as ``stats._percentiles`` per column."""
    low, high = np.quantile(boot, [alpha / 2, 1 - alpha / 2], axis=0)
    return low, high


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
    nan = np.full(n_groups, np.nan)
    out = {k: nan.copy() for k in ("accuracy_low", "accuracy_high", "cc_low", "cc_high", "chance")}
    t = tally[tally["count"] > 0]
    if not len(t):
        return out
    t = t.assign(v_sum=t["value"] * t["count"], c_sum=t["chance"] * t["count"])
    per_group = t.groupby("group").agg(size=("count", "sum"), c_sum=("c_sum", "sum"),
                                       n_chances=("chance", lambda s: s.nunique(dropna=False)),
                                       k=("clip_key", "nunique"))
    groups = per_group.index.to_numpy()
    out["chance"][groups] = per_group["c_sum"].to_numpy() / per_group["size"].to_numpy()
    one_chance = dict(zip(groups, per_group["n_chances"].to_numpy() == 1))
    per_clip = t.groupby(["group", "clip_key"], sort=True)[["count", "v_sum", "c_sum"]].sum()

    def finish(gs, boot_acc, boot_chance):
        low, high = _percentiles(boot_acc, alpha)
        out["accuracy_low"][gs], out["accuracy_high"][gs] = low, high
        for j, g in enumerate(gs):
            if one_chance[g]:
                out["cc_low"][g], out["cc_high"][g] = chance_corrected(low[j], out["chance"][g]), \
                    chance_corrected(high[j], out["chance"][g])
        pooled = [j for j, g in enumerate(gs) if not one_chance[g]]
        if pooled:
            cc = np.asarray(chance_corrected(boot_acc[:, pooled], boot_chance[:, pooled]), dtype=float)
            c_low, c_high = _percentiles(cc, alpha)
            bad = np.isnan(cc).any(axis=0)
            idx = gs[pooled]
            out["cc_low"][idx], out["cc_high"][idx] = np.where(bad, np.nan, c_low), np.where(bad, np.nan, c_high)

    k_of = per_group["k"]
    # one clip: its rows, sorted by (value, chance), resampled (stats._row_bootstrap's draws); groups of one size share them
    singles = t[t["group"].isin(k_of.index[k_of == 1])]
    if len(singles):
        sizes = per_group.loc[k_of.index[k_of == 1], "size"]
        for n, gs in sizes.groupby(sizes).groups.items():
            gs = np.asarray(gs)
            idx = np.random.default_rng(seed).integers(0, int(n), size=(n_boot, int(n)))
            acc, chance = np.empty((n_boot, len(gs))), np.empty((n_boot, len(gs)))
            rows = singles[singles["group"].isin(gs)].groupby("group")
            for j, g in enumerate(gs):
                r = rows.get_group(g)
                values = np.repeat(r["value"].to_numpy(dtype=float), r["count"].to_numpy())
                chances = np.repeat(r["chance"].to_numpy(dtype=float), r["count"].to_numpy())
                order = np.lexsort((chances, values))
                acc[:, j] = values[order][idx].mean(axis=1)
                chance[:, j] = chances[order][idx].mean(axis=1)
            finish(gs, acc, chance)
    # several clips: per-clip sums weighted by the draw counts of k clips (stats._draw_counts), one product per k
    multi = k_of[k_of > 1]
    for k, gs in multi.groupby(multi).groups.items():
        gs = np.asarray(gs)
        counts = _draw_counts(int(k), n_boot, np.random.default_rng(seed)).astype(float)
        block = per_clip.loc[gs]
        shape = (len(gs), int(k))  # each group's clips in sorted order (the rows are sorted by group, clip)
        sizes = block["count"].to_numpy(dtype=float).reshape(shape).T
        v_sums = block["v_sum"].to_numpy(dtype=float).reshape(shape).T
        c_sums = block["c_sum"].to_numpy(dtype=float).reshape(shape).T
        drawn = counts @ sizes
        finish(gs, (counts @ v_sums) / drawn, (counts @ c_sums) / drawn)
    return out

