"""Per-clip partial results, and the cross-clip tables combined from them.

A clip's verdicts (and its questions and items) are reduced, with the clip, to the counts and sums every
cross-clip table needs; the cross-clip tables are then computed from those partials alone, so a changed
clip costs its own partials plus a combine that reads small tables instead of every verdict.

The partial tables (their columns: :data:`PARTIAL_COLUMNS`, one place):

- ``score_partials`` — per responder × model × dataset × level × subtype × distractor strategy × format ×
  condition × item chance: ``n`` counted verdicts (rule, judge, unparsed), ``correct`` among them,
  ``n_undecided`` / ``correct_undecided`` (for the strict accuracy), the other ``scored_by`` counts, and the
  4b over-marking counts (rule-decided wrong option-judgement answers and how many of them marked more than
  one option true). Feeds ``scores``, ``over_marking`` and the responder gaps of ``shortcut_audit``.
- ``pair_partials`` — per responder × model × level × pair (``kind``, ``condition``, ``a``, ``b``): the
  paired counts (``both``, ``only_a``, ``only_b``, ``neither``) and the sums of each side's chance. A pair is
  two verdicts of one base question (or one item), so it never spans clips: the clip's counts are exact.
- ``prior_partials`` — per subtype × strategy × format × prior × item chance × expected prior credit: how many
  items. Feeds the text-only prior rows of ``shortcut_audit``.
- ``presence_partials`` — per subtype × strategy: questions and the sums behind the presence-oracle rates.
- ``judge_partials`` — the clip's candidates for the judge audit's sample: per responder/model its
  ``sample_size`` eligible replies of smallest sample key (:func:`..judge_audit.sample_key`), with what the
  audit asks the judge. The audit's sample is the smallest keys over all clips, so it is the smallest keys
  among the clips' candidates.

Why the combined tables give the same numbers as the tables computed from all verdicts
(:mod:`.tables`): counts add; a clip-clustered bootstrap interval is a function of each clip's sums and
sizes (clusters numbered in sorted order, :mod:`.stats`), and of a single clip's value counts (its rows
resampled in sorted order); the clustered McNemar test is a function of the per-clip discordant counts.
Counts, accuracies, accuracy intervals, differences and p-values are therefore identical; a chance (a mean
of non-integer item chances, e.g. 1/15) is summed in another order, so chance, chance-corrected values and
their intervals agree to rounding (1e-12 in the tests), not bit for bit.

The draws of a clip-clustered bootstrap depend only on the number of clips, so groups of the same size
share one draw matrix here (one matrix product for all of them) instead of drawing per group.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd

from ...bank.subtypes import is_primary
from .stats import _draw_counts, chance_corrected, mcnemar_clustered, mcnemar_exact
from .tables import (COUNTED, PAIR_COLUMNS, PRIOR_COLUMNS, PRIOR_FORMATS, PRIOR_KEYS, PRIORS, ROLLUP,
                     SCORE_COLUMNS, _counted, prior_credit, shortcut_audit_from_accuracy)

SCORE_KEYS = ["responder", "model", "dataset", "level", "subtype", "distractor_strategy", "format", "condition"]
SCORE_COUNTS = ["n", "correct", "n_undecided", "correct_undecided", "n_unparsed", "n_skipped", "n_error", "n_judge",
                "n_rule_wrong_4b", "n_over_marked_4b", "n_self_judged"]
PAIR_KEYS = ["responder", "model", "level", "kind", "condition", "a", "b"]
PAIR_COUNTS = ["n_pairs", "both", "only_a", "only_b", "neither", "chance_a_sum", "chance_b_sum"]
PRESENCE_KEYS = ["dataset", "subtype", "level", "distractor_strategy"]
JUDGE_SAMPLE_COLUMNS = ["responder", "model", "item_id", "condition", "format", "base_format", "scored_by", "reply",
                        "parsed", "options", "prompt", "sample_key"]

PARTIAL_COLUMNS = {  # the per-clip partial tables: name -> columns (every row also carries its clip_key)
    "score_partials": SCORE_KEYS + ["clip_key", "chance"] + SCORE_COUNTS,
    "pair_partials": PAIR_KEYS + ["clip_key"] + PAIR_COUNTS,
    "prior_partials": PRIOR_KEYS + ["format", "prior", "clip_key", "chance", "credit", "n"],
    "presence_partials": PRESENCE_KEYS + ["clip_key", "n", "correct", "absent_give_away", "expected"],
    "judge_partials": JUDGE_SAMPLE_COLUMNS + ["clip_key"],
}


def _empty(name: str) -> pd.DataFrame:
    return pd.DataFrame(columns=PARTIAL_COLUMNS[name])


def _primary(frame: pd.DataFrame) -> np.ndarray:
    return np.array([is_primary(s, d) for s, d in zip(frame["subtype"], frame["distractor_strategy"])], dtype=bool)


# -- per clip ----------------------------------------------------------------------------------------------

def score_partials(verdicts: pd.DataFrame) -> pd.DataFrame:
    """One clip's (or any set of clips') verdicts reduced to ``score_partials`` rows (one per clip × cell)."""
    if not len(verdicts):
        return _empty("score_partials")
    v = pd.DataFrame({k: verdicts[k].astype(str).to_numpy() for k in SCORE_KEYS + ["clip_key"]})
    v["chance"] = verdicts["chance"].astype(float).to_numpy()
    kind = verdicts["scored_by"].astype(str).to_numpy()
    ok = verdicts["correct"].fillna(False).astype(bool).to_numpy()
    counted = np.isin(kind, COUNTED)
    undecided = kind == "undecided"
    wrong_4b = (verdicts["base_format"].astype(str).to_numpy() == "option_judgement") & (kind == "rule") & ~ok
    marked = pd.to_numeric(verdicts["n_marked_true"], errors="coerce").fillna(0).to_numpy() > 1
    v["n"], v["correct"] = counted, counted & ok
    v["n_undecided"], v["correct_undecided"] = undecided, undecided & ok
    for name in ("unparsed", "skipped", "error", "judge"):
        v[f"n_{name}"] = kind == name
    v["n_rule_wrong_4b"], v["n_over_marked_4b"] = wrong_4b, wrong_4b & marked
    v["n_self_judged"] = (verdicts["self_judged"].fillna(False).astype(bool).to_numpy() if "self_judged" in verdicts
                          else np.zeros(len(v), dtype=bool))  # judged by the model itself (asked for; marked)
    out = v.groupby(SCORE_KEYS + ["clip_key", "chance"], sort=True, dropna=False)[SCORE_COUNTS].sum().reset_index()
    return out.astype({c: "int64" for c in SCORE_COUNTS})[PARTIAL_COLUMNS["score_partials"]]


def _pair_sums(merged: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    a, b = merged["ok_a"].to_numpy(dtype=bool), merged["ok_b"].to_numpy(dtype=bool)
    frame = merged[keys + ["clip_key"]].assign(
        n_pairs=1, both=a & b, only_a=a & ~b, only_b=~a & b, neither=~a & ~b,
        chance_a_sum=merged["chance_a"].astype(float).to_numpy(), chance_b_sum=merged["chance_b"].astype(float).to_numpy())
    return frame.groupby(keys + ["clip_key"], sort=True)[PAIR_COUNTS].sum().reset_index()


def pair_partials(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The pairs :func:`.tables.paired_comparisons` makes (formats of one base question within a condition;
    clip vs no_clip / silenced on one item), counted per level and clip. Level ``'*'`` is their sum."""
    c = _counted(verdicts[_primary(verdicts)]) if len(verdicts) else _counted(verdicts)
    if not len(c):
        return _empty("pair_partials")
    c = pd.DataFrame({k: c[k].astype(str).to_numpy() for k in ("level", "responder", "model", "condition", "format",
                                                               "question_id", "item_id", "clip_key")}
                     ).assign(ok=c["ok"].to_numpy(dtype=bool), chance=c["chance"].astype(float).to_numpy())
    who = ["level", "responder", "model"]
    parts = []
    # formats of one base question, within a condition (every pair of formats, in sorted order)
    fm = c.merge(c, on=who + ["condition", "question_id"], suffixes=("_a", "_b"))
    fm = fm[fm["format_a"] < fm["format_b"]]
    if len(fm):
        fm = fm.rename(columns={"format_a": "a", "format_b": "b", "clip_key_a": "clip_key"}).assign(kind="format")
        parts.append(_pair_sums(fm, PAIR_KEYS))
    # clip against no_clip and against silenced, on one item
    clip = c[c["condition"] == "clip"]
    for other in ("no_clip", "silenced"):
        cm = clip.merge(c[c["condition"] == other], on=who + ["item_id"], suffixes=("_a", "_b"))
        if len(cm):
            cm = cm.rename(columns={"clip_key_a": "clip_key"}).assign(kind="condition", condition="*", a="clip", b=other)
            parts.append(_pair_sums(cm, PAIR_KEYS))
    if not parts:
        return _empty("pair_partials")
    out = pd.concat(parts, ignore_index=True)
    return out.astype({c: "int64" for c in PAIR_COUNTS[:5]})[PARTIAL_COLUMNS["pair_partials"]]


def prior_partials(questions: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """The text-only priors' expected credit (:func:`.tables.prior_credit`) per item, counted by subtype ×
    strategy × format × prior × clip × chance × credit."""
    if not len(questions) or not len(items) or "option_frequency" not in questions.columns:
        return _empty("prior_partials")
    by_id = {q.question_id: q for q in questions.itertuples(index=False)}
    its = items[items["format"].isin(list(PRIOR_FORMATS)) & items["question_id"].isin(list(by_id))]
    rows = []
    for i in its.itertuples(index=False):
        for prior, least in PRIORS.items():
            rows.append((*(getattr(i, k) for k in PRIOR_KEYS), i.format, prior, str(i.clip_key), float(i.chance),
                         prior_credit(i, by_id[i.question_id], least)))
    if not rows:
        return _empty("prior_partials")
    columns = PARTIAL_COLUMNS["prior_partials"]
    frame = pd.DataFrame(rows, columns=columns[:-1])
    return frame.groupby(columns[:-1], sort=True).size().rename("n").reset_index()[columns]


def presence_partials(questions: pd.DataFrame) -> pd.DataFrame:
    """The sums behind :func:`..bank.checks.shortcut_rates` (presence oracle), per clip × subtype × strategy."""
    if not len(questions):
        return _empty("presence_partials")
    from ...bank.checks import N_OPTIONS

    # the per-question columns bank.checks.shortcut_rates averages (equality with it is tested)
    picked = questions["presence_pick"].to_numpy() >= 0
    correct = questions["presence_correct"].astype(bool).to_numpy()
    q = questions[PRESENCE_KEYS].copy()
    q["correct"] = correct
    q["absent_give_away"] = correct & (questions["presence_rule"].to_numpy() == "only absent option")
    q["expected"] = correct.astype(float) + (~picked).astype(float) / N_OPTIONS
    q["clip_key"] = questions["clip_key"].astype(str).to_numpy()
    out = q.groupby(PRESENCE_KEYS + ["clip_key"], sort=True).agg(
        n=("correct", "size"), correct=("correct", "sum"), absent_give_away=("absent_give_away", "sum"),
        expected=("expected", "sum")).reset_index()
    return out.astype({"n": "int64", "correct": "int64", "absent_give_away": "int64"})[PARTIAL_COLUMNS["presence_partials"]]


def judge_partials(verdicts: pd.DataFrame, items: pd.DataFrame, *, sample_size: int = 50, seed: int = 0) -> pd.DataFrame:
    """The clip's candidates for the judge audit's sample (:func:`..judge_audit.sample_rows`: per
    responder/model the ``sample_size`` eligible rows of smallest sample key), with the item's options (JSON)
    and prompt, so the audit needs neither the verdicts nor the items of every clip."""
    from ..judge_audit import sample_rows

    rows = sample_rows(verdicts, sample_size, seed)
    if not len(rows) or not len(items):
        return _empty("judge_partials")
    by_item = items.drop_duplicates("item_id").set_index("item_id")
    rows = rows[rows["item_id"].isin(by_item.index)]
    out = rows[[c for c in JUDGE_SAMPLE_COLUMNS if c not in ("options", "prompt")] + ["clip_key"]].copy()
    out["options"] = [json.dumps([str(o) for o in by_item.at[i, "options"]]) for i in rows["item_id"]]
    out["prompt"] = [str(by_item.at[i, "prompt"]) for i in rows["item_id"]]
    return out.reset_index(drop=True)[PARTIAL_COLUMNS["judge_partials"]]


# -- the clip-clustered intervals from tallies -------------------------------------------------------------

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


# -- the cross-clip tables ---------------------------------------------------------------------------------

def _concat(frames) -> pd.DataFrame:
    frames = [f for f in frames if f is not None and len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def combine(name: str, *parts: pd.DataFrame) -> pd.DataFrame:
    """Partials of several clips (or of several combines) as one partial table: the same rows summed."""
    frame = _concat(parts)
    if not len(frame):
        return _empty(name)
    columns = PARTIAL_COLUMNS[name]
    if name == "judge_partials":
        return frame[columns].reset_index(drop=True)
    counts = {"score_partials": SCORE_COUNTS, "pair_partials": PAIR_COUNTS, "prior_partials": ["n"],
              "presence_partials": ["n", "correct", "absent_give_away", "expected"]}[name]
    keys = [c for c in columns if c not in counts]
    return frame.groupby(keys, sort=True, dropna=False)[counts].sum().reset_index()[columns]


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
