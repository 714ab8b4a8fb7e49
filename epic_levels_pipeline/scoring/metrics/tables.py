"""Scored tables from verdicts: scores (with ``'*'`` roll-ups and the strict accuracy), paired comparisons (formats,
conditions and models), 4b over-marking, shortcut audit. ``rule``, ``judge`` and ``unparsed`` verdicts count; the
rest are counted apart (docs/design/scoring.md)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from .stats import chance_corrected, paired_summary, score_intervals
from ...bank.options import prior_pick
from ...bank.subtypes import is_primary
from ...responses.offline import OFFLINE_MODEL
from ...schemas.fields import EXTERNAL

COUNTED = ("rule", "judge", "unparsed")
ROLLUP = ("dataset", "level", "subtype", "format")
SCORE_COLUMNS = ["responder", "model", "dataset", "level", "subtype", "distractor_strategy", "format", "condition",
                 "n", "correct", "accuracy", "chance", "chance_corrected", "ci_low", "ci_high", "accuracy_ci_low",
                 "accuracy_ci_high", "accuracy_strict", "chance_corrected_strict", "n_undecided", "n_unparsed", "n_skipped", "n_error", "n_judge", "n_clips",
                 "n_self_judged", "n_judge_failed"]
PAIR_COLUMNS = ["responder", "model", "level", "kind", "condition", "a", "b", "n_pairs", "both", "only_a", "only_b",
                "neither", "mcnemar_p", "diff", "diff_ci_low", "diff_ci_high", "accuracy_a", "accuracy_b",
                "chance_corrected_a", "chance_corrected_b", "mcnemar_p_unclustered", "format"]
MODEL_PAIR = "*"  # the responder and model of a model pair's row (its sides are named in a and b)
PAIR_KINDS = ("format", "condition", "model")  # the kinds of paired comparison, in the table's order


def model_labels(responder, model) -> np.ndarray:
    """Each row's model as a side of a model pair: its configured NAME (``model``); replies imported as
    ``external`` are ``external/NAME``, so an import named like a configured model stays apart from it (an
    import's NAME has no ``/``, and no provider is called ``external``). ``None`` for the offline reference
    responders (model ``offline``), which are compared with no model."""
    model = pd.Series(model).astype(str).to_numpy(dtype=object)
    labels = model.copy()
    imported = pd.Series(responder).astype(str).to_numpy() == EXTERNAL
    labels[imported] = f"{EXTERNAL}/" + model[imported]
    labels[model == OFFLINE_MODEL] = None
    return labels


def primary_mask(v: pd.DataFrame) -> np.ndarray:
    """Rows in their subtype's own distractor strategy (see :func:`...bank.subtypes.registry.is_primary`)."""
    return np.array([is_primary(s, d) for s, d in zip(v["subtype"], v["distractor_strategy"])], dtype=bool)


def _counted(v: pd.DataFrame) -> pd.DataFrame:
    c = v[v["scored_by"].isin(COUNTED)].copy()
    c["ok"] = c["correct"].fillna(False).astype(bool)
    return c


def scores(verdicts: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Every grouping and roll-up at once; groups are index arrays into column arrays (one pass per roll-up,
    numpy inside a group), so thousands of groups stay cheap."""
    if not len(verdicts):
        return pd.DataFrame(columns=SCORE_COLUMNS)
    v = verdicts.reset_index(drop=True)
    ok = v["correct"].fillna(False).astype(bool).to_numpy()
    scored_by = v["scored_by"].astype(str).to_numpy()
    counted = np.isin(scored_by, COUNTED)
    undecided = scored_by == "undecided"
    own = (v["self_judged"].fillna(False).astype(bool).to_numpy() if "self_judged" in v
           else np.zeros(len(v), dtype=bool))  # judged by the model itself (asked for; marked)
    chance_col = v["chance"].astype(float).to_numpy()
    clips = v["clip_key"].astype(str).to_numpy()
    keys = ["responder", "model", "dataset", "level", "subtype", "distractor_strategy", "format", "condition"]
    base = {k: v[k].astype(str).to_numpy() for k in keys}
    primary = primary_mask(v)
    rows = []
    for pooled in itertools.chain.from_iterable(itertools.combinations(ROLLUP, k) for k in range(len(ROLLUP) + 1)):
        columns = {k: (np.full(len(v), "*", dtype=object) if k in pooled or (k == "distractor_strategy" and "subtype" in pooled)
                       else base[k]) for k in keys}
        frame = pd.DataFrame(columns)
        if "subtype" in pooled:  # each base question once, in its primary variant
            frame = frame[primary]
        labels = frame.index.to_numpy()
        for group, positions in frame.groupby(keys, sort=True).indices.items():
            index = labels[positions]  # row numbers of ``v`` (the frame may be a filtered view)
            c = index[counted[index]]
            d = index[counted[index] | undecided[index]]
            n = len(c)
            row = dict(zip(keys, group))
            acc = ok[c].mean() if n else np.nan
            ch = chance_col[c].mean() if n else np.nan
            (low, high), (cc_low, cc_high) = score_intervals(ok[c], chance_col[c], clips[c], n_boot=n_boot, seed=seed)
            strict = ok[d].mean() if len(d) else np.nan
            strict_chance = chance_col[d].mean() if len(d) else np.nan
            kinds = scored_by[index]
            row.update({"n": n, "correct": int(ok[c].sum()), "accuracy": acc, "chance": ch,
                        "chance_corrected": chance_corrected(acc, ch) if n else np.nan,
                        "ci_low": cc_low, "ci_high": cc_high, "accuracy_ci_low": low, "accuracy_ci_high": high,
                        "accuracy_strict": strict,
                        "chance_corrected_strict": chance_corrected(strict, strict_chance) if len(d) else np.nan,
                        "n_undecided": int((kinds == "undecided").sum()), "n_unparsed": int((kinds == "unparsed").sum()),
                        "n_skipped": int((kinds == "skipped").sum()), "n_error": int((kinds == "error").sum()),
                        "n_judge": int((kinds == "judge").sum()), "n_clips": int(len(set(clips[c]))),
                        "n_self_judged": int(own[index].sum()),
                        "n_judge_failed": int((kinds == "judge_failed").sum())})
            rows.append(row)
    return pd.DataFrame(rows, columns=SCORE_COLUMNS)


def _pair_row(base: dict, a_name: str, b_name: str, merged: pd.DataFrame, n_boot: int, seed: int) -> dict:
    summary = paired_summary(merged["ok_a"].to_numpy(), merged["ok_b"].to_numpy(), merged["clip_key"].to_numpy(),
                             n_boot=n_boot, seed=seed)
    ch_a, ch_b = merged["chance_a"].mean(), merged["chance_b"].mean()
    return {**base, "a": a_name, "b": b_name, "n_pairs": summary["n_pairs"], "both": summary["both"],
            "only_a": summary["only_a"], "only_b": summary["only_b"], "neither": summary["neither"],
            "mcnemar_p": summary["mcnemar_p"], "mcnemar_p_unclustered": summary["mcnemar_p_unclustered"],
            "diff": summary["diff"], "diff_ci_low": summary["diff_ci_low"],
            "diff_ci_high": summary["diff_ci_high"], "accuracy_a": summary["accuracy_a"], "accuracy_b": summary["accuracy_b"],
            "chance_corrected_a": chance_corrected(summary["accuracy_a"], ch_a),
            "chance_corrected_b": chance_corrected(summary["accuracy_b"], ch_b)}


def _model_pair_rows(base: dict, models: pd.DataFrame, n_boot: int, seed: int) -> list[dict]:
    """Every pair of models (sides in sorted order) on the items both answered under one condition: all formats
    (``'*'``), then each format."""
    rows = []
    for condition, gc in models.groupby("condition"):
        wide = {who: x.set_index("item_id")[["ok", "chance", "clip_key", "format"]] for who, x in gc.groupby("who")}
        for wa, wb in itertools.combinations(sorted(wide), 2):
            merged = wide[wa].join(wide[wb], lsuffix="_a", rsuffix="_b", how="inner")
            if not len(merged):
                continue
            merged = merged.rename(columns={"clip_key_a": "clip_key"})
            at = {**base, "kind": "model", "condition": condition}
            rows.append(_pair_row({**at, "format": "*"}, wa, wb, merged, n_boot, seed))
            for fmt, one in merged.groupby("format_a", sort=True):
                rows.append(_pair_row({**at, "format": fmt}, wa, wb, one, n_boot, seed))
    return rows


def paired_comparisons(verdicts: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    c = _counted(verdicts[primary_mask(verdicts)]) if len(verdicts) else _counted(verdicts)
    rows: list[dict] = []
    if not len(c):
        return pd.DataFrame(columns=PAIR_COLUMNS)
    c["who"] = model_labels(c["responder"], c["model"])
    for level_value in ["*"] + sorted(c["level"].unique()):
        scope = c if level_value == "*" else c[c["level"] == level_value]
        groups = dict(list(scope.groupby(["responder", "model"])))
        models = scope[scope["who"].notna()]
        if len(models):
            groups[(MODEL_PAIR, MODEL_PAIR)] = models
        for responder, model in sorted(groups):
            g = groups[(responder, model)]
            base = {"responder": responder, "model": model, "level": level_value}
            if (responder, model) == (MODEL_PAIR, MODEL_PAIR):
                rows += _model_pair_rows(base, g, n_boot, seed)
                continue
            base["format"] = "*"
            # formats on the same base question, within a condition
            for condition, gc in g.groupby("condition"):
                wide = {f: x.set_index("question_id")[["ok", "chance", "clip_key"]] for f, x in gc.groupby("format")}
                for fa, fb in itertools.combinations(sorted(wide), 2):
                    merged = wide[fa].join(wide[fb], lsuffix="_a", rsuffix="_b", how="inner")
                    if not len(merged):
                        continue
                    merged = merged.rename(columns={"clip_key_a": "clip_key"})
                    rows.append(_pair_row({**base, "kind": "format", "condition": condition}, fa, fb, merged, n_boot, seed))
            # conditions on the same item
            by_condition = {cond: x.set_index("item_id")[["ok", "chance", "clip_key"]] for cond, x in g.groupby("condition")}
            for other in ("no_clip", "silenced"):
                if "clip" in by_condition and other in by_condition:
                    merged = by_condition["clip"].join(by_condition[other], lsuffix="_a", rsuffix="_b", how="inner")
                    if len(merged):
                        merged = merged.rename(columns={"clip_key_a": "clip_key"})
                        rows.append(_pair_row({**base, "kind": "condition", "condition": "*"}, "clip", other, merged, n_boot, seed))
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


def over_marking(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Among wrong 4b answers (parsed), the share with more than one option marked true (Liu et al. 2025: 63–86 %)."""
    v = verdicts[(verdicts["base_format"] == "option_judgement") & (verdicts["scored_by"] == "rule")].copy()
    v = v[primary_mask(v)] if len(v) else v
    v = v[~v["correct"].fillna(False).astype(bool)]
    rows = []
    for (responder, model, condition), g in v.groupby(["responder", "model", "condition"]):
        over = int((g["n_marked_true"].fillna(0) > 1).sum())
        rows.append({"responder": responder, "model": model, "condition": condition, "n_wrong": len(g),
                     "n_wrong_over_marked": over, "share": over / len(g) if len(g) else np.nan})
    return pd.DataFrame(rows, columns=["responder", "model", "condition", "n_wrong", "n_wrong_over_marked", "share"])


PRIORS = {"blind": False, "anti_prior": True}  # prior -> picks the least frequent option
PRIOR_FORMATS = {"multiple_choice": "mc", "yes_no": "yes_no"}
PRIOR_KEYS = ["dataset", "subtype", "level", "distractor_strategy"]
PRIOR_COLUMNS = PRIOR_KEYS + ["format", "prior", "n", "n_clips", "rate", "chance", "ci_low", "ci_high",
                              "chance_corrected", "excludes_chance"]
PRIOR_MIN_N = 20  # the prior_shortcut check judges groups of at least this many questions


def prior_correct(item, question, least: bool) -> bool:
    """Is a frequency prior right on this item, with no clip? It picks the most (``blind``) or least
    (``anti_prior``) frequent option by the question's ``option_frequency`` (ties: the first); on a yes/no
    statement it says "yes" exactly when the statement names that option. One deterministic draw of the
    prior; the audit uses its expectation, :func:`prior_credit`."""
    pick = prior_pick(list(question.option_frequency), least)
    if item.format == "yes_no":
        return (item.statement_value == list(question.option_values)[pick]) == bool(item.statement_true)
    return pick == int(question.answer_index)


def prior_credit(item, question, least: bool) -> float:
    """The frequency prior's expected score on this item: ties among the extreme frequencies broken uniformly at
    random and, in yes/no, averaged over the statement the formats layer draws (docs/design/scoring.md)."""
    freqs = [int(f) for f in question.option_frequency]
    extreme = min(freqs) if least else max(freqs)
    tied = {i for i, f in enumerate(freqs) if f == extreme}
    p_pick = [1.0 / len(tied) if i in tied else 0.0 for i in range(len(freqs))]
    key = int(question.answer_index)
    if item.format == "yes_no":
        wrong = [i for i in range(len(freqs)) if i != key]
        if not wrong:
            return p_pick[key]
        return 0.5 * p_pick[key] + 0.5 * sum(1.0 - p_pick[i] for i in wrong) / len(wrong)
    return p_pick[key]


def prior_audit(questions: pd.DataFrame, items: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0,
                cluster: str = "clip_key") -> pd.DataFrame:
    """The text-only priors per subtype × strategy × format (multiple choice, yes/no) × prior: the rate of
    ``blind`` (most frequent option) and ``anti_prior`` (least frequent), computed from the options'
    corpus frequencies (no responder run needed, the same under every condition: the priors never see the
    clip) as expected scores with ties broken uniformly (:func:`prior_credit`), with clip-clustered intervals (:func:`stats.score_intervals`); ``excludes_chance`` when the
    interval leaves out the format's chance. ``cluster`` names the items' column the bootstrap resamples
    (``clip_key`` by default; ``video_id`` when many windows of one video are audited together, as they
    share its kitchen, objects and frequencies)."""
    if not len(questions) or not len(items) or "option_frequency" not in questions.columns:
        return pd.DataFrame(columns=PRIOR_COLUMNS)
    by_id = {q.question_id: q for q in questions.itertuples(index=False)}
    its = items[items["format"].isin(list(PRIOR_FORMATS)) & items["question_id"].isin(list(by_id))]
    rows = []
    for keys, group in its.groupby(PRIOR_KEYS + ["format"], sort=True):
        records = list(group.itertuples(index=False))
        chance = group["chance"].astype(float).to_numpy()
        clips = group["clip_key"].astype(str).to_numpy()
        clusters = group[cluster].astype(str).to_numpy()
        for prior, least in PRIORS.items():
            ok = np.array([prior_credit(i, by_id[i.question_id], least) for i in records], dtype=float)
            (low, high), _ = score_intervals(ok, chance, clusters, n_boot=n_boot, seed=seed)
            ch = float(chance.mean())
            rows.append({**dict(zip(PRIOR_KEYS + ["format"], keys)), "prior": prior, "n": len(ok),
                         "n_clips": int(len(set(clips))), "rate": float(ok.mean()), "chance": ch, "ci_low": low,
                         "ci_high": high, "chance_corrected": chance_corrected(float(ok.mean()), ch),
                         "excludes_chance": bool(low > ch or high < ch)})
    return pd.DataFrame(rows, columns=PRIOR_COLUMNS)


def prior_shortcuts(priors: pd.DataFrame, min_n: int = PRIOR_MIN_N) -> pd.DataFrame:
    """The prior rows (n ≥ ``min_n``) whose interval excludes chance: what the ``prior_shortcut`` check flags."""
    if not len(priors):
        return priors
    return priors[(priors["n"] >= min_n) & priors["excludes_chance"].astype(bool)]


def prior_shortcuts_holm(priors: pd.DataFrame, min_n: int = PRIOR_MIN_N, alpha: float = 0.05) -> pd.DataFrame:
    """The judged prior rows (n ≥ ``min_n``) whose interval excludes chance and that still differ from
    chance after Holm's step-down correction at family-wise level ``alpha`` over all judged rows — with
    some 100 rows at 95 % each, about five exclude chance by chance alone; a row kept here is a prior, not
    noise. Always a subset of :func:`prior_shortcuts`.

    Each row's two-sided p is the normal approximation of its clip-clustered bootstrap interval (95 %,
    :func:`prior_audit`): the standard error is the distance from the rate to the interval's end facing
    chance, over 1.96 (percentile intervals can be lopsided; the side towards chance is the one that
    matters). A row with no interval (NaN) counts as p = 1; a zero-width interval away from chance as p = 0."""
    from statistics import NormalDist

    if not len(priors):
        return priors
    judged = priors[priors["n"] >= min_n]
    z95 = NormalDist().inv_cdf(0.975)
    ps = []
    for r in judged.itertuples(index=False):
        facing = r.ci_low if r.rate >= r.chance else r.ci_high
        se = abs(r.rate - facing) / z95
        dev = abs(r.rate - r.chance)
        if not np.isfinite(se) or not np.isfinite(dev):
            ps.append(1.0)
        elif se == 0:
            ps.append(0.0 if dev > 0 else 1.0)
        else:
            ps.append(2 * (1 - NormalDist().cdf(dev / se)))
    keep = np.zeros(len(ps), dtype=bool)
    m = len(ps)
    for rank, i in enumerate(np.argsort(ps, kind="stable")):
        if ps[i] > alpha / (m - rank):
            break
        keep[i] = True
    return judged[keep & judged["excludes_chance"].astype(bool).to_numpy()]


def _prior_columns(priors: pd.DataFrame) -> pd.DataFrame:
    """The prior audit wide, one row per subtype × strategy: ``blind_rate_mc``, ``blind_ci_low_mc``, …"""
    if not len(priors):
        return pd.DataFrame(columns=PRIOR_KEYS)
    out = None
    for (fmt, prior), g in priors.groupby(["format", "prior"]):
        suffix = PRIOR_FORMATS[fmt]
        part = g[PRIOR_KEYS + ["n", "rate", "ci_low", "ci_high"]].rename(columns={
            "n": f"prior_n_{suffix}", "rate": f"{prior}_rate_{suffix}", "ci_low": f"{prior}_ci_low_{suffix}",
            "ci_high": f"{prior}_ci_high_{suffix}"})
        if out is not None and f"prior_n_{suffix}" in out.columns:
            part = part.drop(columns=[f"prior_n_{suffix}"])
        out = part if out is None else out.merge(part, on=PRIOR_KEYS, how="outer")
    return out


def shortcut_audit(presence_rates: pd.DataFrame, verdicts: pd.DataFrame, priors: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per subtype × strategy × responder/model: presence-oracle rate (no model needed), the blind gap
    (multiple-choice accuracy without the clip minus chance) and the silenced gap (with sound minus silenced);
    with ``priors`` (:func:`prior_audit`) also the blind and anti-prior rates with their clip-clustered
    intervals, in multiple choice (``…_mc``) and yes/no (``…_yes_no``)."""
    mc = _counted(verdicts[verdicts["format"] == "multiple_choice"])
    keys = ["dataset", "subtype", "level", "distractor_strategy"]
    acc = mc.groupby(keys + ["responder", "model", "condition"])["ok"].mean().unstack("condition")
    return shortcut_audit_from_accuracy(presence_rates, acc.reset_index(), priors)


def shortcut_audit_from_accuracy(presence_rates: pd.DataFrame, acc: pd.DataFrame,
                                 priors: pd.DataFrame | None = None) -> pd.DataFrame:
    """:func:`shortcut_audit` from the multiple-choice accuracy per subtype × strategy × responder/model, one
    column per condition (from the verdicts there, from per-clip partials in :mod:`.partials`)."""
    keys = ["dataset", "subtype", "level", "distractor_strategy"]
    acc = acc.copy()
    for cond in ("clip", "no_clip", "silenced"):
        if cond not in acc.columns:
            acc[cond] = np.nan
    out = presence_rates.merge(acc, on=keys, how="left")
    out["blind_gap"] = out["no_clip"] - out["chance"]
    out["silenced_gap"] = out["clip"] - out["silenced"]
    out = out.rename(columns={"clip": "accuracy_clip", "no_clip": "accuracy_no_clip", "silenced": "accuracy_silenced"})
    columns = keys + ["responder", "model", "n", "singles_out_key", "only_absent_give_away", "presence_oracle_rate",
                      "chance", "accuracy_clip", "accuracy_no_clip", "accuracy_silenced", "blind_gap", "silenced_gap"]
    if priors is not None and len(priors):
        wide = _prior_columns(priors)
        out = out.merge(wide, on=keys, how="left")
        columns += [c for c in wide.columns if c not in keys]
    return out[[c for c in columns if c in out.columns]]
