"""The cross-clip tables from the per-clip partial tables (:mod:`.partials` says why they are the same numbers as
the tables of every verdict, :mod:`.tables`)."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd

from .clip_partials import (PAIR_COUNTS, PAIR_KEYS, PRESENCE_KEYS, SCORE_COUNTS, SCORE_KEYS, _empty, _primary)
from .stats import chance_corrected, mcnemar_clustered, mcnemar_exact
from .tables import PAIR_COLUMNS, PRIOR_COLUMNS, PRIOR_KEYS, PRIORS, ROLLUP, SCORE_COLUMNS, shortcut_audit_from_accuracy
from .tallies import tally_intervals


def scores_from_partials(partials: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """:func:`.tables.scores` from ``score_partials``: the same groups, roll-ups, order and columns."""
    if not len(partials):
        return pd.DataFrame(columns=SCORE_COLUMNS)
    p = partials.reset_index(drop=True)
    primary = _primary(p)
    frames = []
    for pooled in itertools.chain.from_iterable(itertools.combinations(ROLLUP, k) for k in range(len(ROLLUP) + 1)):
        f = p.copy()
        for k in SCORE_KEYS:
            if k in pooled or (k == "distractor_strategy" and "subtype" in pooled):
                f[k] = "*"
        if "subtype" in pooled:  # each base question once, in its primary variant
            f = f[primary]
        f = f.groupby(SCORE_KEYS + ["clip_key", "chance"], sort=True, dropna=False)[SCORE_COUNTS].sum().reset_index()
        f["rollup"] = len(frames)
        frames.append(f)
    cells = pd.concat(frames, ignore_index=True)
    cells["group"] = cells.groupby(["rollup"] + SCORE_KEYS, sort=True).ngroup()
    n_groups = int(cells["group"].max()) + 1
    tally = pd.concat([
        cells[["group", "clip_key", "chance"]].assign(value=1.0, count=cells["correct"]),
        cells[["group", "clip_key", "chance"]].assign(value=0.0, count=cells["n"] - cells["correct"])],
        ignore_index=True)
    iv = tally_intervals(tally, n_groups, n_boot=n_boot, seed=seed)
    cells["c_sum"] = cells["chance"] * cells["n"]
    strict_n = cells["n"] + cells["n_undecided"]
    cells["strict_c_sum"] = cells["chance"] * strict_n
    cells["strict_correct"] = cells["correct"] + cells["correct_undecided"]
    cells["strict_n"] = strict_n
    cells["clip_counted"] = np.where(cells["n"] > 0, cells["clip_key"], None)
    g = cells.groupby("group", sort=True)
    out = g[SCORE_KEYS].first()
    sums = g[SCORE_COUNTS + ["c_sum", "strict_c_sum", "strict_correct", "strict_n"]].sum()
    n = sums["n"].to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        acc = np.where(n > 0, sums["correct"] / np.where(n > 0, n, 1), np.nan)
        chance = np.where(n > 0, sums["c_sum"] / np.where(n > 0, n, 1), np.nan)
        sn = sums["strict_n"].to_numpy()
        strict = np.where(sn > 0, sums["strict_correct"] / np.where(sn > 0, sn, 1), np.nan)
        strict_chance = np.where(sn > 0, sums["strict_c_sum"] / np.where(sn > 0, sn, 1), np.nan)
    out["n"] = n
    out["correct"] = sums["correct"].to_numpy()
    out["accuracy"] = acc
    out["chance"] = chance
    out["chance_corrected"] = np.where(n > 0, chance_corrected(acc, chance), np.nan)
    out["ci_low"], out["ci_high"] = iv["cc_low"], iv["cc_high"]
    out["accuracy_ci_low"], out["accuracy_ci_high"] = iv["accuracy_low"], iv["accuracy_high"]
    out["accuracy_strict"] = strict
    out["chance_corrected_strict"] = np.where(sn > 0, chance_corrected(strict, strict_chance), np.nan)
    for kind in ("undecided", "unparsed", "skipped", "error", "judge", "self_judged"):
        out[f"n_{kind}"] = sums[f"n_{kind}"].to_numpy()
    out["n_clips"] = g["clip_counted"].nunique().to_numpy()
    return out.reset_index(drop=True)[SCORE_COLUMNS]


def paired_from_partials(partials: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """:func:`.tables.paired_comparisons` from ``pair_partials``: the same rows, order and columns."""
    if not len(partials):
        return pd.DataFrame(columns=PAIR_COLUMNS)
    p = partials.copy()
    everything = p.assign(level="*")
    cells = pd.concat([everything, p], ignore_index=True)
    cells = cells.groupby(PAIR_KEYS + ["clip_key"], sort=True)[PAIR_COUNTS].sum().reset_index()
    cells = cells[cells["n_pairs"] > 0]
    # tables.paired_comparisons' order: level '*' first, responder, model, format pairs by condition, then conditions
    order = ["level_rank", "level", "responder", "model", "kind_rank", "condition", "a", "b"]
    cells = cells.assign(level_rank=(cells["level"] != "*").astype(int), kind_rank=(cells["kind"] != "format").astype(int))
    cells["group"] = cells.groupby(order, sort=True).ngroup()
    n_groups = int(cells["group"].max()) + 1
    base = cells[["group", "clip_key"]].assign(chance=0.0)
    tally = pd.concat([base.assign(value=1.0, count=cells["only_a"]), base.assign(value=-1.0, count=cells["only_b"]),
                       base.assign(value=0.0, count=cells["both"] + cells["neither"])], ignore_index=True)
    iv = tally_intervals(tally, n_groups, n_boot=n_boot, seed=seed)
    g = cells.groupby("group", sort=True)
    out = g[PAIR_KEYS].first()
    sums = g[PAIR_COUNTS].sum()
    n = sums["n_pairs"].to_numpy()
    for c in ("n_pairs", "both", "only_a", "only_b", "neither"):
        out[c] = sums[c].to_numpy()
    pvalues = [(mcnemar_clustered(x["only_a"].to_numpy(), x["only_b"].to_numpy()),
                mcnemar_exact(int(x["only_a"].sum()), int(x["only_b"].sum()))) for _, x in g]
    out["mcnemar_p"] = [p for p, _ in pvalues]
    out["mcnemar_p_unclustered"] = [p for _, p in pvalues]
    out["diff"] = (sums["only_a"].to_numpy() - sums["only_b"].to_numpy()) / n
    out["diff_ci_low"], out["diff_ci_high"] = iv["accuracy_low"], iv["accuracy_high"]
    out["accuracy_a"] = (sums["both"] + sums["only_a"]).to_numpy() / n
    out["accuracy_b"] = (sums["both"] + sums["only_b"]).to_numpy() / n
    out["chance_corrected_a"] = chance_corrected(out["accuracy_a"].to_numpy(), sums["chance_a_sum"].to_numpy() / n)
    out["chance_corrected_b"] = chance_corrected(out["accuracy_b"].to_numpy(), sums["chance_b_sum"].to_numpy() / n)
    return out.reset_index(drop=True)[PAIR_COLUMNS]


def over_marking_from_partials(partials: pd.DataFrame) -> pd.DataFrame:
    """:func:`.tables.over_marking` from ``score_partials``."""
    columns = ["responder", "model", "condition", "n_wrong", "n_wrong_over_marked", "share"]
    if not len(partials):
        return pd.DataFrame(columns=columns)
    p = partials[_primary(partials)]
    g = p.groupby(["responder", "model", "condition"], sort=True)[["n_rule_wrong_4b", "n_over_marked_4b"]].sum()
    g = g[g["n_rule_wrong_4b"] > 0].reset_index()
    out = pd.DataFrame({"responder": g["responder"], "model": g["model"], "condition": g["condition"],
                        "n_wrong": g["n_rule_wrong_4b"].astype(int), "n_wrong_over_marked": g["n_over_marked_4b"].astype(int)})
    out["share"] = out["n_wrong_over_marked"] / out["n_wrong"]
    return out[columns]


def presence_from_partials(partials: pd.DataFrame) -> pd.DataFrame:
    """:func:`..bank.checks.shortcut_rates` from ``presence_partials``."""
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
