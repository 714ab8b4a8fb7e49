"""The per-clip partial tables (:mod:`.partials` describes them): each clip's verdicts, questions and items
reduced to the counts and sums the cross-clip tables need, and :func:`combine` (partials of several clips as one).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ...bank.subtypes import is_primary
from .tables import COUNTED, MODEL_PAIR, PRIOR_FORMATS, PRIOR_KEYS, PRIORS, _counted, model_labels, prior_credit

SCORE_KEYS = ["responder", "model", "dataset", "level", "subtype", "distractor_strategy", "format", "condition"]
SCORE_COUNTS = ["n", "correct", "n_undecided", "correct_undecided", "n_unparsed", "n_skipped", "n_error", "n_judge",
                "n_rule_wrong_4b", "n_over_marked_4b", "n_self_judged", "n_judge_failed"]
PAIR_KEYS = ["responder", "model", "level", "kind", "condition", "a", "b", "format"]
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
    "judge_vote_partials": ["responder", "model", "dataset", "subtype", "distractor_strategy", "format", "condition",
                            "clip_key", "item_id", "chance", "verdict_scored_by", "verdict_correct", "judge", "outcome",
                            "choice", "correct"],
}


def _empty(name: str) -> pd.DataFrame:
    return pd.DataFrame(columns=PARTIAL_COLUMNS[name])


def _primary(frame: pd.DataFrame) -> np.ndarray:
    """Rows in their subtype's own distractor strategy (:func:`...bank.subtypes.is_primary`), asked once per
    distinct (subtype, strategy)."""
    s, subtypes = pd.factorize(frame["subtype"], use_na_sentinel=False)
    d, strategies = pd.factorize(frame["distractor_strategy"], use_na_sentinel=False)
    table = np.array([[is_primary(a, b) for b in strategies] for a in subtypes], dtype=bool)
    return table.reshape(len(subtypes), len(strategies))[s, d]


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
    for name in ("unparsed", "skipped", "error", "judge", "judge_failed"):
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
    clip vs no_clip / silenced on one item; two models on one item within a condition, per format), counted
    per level and clip. The ``'*'`` roll-ups of level (and, for model pairs, of format) are made when combined."""
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
        fm = fm.rename(columns={"format_a": "a", "format_b": "b", "clip_key_a": "clip_key"}).assign(kind="format",
                                                                                                    format="*")
        parts.append(_pair_sums(fm, PAIR_KEYS))
    # clip against no_clip and against silenced, on one item
    clip = c[c["condition"] == "clip"]
    for other in ("no_clip", "silenced"):
        cm = clip.merge(c[c["condition"] == other], on=who + ["item_id"], suffixes=("_a", "_b"))
        if len(cm):
            cm = cm.rename(columns={"clip_key_a": "clip_key"}).assign(kind="condition", condition="*", a="clip", b=other,
                                                                      format="*")
            parts.append(_pair_sums(cm, PAIR_KEYS))
    # two models on one item, within a condition (sides in sorted order of their names; no offline responder)
    who = model_labels(c["responder"], c["model"])
    models = c[pd.notna(who)].assign(who=who[pd.notna(who)])
    if len(models):
        mm = models.merge(models, on=["level", "condition", "item_id"], suffixes=("_a", "_b"))
        mm = mm[mm["who_a"] < mm["who_b"]]
        if len(mm):
            mm = mm.rename(columns={"who_a": "a", "who_b": "b", "format_a": "format", "clip_key_a": "clip_key"})
            parts.append(_pair_sums(mm.assign(kind="model", responder=MODEL_PAIR, model=MODEL_PAIR), PAIR_KEYS))
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
    """The sums behind :func:`...bank.checks.shortcut_rates` (presence oracle), per clip × subtype × strategy."""
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



def judge_vote_partials(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Every judge's answer about the clip's replies the rules could not decide (:func:`..judge_audit.vote_rows`):
    what the agreement between judges and the judge-swap sensitivity are computed from."""
    from ..judge_audit import vote_rows

    return vote_rows(verdicts)[PARTIAL_COLUMNS["judge_vote_partials"]]


def _concat(frames) -> pd.DataFrame:
    frames = [f for f in frames if f is not None and len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def combine(name: str, *parts: pd.DataFrame) -> pd.DataFrame:
    """Partials of several clips (or of several combines) as one partial table: the same rows summed."""
    frame = _concat(parts)
    if not len(frame):
        return _empty(name)
    columns = PARTIAL_COLUMNS[name]
    if name in ("judge_partials", "judge_vote_partials"):
        return frame[columns].reset_index(drop=True)
    counts = {"score_partials": SCORE_COUNTS, "pair_partials": PAIR_COUNTS, "prior_partials": ["n"],
              "presence_partials": ["n", "correct", "absent_give_away", "expected"]}[name]
    keys = [c for c in columns if c not in counts]
    return frame.groupby(keys, sort=True, dropna=False)[counts].sum().reset_index()[columns]



def clip_partials(verdicts: pd.DataFrame, questions: pd.DataFrame, items: pd.DataFrame, *, seed: int = 0
                  ) -> dict[str, pd.DataFrame]:
    """Every partial table of one clip (:data:`PARTIAL_COLUMNS`), from its verdicts, questions and items; ``seed``
    draws the judge audit's sample."""
    return {"score_partials": score_partials(verdicts), "pair_partials": pair_partials(verdicts),
            "prior_partials": prior_partials(questions, items), "presence_partials": presence_partials(questions),
            "judge_partials": judge_partials(verdicts, items, seed=seed), "judge_vote_partials": judge_vote_partials(verdicts)}
