"""The report's audit sections: the shortcut audit, 4b over-marking, how verdicts were decided, the judge
audit and the caption track."""

from __future__ import annotations

import pandas as pd

from .document import (DASH, LIU_RANGE, SECTION_CAPTIONS, SECTION_COUNTS, SECTION_JUDGE_AUDIT, SECTION_OVER_MARKING,
                       SECTION_SHORTCUT, Document, _frame, _has, _label, _missing, _pool, _slug, fmt, fmt_pct)


# -- shortcut audit -------------------------------------------------------------------------------------

def _shortcut_section(doc: Document, audit: pd.DataFrame) -> None:
    doc.heading(2, SECTION_SHORTCUT)
    doc.notes([
        "Presence oracle (no model): picks the only option present in the clip (else the only absent one, else "
        "guesses). Its rate far above chance (0.25) means the options' presence gives the key away: a model can "
        "score without the reasoning the level asks for.",
        "`singles_out_key`: share of questions where presence alone singles out the key; "
        "`only_absent_give_away`: share where the key is the only option absent from the clip.",
        "Blind gap = multiple-choice accuracy without the clip − chance (above 0: answerable from text priors). "
        "Silenced gap = accuracy with sound − accuracy silenced (above 0: the sound helped).",
    ])
    keys = ["dataset", "subtype", "level", "distractor_strategy"]
    if not _has(audit, keys + ["presence_oracle_rate", "chance"]):
        doc.empty("The shortcut_audit table is empty or missing.")
        return
    doc.heading(3, "Presence oracle vs chance (per subtype × distractor strategy)")
    presence = audit.drop_duplicates(keys).sort_values(["dataset", "level", "subtype", "distractor_strategy"])
    rows = []
    for r in presence.to_dict("records"):
        rows.append({"dataset": r["dataset"], "level": r["level"], "subtype": r["subtype"],
                     "strategy": r["distractor_strategy"], "n": fmt(r.get("n")),
                     "presence oracle": fmt(r["presence_oracle_rate"]), "chance": fmt(r["chance"]),
                     "oracle − chance": fmt(r["presence_oracle_rate"] - r["chance"]),
                     "singles out key": fmt(r.get("singles_out_key")),
                     "only absent gives away": fmt(r.get("only_absent_give_away"))})
    doc.table(pd.DataFrame(rows), text_columns=4)
    doc.heading(3, "Blind and silenced gaps (multiple choice)")
    if not _has(audit, ["responder", "model"]) or audit["responder"].isna().all():
        doc.empty("No responder verdicts in the shortcut audit: no gaps.")
        return
    for (responder, model), g in audit.dropna(subset=["responder"]).groupby(["responder", "model"], sort=True):
        g = g.sort_values(["dataset", "level", "subtype", "distractor_strategy"])
        rows = [{"dataset": r["dataset"], "level": r["level"], "subtype": r["subtype"],
                 "strategy": r["distractor_strategy"], "acc clip": fmt(r.get("accuracy_clip")),
                 "acc no_clip": fmt(r.get("accuracy_no_clip")), "acc silenced": fmt(r.get("accuracy_silenced")),
                 "blind gap": fmt(r.get("blind_gap")), "silenced gap": fmt(r.get("silenced_gap"))}
                for r in g.to_dict("records")]
        doc.para(_label(responder, model) + ":")
        doc.table(pd.DataFrame(rows), text_columns=4)


# -- over-marking ---------------------------------------------------------------------------------------

def _over_marking_section(doc: Document, over: pd.DataFrame) -> None:
    doc.heading(2, SECTION_OVER_MARKING)
    low, high = LIU_RANGE
    doc.notes([
        "Among wrong option-judgement (4b) answers that parsed, the share marking more than one option true. "
        f"Liu et al. 2025 report {100 * low:.0f}–{100 * high:.0f} % for the models they tested: a high share means "
        "errors come from accepting distractors, not from rejecting the key.",
        "For the offline reference responders the share reflects how each was built (chance marks options at "
        "random), not model behaviour; the comparison is meant for model responders.",
    ])
    if not _has(over, ["responder", "model", "condition", "n_wrong", "share"]):
        doc.empty("The over_marking table is empty or missing.")
        return
    rows = []
    for r in over.sort_values(["responder", "model", "condition"]).to_dict("records"):
        share = r["share"]
        if _missing(share) or not r["n_wrong"]:
            where = "no wrong answers"
        elif share < low:
            where = "below"
        elif share > high:
            where = "above"
        else:
            where = "within"
        rows.append({"responder / model": _label(r["responder"], r["model"]), "condition": r["condition"],
                     "wrong": fmt(r["n_wrong"]), "over-marked": fmt(r.get("n_wrong_over_marked")),
                     "share": fmt_pct(share), "Liu et al. 2025": f"{100 * low:.0f}–{100 * high:.0f} %",
                     "vs Liu range": where})
    doc.table(pd.DataFrame(rows), text_columns=2)


# -- verdict counts -------------------------------------------------------------------------------------

COUNT_KINDS = ("rule", "judge", "unparsed", "undecided", "skipped", "error")


def verdict_counts(verdicts: pd.DataFrame | None, scores: pd.DataFrame | None = None) -> tuple[pd.DataFrame, str]:
    """(counts per responder/model × condition × scored_by, source). From the verdicts when given; else from the
    scores' all-pooled rows (``rule`` = n − judge − unparsed). Empty frame and source '' when neither has data."""
    v = _frame(verdicts)
    if _has(v, ["responder", "model", "condition", "scored_by"]):
        counts = v.groupby(["responder", "model", "condition", "scored_by"]).size().unstack("scored_by", fill_value=0)
        counts = counts.reindex(columns=list(COUNT_KINDS) + sorted(set(counts.columns) - set(COUNT_KINDS)),
                                fill_value=0).reset_index()
        return counts, "verdicts"
    s = _frame(scores)
    needed = {"responder", "model", "condition", "n", "n_judge", "n_unparsed", "n_undecided", "n_skipped", "n_error"}
    if not _has(s, needed):
        return pd.DataFrame(), ""
    top = s
    for column in ("dataset", "level", "subtype", "format"):
        top = _pool(top, column)
    if not len(top):
        return pd.DataFrame(), ""
    out = top[["responder", "model", "condition"]].copy()
    out["rule"] = top["n"] - top["n_judge"] - top["n_unparsed"]
    for kind in ("judge", "unparsed", "undecided", "skipped", "error"):
        out[kind] = top[f"n_{kind}"]
    return out.reset_index(drop=True), "scores"


def _counts_section(doc: Document, verdicts: pd.DataFrame, scores: pd.DataFrame) -> None:
    doc.heading(2, SECTION_COUNTS)
    doc.notes([
        "`rule`: decided by the format's parser (an explicit \"cannot tell\" is a rule verdict: wrong). `judge`: an "
        "open reply the rules could not decide, decided by the judge (it saw only the question, the reply and the "
        "shuffled candidates). `unparsed`: broke the output format, counted wrong.",
        "`undecided`: the rules could not decide and no judge decided; left out of `accuracy`, counted as wrong in "
        "`accuracy_strict`. `skipped` (no media) and `error` (failed call) are left out of both.",
    ])
    counts, source = verdict_counts(verdicts, scores)
    if not len(counts):
        doc.empty("No verdicts and no scores: nothing to count.")
        return
    if source == "scores":
        doc.para("Counted from the scores table (no verdicts given).", "note")
    kinds = [c for c in counts.columns if c not in ("responder", "model", "condition")]
    rows = []
    for r in counts.to_dict("records"):
        total = sum(int(r[k]) for k in kinds)
        row = {"responder / model": _label(r["responder"], r["model"]), "condition": r["condition"]}
        row.update({k: fmt(int(r[k])) for k in kinds})
        row["total"] = fmt(total)
        row["undecided share"] = fmt_pct(int(r.get("undecided", 0)) / total) if total else DASH
        rows.append(row)
    doc.table(pd.DataFrame(rows), text_columns=2)


# -- judge audit ----------------------------------------------------------------------------------------

def _judge_audit_section(doc: Document, audit) -> None:
    doc.heading(2, SECTION_JUDGE_AUDIT)
    doc.notes([
        "The judge is asked about a seeded sample of open replies the RULES already decided, twice, under two "
        "candidate orders that differ at every position.",
        "`judge_rule_agreement`: share where the judge picks the option the rules read (first order). "
        "`judge_self_agreement`: share where both orders give the same option — a judge that picks by position "
        "disagrees with itself. `judge_none_rate`: share of answered calls saying none. `judge_errors`: failed calls.",
    ])
    a = _frame(audit)
    if audit is None:
        doc.empty("No judge audit was given.")
        return
    if not len(a):
        doc.empty("The judge audit is empty.")
        return
    measured = a[pd.to_numeric(a.get("n", pd.Series(0, index=a.index)), errors="coerce").fillna(0) > 0]
    notes = [str(x) for x in a.get("note", pd.Series(dtype=object)).dropna().unique() if str(x)]
    if not len(measured):
        doc.empty("Judge audit: " + ("; ".join(notes) if notes else "no reply was audited."))
        return
    own = sorted({str(r.get("judge_model")) for r in measured.to_dict("records") if r.get("self_judged") in (True, 1)})
    if own:
        doc.notes([f"Self-judged: {', '.join(own)} judged its own open replies (asked for with --judge self or "
                   "--allow-self-judge); those verdicts carry `self_judged` and each score row counts them in "
                   "`n_self_judged`."])
    rows = []
    for r in measured.to_dict("records"):
        rows.append({"responder / model": _label(r.get("responder"), r.get("model")), "n": fmt(r.get("n")),
                     "judge–rule agreement": fmt(r.get("judge_rule_agreement")),
                     "self-agreement (two orders)": fmt(r.get("judge_self_agreement")),
                     "none rate": fmt(r.get("judge_none_rate")), "errors": fmt(r.get("judge_errors")),
                     "note": str(r.get("note") or "")})
    doc.table(pd.DataFrame(rows), text_columns=1)


# -- caption track --------------------------------------------------------------------------------------

CAPTION_SAMPLE_RESPONDER = "jitter_1s"  # offline stand-in for a model when none ran: its errors are visible


def _caption_section(doc: Document, caption_scores, caption_alignments) -> None:
    from ..captions.figure import timeline_png
    from ..captions.track import main_table as caption_main_table

    doc.heading(2, SECTION_CAPTIONS)
    doc.notes([
        "Structured captions (references, sound events, actions, links) scored against the reference structure "
        "computed from the annotations: one-to-one greedy matching by tIoU (events ≥ 0.20, actions ≥ 0.30), "
        "labels by rules, a judge only for pairs the rules cannot decide.",
        "Table `caption_scores`, greedy, both datasets: F1 of temporal matches (`event_f1`, `action_f1`, "
        "`reference_f1`), of matches whose labels also agree (`*_label_f1`), of event→action links (`evsa_f1`), "
        "`ccc` (HD-EPIC: one object keeps one reference id) and the share of unparsable replies "
        "(`parse_failure`, scored 0 on every metric).",
    ])
    scores = _frame(caption_scores)
    if caption_scores is None or not len(scores):
        doc.empty("No caption scores were given (the caption track has not been materialized).")
        return
    table = caption_main_table(scores)
    doc.table(table.map(lambda v: fmt(v) if isinstance(v, float) else v), text_columns=3)
    alignments = _frame(caption_alignments)
    if caption_alignments is None or not len(alignments):
        doc.empty("No caption alignments were given: no timeline figures.")
        return
    clip_rows = alignments[(alignments["condition"] == "clip") & (alignments["matcher"] == "greedy")]
    models = sorted(set(clip_rows.loc[clip_rows["model"].fillna("") != "", "responder"]))
    responder = models[0] if models else CAPTION_SAMPLE_RESPONDER
    shown = clip_rows[clip_rows["responder"] == responder]
    samples = [sorted(g)[0] for _, g in shown.groupby("dataset")["clip_key"]]
    if not samples:
        doc.empty(f"No `{responder}` captions under `clip`: no timeline figures.")
        return
    doc.para(f"Timelines of sample clips (`{responder}` under `clip`): reference events and actions above the axis, "
             "the caption's below, matched pairs joined.")
    from ..annotations.clips import Clip

    for key in samples:
        rows = shown[shown["clip_key"] == key]
        first_model = rows["model"].fillna("").iloc[0]
        rows = rows[rows["model"].fillna("") == first_model]
        png = timeline_png(rows, Clip.from_key(key).duration_s, title=f"{key} — {_label(responder, first_model) if first_model else responder}")
        doc.image(f"caption_timeline_{_slug(key)}.png", png, f"caption timeline of {key}")
