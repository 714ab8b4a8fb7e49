"""Judge audit: ask the judge about open replies the rules already decided, under two candidate orders, and see
whether it agrees with the rules and with itself (``judge_audit``); and the agreement between several judges and
the judges' swap. The sample is seeded by content, not row order; the second order moves every candidate, so a
positional judge disagrees with itself. The decisions: docs/design/scoring.md."""

from __future__ import annotations

import json
import random
from typing import Callable

import numpy as np
import pandas as pd

from ..records import records
from ..formats.parsing import answer_text
from ..seeding import stable_seed
from ..formats.registry import format_of
from .verdicts import JudgeRequest, failed_call, judge_identity, judge_order

AUDIT_COLUMNS = ["responder", "model", "n", "judge_rule_agreement", "judge_self_agreement", "judge_none_rate",
                 "judge_errors", "note", "judge_provider", "judge_model", "judge_endpoint", "self_judged"]
NO_JUDGE_NOTE = "no judge is configured: the judge audit was not run"
NO_ROWS_NOTE = "no open replies decided by the rules to audit"

Judge = Callable[[list[JudgeRequest]], list[tuple[int | None, str]]]


def _note_frame(note: str, judge=None) -> pd.DataFrame:
    return pd.DataFrame([{"responder": "*", "model": "*", "n": 0, "judge_rule_agreement": np.nan,
                          "judge_self_agreement": np.nan, "judge_none_rate": np.nan, "judge_errors": 0,
                          "note": note, **judge_identity(judge), "self_judged": False}], columns=AUDIT_COLUMNS)


def second_order(first: list[int], item_id: str, responder: str, condition: str, seed: int = 0,
                 attempts: int = 200) -> list[int]:
    """A seeded shuffle of ``first``'s candidates that puts no candidate at the position it had in ``first``.

    Rejection-samples seeded shuffles (about 37 % of shuffles qualify, so a few draws suffice); after
    ``attempts`` draws, ``first`` rotated by one. One candidate (or none): ``first`` itself.
    """
    n = len(first)
    if n < 2:
        return list(first)
    for attempt in range(attempts):
        order = list(first)
        random.Random(stable_seed("judge_audit", seed, attempt, item_id, responder, condition)).shuffle(order)
        if all(a != b for a, b in zip(order, first)):
            return order
    return first[1:] + first[:1]


def _rule_option(verdict, item) -> int | None:
    """Index in the item's options of what the rules read, or None (a count that is no option)."""
    options = [str(o) for o in item.options]
    parsed = str(verdict.parsed)
    if parsed in options:
        return options.index(parsed)
    lowered = [o.strip().lower() for o in options]
    return lowered.index(parsed.strip().lower()) if parsed.strip().lower() in lowered else None


def eligible(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Open replies the rules decided with a reading (not an abstention)."""
    if not len(verdicts) or not {"base_format", "scored_by", "parsed"} <= set(verdicts.columns):
        return verdicts.iloc[0:0]
    parsed = verdicts["parsed"].fillna("").astype(str)
    keep = ((verdicts["base_format"] == "open") & (verdicts["scored_by"] == "rule")
            & (parsed != "(abstained)") & (parsed != ""))
    return verdicts[keep.fillna(False).astype(bool)]


def sample_key(responder, model, item_id, condition, fmt, seed: int) -> int:
    """A reply's place in the seeded sample order: the sample takes the smallest keys."""
    return stable_seed("judge_audit_sample", seed, responder, model, item_id, condition, fmt)


def sample_rows(verdicts: pd.DataFrame, sample_size: int, seed: int) -> pd.DataFrame:
    """Up to ``sample_size`` eligible rows per responder/model, seeded, independent of input row order: the
    rows of smallest :func:`sample_key` (a seeded hash of the reply's identity), with the key as column
    ``sample_key``. The smallest keys of a union are the smallest among each part's smallest, so the sample
    of all clips is made from each clip's own sample (``scoring.metrics.partials.judge_partials``)."""
    rows = eligible(verdicts)
    if not len(rows):
        return rows.assign(sample_key=pd.Series(dtype="int64"))
    keys = [sample_key(r, m, i, c, f, seed) for r, m, i, c, f in
            zip(rows["responder"], rows["model"], rows["item_id"], rows["condition"], rows["format"])]
    rows = rows.assign(sample_key=np.asarray(keys, dtype=np.int64))
    rows = rows.sort_values(["responder", "model", "sample_key", "item_id", "condition", "format"], kind="stable")
    return rows.groupby(["responder", "model"], sort=True).head(sample_size).reset_index(drop=True)


def _rates(g: pd.DataFrame) -> dict:
    first_ok = g[~g["error_1"]]
    both_ok = g[~g["error_1"] & ~g["error_2"]]
    answered = pd.concat([g.loc[~g["error_1"], "judge_1"], g.loc[~g["error_2"], "judge_2"]])
    agree = (first_ok["judge_1"] == first_ok["rule"]).mean() if len(first_ok) else np.nan
    same = (both_ok["judge_1"] == both_ok["judge_2"]).mean() if len(both_ok) else np.nan
    none_rate = (answered == -1).mean() if len(answered) else np.nan
    errors = int(g["error_1"].sum() + g["error_2"].sum())
    note = "" if len(first_ok) else "every judge call failed"
    return {"n": len(g), "judge_rule_agreement": float(agree), "judge_self_agreement": float(same),
            "judge_none_rate": float(none_rate), "judge_errors": errors, "note": note}


def audit_details(verdicts: pd.DataFrame, items: pd.DataFrame, judge: Judge, *, sample_size: int = 50,
                  seed: int = 0, judge_seed: int = 0) -> pd.DataFrame:
    """One row per audited reply: the rules' option, the judge's option under each order (-1 = none), errors,
    and both orders (as JSON lists of option indices). Options are indices into the item's options."""
    columns = ["responder", "model", "item_id", "condition", "format", "answer", "rule", "judge_1", "judge_2",
               "error_1", "error_2", "raw_1", "raw_2", "order_1", "order_2"]
    rows = sample_rows(verdicts, sample_size, seed)
    by_item = {i.item_id: i for i in records(items)} if len(items) else {}
    pending: list[tuple[dict, JudgeRequest, JudgeRequest]] = []
    for v in records(rows):
        item = by_item.get(v.item_id)
        if item is None:
            continue
        answer = answer_text(v.reply)
        answer = str(answer.value) if answer.ok else str(v.parsed)
        options = [str(o) for o in item.options]
        first = judge_order(v.item_id, v.responder, v.condition, len(options), judge_seed)
        second = second_order(first, v.item_id, v.responder, v.condition, seed)
        question = format_of(v.base_format).judge_question(item)  # (the audit reads few item columns)
        base_key = f"{v.item_id}|{v.responder}|{v.model}|{v.condition}|{answer}"
        requests = [JudgeRequest(f"judge_audit|{i}|{base_key}", question, answer, [options[j] for j in order], order)
                    for i, order in ((1, first), (2, second))]
        rule = _rule_option(v, item)
        info = {"responder": v.responder, "model": v.model, "item_id": v.item_id, "condition": v.condition,
                "format": v.format, "answer": answer, "rule": -1 if rule is None else rule,
                "order_1": json.dumps(first), "order_2": json.dumps(second)}
        pending.append((info, requests[0], requests[1]))
    if not pending:
        return pd.DataFrame(columns=columns)
    flat = [r for _, a, b in pending for r in (a, b)]
    results = list(judge(flat))
    if len(results) != len(flat):
        raise ValueError(f"the judge returned {len(results)} results for {len(flat)} requests")
    out = []
    for k, (info, *requests) in enumerate(pending):
        row = dict(info)
        for i, request in enumerate(requests, 1):
            choice, raw = results[2 * k + i - 1]
            failed = failed_call(choice, raw, len(request.candidates))
            row[f"error_{i}"] = failed
            row[f"raw_{i}"] = str(raw)
            row[f"judge_{i}"] = -1 if failed or choice is None else request.order[int(choice)]
        out.append(row)
    return pd.DataFrame(out, columns=columns)


def judge_audit(verdicts: pd.DataFrame, items: pd.DataFrame, judge: Judge | None, *, sample_size: int = 50,
                seed: int = 0, judge_seed: int = 0) -> pd.DataFrame:
    """Per responder/model: ``n``, ``judge_rule_agreement``, ``judge_self_agreement``, ``judge_none_rate``,
    ``judge_errors``, ``note`` (every decision: docs/design/scoring.md).

    ``judge(requests: list[JudgeRequest]) -> list[(choice index in the shown order | None, raw)]`` — e.g.
    :func:`scoring.model_judge`; all requests of the audit go in one call, so its rate limit and cache apply.
    """
    if judge is None:
        return _note_frame(NO_JUDGE_NOTE)
    details = audit_details(verdicts, items, judge, sample_size=sample_size, seed=seed, judge_seed=judge_seed)
    if not len(details):
        return _note_frame(NO_ROWS_NOTE, judge)
    who = judge_identity(judge)
    own = bool(getattr(judge, "self_judging", False))  # asked for explicitly (--judge self / --allow-self-judge)
    rows = [{"responder": r, "model": m, **_rates(g), **who, "self_judged": own and m == who["judge_model"]}
            for (r, m), g in details.groupby(["responder", "model"], sort=True)]
    if len(rows) > 1:
        rows.append({"responder": "*", "model": "*", **_rates(details), **who,
                     "self_judged": any(row["self_judged"] for row in rows)})
    return pd.DataFrame(rows, columns=AUDIT_COLUMNS)


# -- several judges: agreement between them, and how far swapping the judge moves the scores -------------------

VOTE_COLUMNS = ["responder", "model", "dataset", "subtype", "distractor_strategy", "format", "condition", "clip_key",
                "item_id", "chance", "verdict_scored_by", "verdict_correct", "judge", "outcome", "choice", "correct"]
AGREEMENT_COLUMNS = ["track", "judge_a", "judge_b", "n", "agreement", "cohen_kappa", "krippendorff_alpha", "note"]
SWAP_COLUMNS = ["track", "metric", "responder", "model", "condition", "judge", "n", "value", "chance",
                "chance_corrected", "shift", "rank", "spearman_rho", "n_ranked", "note"]
ONE_JUDGE_NOTE = "fewer than two judges were asked: no agreement between judges to measure"
VERDICT = "verdict"  # the swap's reference: the scores as materialized (the configured judge's or the majority's)


def vote_rows(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Every judge's answer about every reply the rules could not decide (the verdicts' ``judge_votes``), one row
    per reply × judge: ``outcome`` chose / none / failed, ``choice`` (option index, −1 for none or failed),
    ``correct`` (null when failed), beside the reply's verdict (``verdict_scored_by``, ``verdict_correct``)."""
    if not len(verdicts) or "judge_votes" not in verdicts:
        return pd.DataFrame(columns=VOTE_COLUMNS)
    asked = verdicts[verdicts["judge_votes"].fillna("").astype(str) != ""]
    rows = []
    for v in asked.itertuples(index=False):
        for vote in json.loads(v.judge_votes):
            rows.append({"responder": v.responder, "model": v.model, "dataset": v.dataset, "subtype": v.subtype,
                         "distractor_strategy": v.distractor_strategy, "format": v.format, "condition": v.condition,
                         "clip_key": v.clip_key, "item_id": v.item_id, "chance": float(v.chance),
                         "verdict_scored_by": v.scored_by,
                         "verdict_correct": None if pd.isna(v.correct) else bool(v.correct),
                         "judge": vote["judge"], "outcome": vote["outcome"],
                         "choice": -1 if vote["choice"] is None else int(vote["choice"]), "correct": vote["correct"]})
    frame = pd.DataFrame(rows, columns=VOTE_COLUMNS)
    for c in ("verdict_correct", "correct"):
        frame[c] = frame[c].astype("boolean")
    return frame


def cohen_kappa(a, b) -> float:
    """Cohen's κ of two raters' labels on the same units (NaN when chance agreement is 1: one label only)."""
    a, b = np.asarray(a, dtype=object), np.asarray(b, dtype=object)
    if not len(a):
        return float("nan")
    labels = sorted(set(a) | set(b), key=str)
    observed = float(np.mean(a == b))
    expected = sum(float(np.mean(a == x)) * float(np.mean(b == x)) for x in labels)
    return float("nan") if expected >= 1 else (observed - expected) / (1 - expected)


def krippendorff_alpha(units: list[list], *, level: str = "nominal") -> float:
    """Krippendorff's α of ``units`` (each unit's labels from the raters who gave one; missing labels left out;
    units with fewer than two labels are not pairable and are skipped), ``level`` ``nominal`` (labels differ or
    not) or ``interval`` (numeric labels, squared differences). NaN when the expected disagreement is 0 (one
    label only) or nothing is pairable."""
    pairable = [[str(x) for x in u] for u in units if len(u) >= 2]
    if not pairable:
        return float("nan")
    labels = sorted({x for u in pairable for x in u})
    index = {x: i for i, x in enumerate(labels)}
    coincidence = np.zeros((len(labels), len(labels)))
    for u in pairable:
        counts = np.bincount([index[x] for x in u], minlength=len(labels)).astype(float)
        coincidence += (np.outer(counts, counts) - np.diag(counts)) / (len(u) - 1)
    if level == "interval":
        values = np.array([float(x) for x in labels])
        distance = (values[:, None] - values[None, :]) ** 2
    else:
        distance = 1.0 - np.eye(len(labels))
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    observed = (coincidence * distance).sum()
    expected = (np.outer(n_c, n_c) * distance).sum() / (n - 1)
    return float("nan") if expected == 0 else float(1 - observed / expected)


def agreement_table(labels: pd.DataFrame, track: str, *, level: str = "nominal") -> pd.DataFrame:
    """Pairwise agreement, Cohen's κ and Krippendorff's α between judges on the units they both answered
    (``labels``: ``unit``, ``judge``, ``label``; a failed call has no label), then α over every judge at once
    (``judge_a`` = ``judge_b`` = ``'*'``). One judge: one row saying so."""
    judges = sorted(labels["judge"].unique()) if len(labels) else []
    if len(judges) < 2:
        return pd.DataFrame([{"track": track, "judge_a": judges[0] if judges else "*", "judge_b": "*", "n": 0,
                              "agreement": np.nan, "cohen_kappa": np.nan, "krippendorff_alpha": np.nan,
                              "note": ONE_JUDGE_NOTE}], columns=AGREEMENT_COLUMNS)
    answered = labels.dropna(subset=["label"])
    wide = answered.pivot_table(index="unit", columns="judge", values="label", aggfunc="first") \
        .reindex(columns=judges)  # a judge whose every call failed: a column of missing labels
    rows = []
    for i, a in enumerate(judges):
        for b in judges[i + 1:]:
            both = wide[[a, b]].dropna()
            rows.append({"track": track, "judge_a": a, "judge_b": b, "n": len(both),
                         "agreement": float((both[a] == both[b]).mean()) if len(both) else np.nan,
                         "cohen_kappa": cohen_kappa(both[a], both[b]),
                         "krippendorff_alpha": krippendorff_alpha(both.values.tolist(), level=level), "note": ""})
    units = [[x for x in row if not pd.isna(x)] for row in wide[judges].values.tolist()]
    rows.append({"track": track, "judge_a": "*", "judge_b": "*", "n": sum(len(u) >= 2 for u in units),
                 "agreement": np.nan, "cohen_kappa": np.nan, "krippendorff_alpha": krippendorff_alpha(units, level=level),
                 "note": f"every judge ({len(judges)}); failed calls are missing labels"})
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)


def qa_agreement(votes: pd.DataFrame) -> pd.DataFrame:
    """:func:`agreement_table` of the QA judges: a unit is one reply, a label the option chosen (or none)."""
    v = votes.assign(unit=votes["item_id"].astype(str) + "|" + votes["responder"].astype(str) + "|"
                     + votes["model"].astype(str) + "|" + votes["condition"].astype(str),
                     label=np.where(votes["outcome"] == "failed", None, votes["choice"].astype(str)))
    return agreement_table(v[["unit", "judge", "label"]], "qa")


def _ranked(frame: pd.DataFrame, value: str = "value") -> pd.DataFrame:
    """Rank (1 = best) of each responder/model per track × metric × condition × judge, and the Spearman ρ of each
    judge's ranking against the verdict's (NaN with fewer than 3 ranked or a constant score)."""
    from scipy.stats import spearmanr

    keys = ["track", "metric", "condition", "judge"]
    frame = frame.copy()
    frame["rank"] = frame.groupby(keys)[value].rank(ascending=False, method="average")
    base = frame[frame["judge"] == VERDICT][["track", "metric", "condition", "responder", "model", value]]
    joined = frame.merge(base, on=["track", "metric", "condition", "responder", "model"], suffixes=("", "_verdict"),
                         how="left")
    frame["shift"] = (joined[value] - joined[f"{value}_verdict"]).to_numpy()
    rho, ranked = {}, {}
    for key, g in joined.groupby(keys):
        g = g.dropna(subset=[value, f"{value}_verdict"])
        ranked[key] = len(g)
        ok = len(g) >= 3 and g[value].nunique() > 1 and g[f"{value}_verdict"].nunique() > 1
        rho[key] = float(spearmanr(g[value], g[f"{value}_verdict"]).statistic) if ok else np.nan
    index = list(zip(*(frame[k] for k in keys)))
    frame["spearman_rho"] = [rho.get(k, np.nan) for k in index]
    frame["n_ranked"] = [ranked.get(k, 0) for k in index]
    return frame


def qa_swap(score_partials: pd.DataFrame, votes: pd.DataFrame) -> pd.DataFrame:
    """Each responder/model's chance-corrected score (every dataset, level and format pooled, primary distractor
    strategies only, as ``scores``'s ``'*'`` rows) per condition, as materialized (judge ``verdict``) and with
    every judge's answers in place of the verdict's on the replies the rules could not decide; ``shift`` is the
    change from the verdict's score, ``rank`` and ``spearman_rho`` the ranking's. A judge's failed call leaves
    its reply out, as ``judge_failed`` does."""
    from .metrics.stats import chance_corrected
    from .metrics.tables import primary_mask as _primary

    if not len(score_partials) or not len(votes):
        return pd.DataFrame(columns=SWAP_COLUMNS)
    keys = ["responder", "model", "condition"]
    sp = score_partials[_primary(score_partials)]
    sp = sp.assign(c_sum=sp["chance"] * sp["n"])
    base = sp.groupby(keys)[["n", "correct", "c_sum"]].sum()
    v = votes[_primary(votes)] if len(votes) else votes
    judged = v.drop_duplicates(keys[:2] + ["condition", "item_id"])
    judged = judged[judged["verdict_scored_by"] == "judge"]
    taken = judged.assign(ok=judged["verdict_correct"].fillna(False).astype(bool)).groupby(keys).agg(
        n=("ok", "size"), correct=("ok", "sum"), c_sum=("chance", "sum"))
    rule = base.sub(taken.reindex(base.index, fill_value=0), fill_value=0)  # what the rules decided (and unparsed)
    rows = []
    for key, b in base.iterrows():
        rows.append({**dict(zip(keys, key)), "judge": VERDICT, "n": b["n"], "correct": b["correct"], "c_sum": b["c_sum"]})
    answered = v[v["outcome"] != "failed"].assign(ok=lambda f: f["correct"].fillna(False).astype(bool))
    by_judge = answered.groupby(keys + ["judge"]).agg(n=("ok", "size"), correct=("ok", "sum"), c_sum=("chance", "sum"))
    for judge in sorted(v["judge"].unique()):
        for key, r in rule.iterrows():
            add = by_judge.loc[(*key, judge)] if (*key, judge) in by_judge.index else pd.Series({"n": 0, "correct": 0, "c_sum": 0.0})
            rows.append({**dict(zip(keys, key)), "judge": judge, "n": r["n"] + add["n"],
                         "correct": r["correct"] + add["correct"], "c_sum": r["c_sum"] + add["c_sum"]})
    frame = pd.DataFrame(rows)
    frame["value"] = frame["correct"] / frame["n"]
    frame["chance"] = frame["c_sum"] / frame["n"]
    frame["chance_corrected"] = chance_corrected(frame["value"].to_numpy(), frame["chance"].to_numpy())
    frame = frame.assign(track="qa", metric="chance_corrected", note="")
    frame = _ranked(frame, "chance_corrected")
    frame["n"] = frame["n"].astype(int)
    return frame[SWAP_COLUMNS].sort_values(["metric", "condition", "judge", "rank"], kind="stable").reset_index(drop=True)


def caption_swap(partials: pd.DataFrame) -> pd.DataFrame:
    """The caption track's judge-swap rows from ``caption_judge_partials``: each label and semantic metric per
    responder/model × condition × judge, the mean over the captions where it applies (per clip, then over clips),
    its shift from the verdict's and the Spearman ρ of the ranking."""
    if not len(partials):
        return pd.DataFrame(columns=SWAP_COLUMNS)
    p = partials.assign(value=pd.to_numeric(partials["value"], errors="coerce"))
    g = p.groupby(["metric", "responder", "model", "condition", "judge"], sort=True)["value"].agg(["mean", "count"])
    frame = g.reset_index().rename(columns={"mean": "value", "count": "n"})
    frame["track"] = np.where(frame["metric"].str.startswith("semantic_"), "caption_semantic", "caption_label")
    frame = frame.assign(chance=np.nan, chance_corrected=np.nan, note="")
    frame = _ranked(frame, "value")
    frame["n"] = frame["n"].astype(int)
    return frame[SWAP_COLUMNS].sort_values(["track", "metric", "condition", "judge", "rank"], kind="stable") \
        .reset_index(drop=True)


def all_swaps(score_partials: pd.DataFrame, votes: pd.DataFrame, caption_partials: pd.DataFrame) -> pd.DataFrame:
    """``judge_swap``: :func:`qa_swap` and :func:`caption_swap`; one row with a note when no judge swap can be made
    (fewer than two judges asked)."""
    parts = [f for f in (qa_swap(score_partials, votes) if len(votes) and votes["judge"].nunique() > 1 else None,
                         caption_swap(caption_partials)) if f is not None and len(f)]
    if not parts:
        return pd.DataFrame([{"track": "*", "metric": "*", "responder": "*", "model": "*", "condition": "*",
                              "judge": "*", "n": 0, "value": np.nan, "chance": np.nan, "chance_corrected": np.nan,
                              "shift": np.nan, "rank": np.nan, "spearman_rho": np.nan, "n_ranked": 0,
                              "note": ONE_JUDGE_NOTE}], columns=SWAP_COLUMNS)
    return pd.concat(parts, ignore_index=True)[SWAP_COLUMNS]


def all_agreement(votes: pd.DataFrame, caption_votes: pd.DataFrame) -> pd.DataFrame:
    """``judge_agreement``: the QA judges' choices (:func:`qa_agreement`), the caption labels and the caption
    semantic scores (α at the interval level for the 1-5 scores), each over every clip."""
    parts = [qa_agreement(votes) if len(votes) else agreement_table(votes.iloc[0:0].assign(
        unit=[], label=[]), "qa")]
    cv = caption_votes.assign(unit=caption_votes["clip_key"].astype(str) + "|" + caption_votes["unit"].astype(str)) \
        if len(caption_votes) else caption_votes
    for track, level in (("caption_label", "nominal"), ("caption_semantic", "interval")):
        rows = cv[cv["track"] == track][["unit", "judge", "label"]] if len(cv) else \
            pd.DataFrame(columns=["unit", "judge", "label"])
        parts.append(agreement_table(rows, track, level=level))
    return pd.concat(parts, ignore_index=True)[AGREEMENT_COLUMNS]
