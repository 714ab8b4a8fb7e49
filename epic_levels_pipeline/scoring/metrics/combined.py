"""The cross-clip tables from the per-clip partial tables (:mod:`.partials` says why they are the same numbers as
the tables of every verdict, :mod:`.tables`)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from .clip_partials import PAIR_COUNTS, PAIR_KEYS, PRESENCE_KEYS, SCORE_COUNTS, _empty, _primary
from .rollups import score_groups
from .stats import chance_corrected, mcnemar_clustered, mcnemar_exact
from .tables import PAIR_COLUMNS, PAIR_KINDS, PRIOR_COLUMNS, PRIOR_KEYS, PRIORS, SCORE_COLUMNS, shortcut_audit_from_accuracy
from .tallies import cluster_intervals, codes, combined_key, group_ids, sorted_runs, tally_intervals


def scores_from_partials(partials: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """:func:`.tables.scores` from ``score_partials``: the same groups, roll-ups, order and columns.

    The groups, their totals and intervals: :func:`.rollups.score_groups` (integer codes, each roll-up summed
    from its parent's)."""
    if not len(partials):
        return pd.DataFrame(columns=SCORE_COLUMNS)
    out, iv = score_groups(partials, n_boot=n_boot, seed=seed)
    for c in SCORE_COUNTS + ["n_clips"]:
        out[c] = out[c].to_numpy().astype(np.int64)
    n, correct = out["n"].to_numpy(), out["correct"].to_numpy()
    sn = n + out["n_undecided"].to_numpy()
    strict_correct = correct + out["correct_undecided"].to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        acc = np.where(n > 0, correct / np.where(n > 0, n, 1), np.nan)
        chance = np.where(n > 0, out["c_sum"].to_numpy() / np.where(n > 0, n, 1), np.nan)
        strict = np.where(sn > 0, strict_correct / np.where(sn > 0, sn, 1), np.nan)
        strict_chance = np.where(sn > 0, out["strict_c_sum"].to_numpy() / np.where(sn > 0, sn, 1), np.nan)
    out["accuracy"] = acc
    out["chance"] = chance
    out["chance_corrected"] = np.where(n > 0, chance_corrected(acc, chance), np.nan)
    out["ci_low"], out["ci_high"] = iv["cc_low"], iv["cc_high"]
    out["accuracy_ci_low"], out["accuracy_ci_high"] = iv["accuracy_low"], iv["accuracy_high"]
    out["accuracy_strict"] = strict
    out["chance_corrected_strict"] = np.where(sn > 0, chance_corrected(strict, strict_chance), np.nan)
    return out[SCORE_COLUMNS]


def paired_from_partials(partials: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """:func:`.tables.paired_comparisons` from ``pair_partials``: the same rows, order and columns.

    Its order: level ``'*'`` first, then each level; responder, model (model pairs, ``'*'``, first); format
    pairs by condition, then the conditions, then model pairs by condition, sides and format (``'*'`` first).
    Key columns are factorized once; each partial row is counted in its own group, its level's ``'*'`` and,
    for a row of one format (model pairs), the format's ``'*'``; the groups' per-clip sums come from one sort.
    Partials written before the ``format`` column existed count as format ``'*'``."""
    if not len(partials):
        return pd.DataFrame(columns=PAIR_COLUMNS)
    fmt = (partials["format"].astype(object).where(partials["format"].notna(), "*") if "format" in partials
           else pd.Series("*", index=partials.index, dtype=object)).astype(str).to_numpy()
    found = {k: codes(partials[k]) for k in PAIR_KEYS if k != "format"}
    fmt_code, formats = codes(np.append(fmt, "*"))
    star, fmt_code = fmt_code[-1], fmt_code[:-1]
    clip, clips = codes(partials["clip_key"].astype(str))
    n_rows = len(partials)
    kind_rank = np.array([PAIR_KINDS.index(k) if k in PAIR_KINDS else len(PAIR_KINDS) for k in found["kind"][1]],
                         dtype=np.int64)[found["kind"][0]]
    # every row in its level and in level '*'; a row of one format also in format '*' (both levels)
    each, split = np.arange(n_rows), np.flatnonzero(fmt_code != star)
    src = np.concatenate([each, each, split, split])
    all_levels = np.repeat(np.array([True, False, True, False]), [n_rows, n_rows, len(split), len(split)])
    all_formats = np.repeat(np.array([False, False, True, True]), [n_rows, n_rows, len(split), len(split)])
    level = np.where(all_levels, 0, found["level"][0][src] + 1)
    fmt_of = np.where(all_formats, star, fmt_code[src])
    order = [level, found["responder"][0][src], found["model"][0][src], kind_rank[src], found["condition"][0][src],
             found["a"][0][src], found["b"][0][src], fmt_of]
    sizes = [len(found["level"][1]) + 1] + [len(found[k][1]) for k in ("responder", "model")] + [len(PAIR_KINDS) + 1] + \
        [len(found[k][1]) for k in ("condition", "a", "b")] + [len(formats)]
    gid, _, n_candidates = group_ids(order, sizes)
    rows, starts = sorted_runs(combined_key([gid, clip[src]], [n_candidates, len(clips)])[0])
    sums = {c: np.add.reduceat(partials[c].to_numpy(dtype=np.int64 if c in PAIR_COUNTS[:5] else float)[src][rows],
                               starts) for c in PAIR_COUNTS}
    keep = sums["n_pairs"] > 0
    sums = {c: v[keep] for c, v in sums.items()}
    first = rows[starts][keep]  # an expanded row of each group x clip
    kept, group = np.unique(gid[first], return_inverse=True)
    group, n_groups = group.reshape(-1), len(kept)
    bounds = np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1])))
    head = first[bounds]
    out = pd.DataFrame({k: found[k][1].take(found[k][0][src[head]]) for k in PAIR_KEYS if k != "format"})
    out.loc[all_levels[head], "level"] = "*"
    out["format"] = formats.take(fmt_of[head])
    totals = {c: np.add.reduceat(v, bounds) for c, v in sums.items()}
    for c in PAIR_COUNTS[:5]:
        out[c] = totals[c]
    only_a, only_b = np.split(sums["only_a"], bounds[1:]), np.split(sums["only_b"], bounds[1:])
    out["mcnemar_p"] = [mcnemar_clustered(a, b) for a, b in zip(only_a, only_b)]
    out["mcnemar_p_unclustered"] = [mcnemar_exact(int(a.sum()), int(b.sum())) for a, b in zip(only_a, only_b)]
    k_of = np.bincount(group, minlength=n_groups)
    one = k_of[group] == 1
    g1 = group[one]
    singles = (np.concatenate([g1, g1, g1]), np.repeat([1.0, -1.0, 0.0], len(g1)), np.zeros(3 * len(g1)),
               np.concatenate([sums["only_a"][one], sums["only_b"][one], sums["both"][one] + sums["neither"][one]]))
    iv = cluster_intervals(group, sums["n_pairs"].astype(float), (sums["only_a"] - sums["only_b"]).astype(float),
                           np.zeros(len(group)), np.ones(n_groups, dtype=bool), singles, n_groups, n_boot=n_boot, seed=seed)
    n = totals["n_pairs"]
    out["diff"] = (totals["only_a"] - totals["only_b"]) / n
    out["diff_ci_low"], out["diff_ci_high"] = iv["accuracy_low"], iv["accuracy_high"]
    out["accuracy_a"] = (totals["both"] + totals["only_a"]) / n
    out["accuracy_b"] = (totals["both"] + totals["only_b"]) / n
    out["chance_corrected_a"] = chance_corrected(out["accuracy_a"].to_numpy(), totals["chance_a_sum"] / n)
    out["chance_corrected_b"] = chance_corrected(out["accuracy_b"].to_numpy(), totals["chance_b_sum"] / n)
    return out[PAIR_COLUMNS]


def over_marking_from_partials(partials: pd.DataFrame) -> pd.DataFrame:
    """:func:`.tables.over_marking` from ``score_partials``."""
    columns = ["responder", "model", "condition", "n_wrong", "n_wrong_over_marked", "share"]
    if not len(partials):
        return pd.DataFrame(columns=columns)
    p = partials[partials["n_rule_wrong_4b"].to_numpy() > 0]  # the other rows add nothing (over-marked ones are wrong)
    p = p[_primary(p)]
    g = p.groupby(["responder", "model", "condition"], sort=True)[["n_rule_wrong_4b", "n_over_marked_4b"]].sum()
    g = g[g["n_rule_wrong_4b"] > 0].reset_index()
    out = pd.DataFrame({"responder": g["responder"], "model": g["model"], "condition": g["condition"],
                        "n_wrong": g["n_rule_wrong_4b"].astype(int), "n_wrong_over_marked": g["n_over_marked_4b"].astype(int)})
    out["share"] = out["n_wrong_over_marked"] / out["n_wrong"]
    return out[columns]


def presence_from_partials(partials: pd.DataFrame) -> pd.DataFrame:
    """:func:`...bank.checks.shortcut_rates` from ``presence_partials``."""
    from ...bank.checks import N_OPTIONS, shortcut_rates

    if not len(partials):
        return shortcut_rates(pd.DataFrame())
    g = partials.groupby(PRESENCE_KEYS, sort=True)[["n", "correct", "absent_give_away", "expected"]].sum().reset_index()
    out = g[PRESENCE_KEYS].copy()
    out["n"] = g["n"].astype(int)
    out["singles_out_key"] = g["correct"] / g["n"]
    out["only_absent_give_away"] = g["absent_give_away"] / g["n"]
    out["presence_oracle_rate"] = g["expected"] / g["n"]
    out["chance"] = 1 / N_OPTIONS
    return out


def priors_from_partials(partials: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """:func:`.tables.prior_audit` from ``prior_partials`` (clusters: clips)."""
    if not len(partials):
        return pd.DataFrame(columns=PRIOR_COLUMNS)
    keys = PRIOR_KEYS + ["format"]
    p = partials.copy()
    prior_rank = {name: i for i, name in enumerate(PRIORS)}
    p["prior_rank"] = p["prior"].map(prior_rank)
    p["group"] = p.groupby(keys + ["prior_rank"], sort=True).ngroup()
    n_groups = int(p["group"].max()) + 1
    tally = p[["group", "clip_key", "chance"]].assign(value=p["credit"].astype(float), count=p["n"])
    iv = tally_intervals(tally, n_groups, n_boot=n_boot, seed=seed)
    p["v_sum"] = p["credit"] * p["n"]
    g = p.groupby("group", sort=True)
    out = g[keys + ["prior"]].first()
    n = g["n"].sum().to_numpy()
    out["n"] = n
    out["n_clips"] = g["clip_key"].nunique().to_numpy()
    out["rate"] = g["v_sum"].sum().to_numpy() / n
    out["chance"] = iv["chance"]
    out["ci_low"], out["ci_high"] = iv["accuracy_low"], iv["accuracy_high"]
    out["chance_corrected"] = chance_corrected(out["rate"].to_numpy(), out["chance"].to_numpy())
    out["excludes_chance"] = (out["ci_low"] > out["chance"]) | (out["ci_high"] < out["chance"])
    return out.reset_index(drop=True)[PRIOR_COLUMNS]


def mc_accuracy_from_partials(partials: pd.DataFrame) -> pd.DataFrame:
    """Multiple-choice accuracy per subtype × strategy × responder/model, one column per condition (what
    :func:`.tables.shortcut_audit` computes from the verdicts)."""
    keys = PRESENCE_KEYS + ["responder", "model", "condition"]
    mc = partials[(partials["format"] == "multiple_choice") & (partials["n"] > 0)] if len(partials) else partials
    if not len(mc):
        return pd.DataFrame(columns=keys[:-1])
    g = mc.groupby(keys, sort=True)[["n", "correct"]].sum()
    return (g["correct"] / g["n"]).unstack("condition").reset_index()


def shortcut_audit_from_partials(presence: pd.DataFrame, scores: pd.DataFrame, priors: pd.DataFrame) -> pd.DataFrame:
    """:func:`.tables.shortcut_audit` from ``presence_partials``, ``score_partials`` and the combined priors."""
    return shortcut_audit_from_accuracy(presence_from_partials(presence), mc_accuracy_from_partials(scores), priors)


def judge_sample_from_partials(partials: pd.DataFrame, sample_size: int = 50) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The judge audit's sample (verdict-like rows) and the items it needs, from ``judge_partials``."""
    if not len(partials):
        return _empty("judge_partials"), pd.DataFrame(columns=["item_id", "options", "prompt"])
    rows = partials.sort_values(["responder", "model", "sample_key"], kind="stable")
    rows = rows.groupby(["responder", "model"], sort=True).head(sample_size).reset_index(drop=True)
    items = rows.drop_duplicates("item_id")[["item_id", "options", "prompt"]].copy()
    items["options"] = [json.loads(o) for o in items["options"]]
    return rows, items.reset_index(drop=True)
