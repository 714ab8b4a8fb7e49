"""The groups of ``scores`` (every roll-up, :data:`.tables.ROLLUP`) from ``score_partials``, on integer codes: each
roll-up sums from its parent (one pooled column fewer), never a frame per roll-up (docs/design/scoring.md)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from ...bank.subtypes import is_primary
from .clip_partials import SCORE_COUNTS, SCORE_KEYS
from .tables import ROLLUP
from .tallies import cluster_intervals, codes, combined_key, distinct_per_group, group_ids, sorted_runs

ROLLUPS = list(itertools.chain.from_iterable(itertools.combinations(ROLLUP, k) for k in range(len(ROLLUP) + 1)))
TOTALS = SCORE_COUNTS + ["c_sum", "strict_c_sum"]  # per group: the counts, chance × n and chance × (n + undecided)
SUBTYPE, STRATEGY = SCORE_KEYS.index("subtype"), SCORE_KEYS.index("distractor_strategy")


def _aggregate(rows: tuple, sizes: list[int]) -> tuple:
    """``(group, clip, chance code, n, correct)`` rows summed per (group, clip, chance), sorted by them
    (``sizes``: how many groups, clips and chances)."""
    group, clip, chance, n, correct = rows
    if not len(group):
        return rows
    order, starts = sorted_runs(combined_key([group, clip, chance], sizes)[0])
    return (group[order][starts], clip[order][starts], chance[order][starts], np.add.reduceat(n[order], starts),
            np.add.reduceat(correct[order], starts))


class Rollup:
    """One roll-up's groups: their key codes (``keys``, one row per group; a pooled column holds 0), each
    cell's group (``of_cell``, −1 where the cell is left out; its last entry is −1 so that −1 maps to −1),
    and its counted rows summed per group × clip × chance (``rows``, sorted)."""

    def __init__(self, pooled: tuple, keys: np.ndarray, of_cell: np.ndarray, rows: tuple):
        self.pooled, self.keys, self.of_cell, self.rows = pooled, keys, of_cell, rows

    def child(self, name: str, primary: np.ndarray, sizes: list[int], dims: list[int]) -> "Rollup":
        """This roll-up with ``name`` pooled too; pooling subtype pools its strategy and keeps the primary
        groups only (each base question once, in its subtype's own strategy, as :func:`.tables.scores`)."""
        pooled = [SCORE_KEYS.index(name)] + ([STRATEGY] if name == "subtype" else [])
        keep = primary[self.keys[:, SUBTYPE], self.keys[:, STRATEGY]] if name == "subtype" \
            else np.ones(len(self.keys), dtype=bool)
        keys = self.keys[keep].copy()
        keys[:, pooled] = 0
        ids, first, n_groups = group_ids(keys.T, sizes)
        to_child = np.full(len(self.keys) + 1, -1, dtype=np.int64)
        to_child[np.flatnonzero(keep)] = ids
        group, clip, chance, n, correct = self.rows
        g = to_child[group]
        m = g >= 0
        rows = _aggregate((g[m], clip[m], chance[m], n[m], correct[m]), [n_groups] + dims[1:])
        return Rollup(self.pooled + (name,), keys[first], to_child[self.of_cell], rows)


def score_groups(partials: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0) -> tuple[pd.DataFrame, dict]:
    """Every group of every roll-up, in ``scores`` order: its keys (``'*'`` where pooled), :data:`TOTALS` and
    ``n_clips`` (clips with counted rows) as a frame, and its intervals (:func:`.tallies.cluster_intervals`:
    per-clip sums of the counted rows, value 1 per correct and 0 per wrong one, at the rows' chance)."""
    found = [codes(partials[k]) for k in SCORE_KEYS]
    uniques, sizes = [u for _, u in found], [len(u) for _, u in found]
    clip, clips = codes(partials["clip_key"].astype(str))
    chance = partials["chance"].to_numpy(dtype=float)
    chance_code, chances = codes(chance)
    chances = chances.to_numpy(dtype=float)
    count = {c: partials[c].to_numpy(dtype=np.int64) for c in SCORE_COUNTS}
    cell, first, n_cells = group_ids([c for c, _ in found], sizes)
    cell_keys = np.stack([c[first] for c, _ in found], axis=1)
    del found  # the rows' key codes: each row is its cell now
    totals = {c: np.bincount(cell, weights=count[c], minlength=n_cells) for c in SCORE_COUNTS}
    n, strict_n = count["n"], count["n"] + count["n_undecided"]
    totals["c_sum"] = np.bincount(cell, weights=np.where(n > 0, chance * n, 0.0), minlength=n_cells)
    totals["strict_c_sum"] = np.bincount(cell, weights=np.where(strict_n > 0, chance * strict_n, 0.0), minlength=n_cells)
    primary = np.array([[is_primary(a, b) for b in uniques[STRATEGY]] for a in uniques[SUBTYPE]],
                       dtype=bool).reshape(sizes[SUBTYPE], sizes[STRATEGY])
    live = n > 0
    dims = [n_cells, len(clips), len(chances)]
    made = {(): Rollup((), cell_keys, np.append(np.arange(n_cells), -1),
                       _aggregate((cell[live], clip[live], chance_code[live], n[live], count["correct"][live]), dims))}
    del cell, clip, chance_code, live, count
    children = {pooled: sum(r[:-1] == pooled for r in ROLLUPS if r) for pooled in ROLLUPS}
    frames, pairs, one_chance, singles, offset = [], [], [], [], 0
    for pooled in ROLLUPS:
        if pooled:
            parent = pooled[:-1]
            made[pooled] = made[parent].child(pooled[-1], primary, sizes, dims)
            children[parent] -= 1
            if not children[parent]:
                del made[parent]  # its rows are summed into every child: free them
        r = made[pooled]
        n_groups = len(r.keys)
        valid = r.of_cell[:-1] >= 0
        frame = {k: (pd.Index(["*"]).repeat(n_groups) if k in pooled or (j == STRATEGY and "subtype" in pooled)
                     else uniques[j].take(r.keys[:, j])) for j, k in enumerate(SCORE_KEYS)}
        frame.update({c: np.bincount(r.of_cell[:-1][valid], weights=totals[c][valid], minlength=n_groups) for c in TOTALS})
        group, clip_of, chance_of, n_of, correct_of = r.rows
        starts = np.flatnonzero(np.concatenate(([True], (group[1:] != group[:-1]) | (clip_of[1:] != clip_of[:-1]))))
        starts = starts[starts < len(group)]
        if len(starts):  # per group × clip: rows, correct ones (int32: the cells of every group are many), chance sum
            pairs.append(((group[starts] + offset).astype(np.int32), np.add.reduceat(n_of, starts).astype(np.int32),
                          np.add.reduceat(correct_of, starts).astype(np.int32),
                          np.add.reduceat(chances[chance_of] * n_of, starts)))
        one_chance.append(distinct_per_group(group, chance_of, len(chances), n_groups) == 1)
        frame["n_clips"] = k_of = np.bincount(group[starts], minlength=n_groups)
        one = k_of[group] == 1  # the rows of groups of one clip: their value counts
        ch = chances[chance_of[one]]
        singles.append((np.concatenate([group[one], group[one]]) + offset, np.repeat([1.0, 0.0], one.sum()),
                        np.concatenate([ch, ch]), np.concatenate([correct_of[one], n_of[one] - correct_of[one]])))
        frames.append(pd.DataFrame(frame))
        offset += n_groups
    pairs = [np.concatenate(a) for a in zip(*pairs)] if pairs else [np.zeros(0, dtype=np.int32)] * 3 + [np.zeros(0)]
    intervals = cluster_intervals(*pairs, np.concatenate(one_chance), [np.concatenate(a) for a in zip(*singles)],
                                  offset, n_boot=n_boot, seed=seed)
    return pd.concat(frames, ignore_index=True), intervals
