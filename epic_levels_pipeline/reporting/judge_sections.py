"""The report's sections on several judges (``judge_agreement``, ``judge_swap``) and on the caption track's semantic
layer (``caption_scores``' semantic metrics, per clip beside pooled, and the schema gate)."""

from __future__ import annotations

import pandas as pd

from .document import DASH, Document, _frame, fmt

SECTION_JUDGES = "Judges compared: agreement and judge-swap sensitivity"
SECTION_SEMANTIC = "Caption track: semantic layer (aligned pairs, 1–5)"
KIND_TITLES = {"event": "events", "action": "actions", "reference": "references"}


def _who(responder, model) -> str:
    return str(responder) if str(model) in ("", "offline", "nan", "None") else f"{responder}/{model}"


def judges_section(doc: Document, agreement, swap) -> None:
    doc.heading(2, SECTION_JUDGES)
    doc.notes([
        "With several judges in the models file (`judges = [...]`) each is asked about every reply the rules cannot "
        "decide (and every caption pair); the scores use the configured judge's answer, or the majority's.",
        "Agreement: Cohen's κ per pair of judges and Krippendorff's α (nominal; interval for the 1–5 semantic "
        "scores) on the units both answered; a failed call is a missing answer.",
        "Judge swap: each responder/model's score with one judge's answers in place of the verdict's — QA "
        "chance-corrected (every format pooled), captions label F1 and semantic scores — its shift, and the Spearman "
        "ρ of the ranking against the materialized one (NaN under 3 ranked).",
    ])
    a, s = _frame(agreement), _frame(swap)
    if agreement is None and swap is None:
        doc.empty("No judge agreement or swap table was given.")
        return
    notes = sorted({str(n) for n in pd.concat([a.get("note", pd.Series(dtype=object)),
                                               s.get("note", pd.Series(dtype=object))]).dropna() if str(n)})
    measured = a[pd.to_numeric(a.get("n", pd.Series(dtype=float)), errors="coerce").fillna(0) > 0] if len(a) else a
    if not len(measured):
        doc.empty("Judges compared: " + ("; ".join(notes) if notes else "nothing to compare."))
        return
    doc.table(pd.DataFrame([{"track": r["track"], "judges": f"{r['judge_a']} · {r['judge_b']}"
                             if r["judge_a"] != "*" else "all", "n": fmt(r["n"]), "agreement": fmt(r["agreement"]),
                             "Cohen's κ": fmt(r["cohen_kappa"]), "Krippendorff's α": fmt(r["krippendorff_alpha"])}
                            for r in measured.to_dict("records")]), text_columns=2)
    moved = s[(s["judge"] != "verdict") & s["shift"].notna()] if len(s) else s
    if not len(moved):
        return
    summary = moved.groupby(["track", "metric", "condition", "judge"]).agg(
        models=("responder", "size"), largest_shift=("shift", lambda x: x.abs().max()),
        mean_shift=("shift", "mean"), rho=("spearman_rho", "first")).reset_index()
    doc.table(pd.DataFrame([{"track": r["track"], "metric": r["metric"], "condition": r["condition"],
                             "judge": r["judge"], "models": fmt(r["models"]), "mean shift": fmt(r["mean_shift"]),
                             "largest |shift|": fmt(r["largest_shift"]), "Spearman ρ": fmt(r["rho"])}
                            for r in summary.to_dict("records")]), text_columns=4)


def semantic_section(doc: Document, caption_scores) -> None:
    doc.heading(2, SECTION_SEMANTIC)
    doc.notes([
        "On structurally aligned pairs only (greedy matching), a bounded judge sees the reference unit's and the "
        "reply unit's descriptions and scores both directions on a 1–5 scale: recall (what the reference states, "
        "the reply states too) and precision (what the reply states, the reference supports); identical "
        "descriptions score 5 by rule. Mean per clip, then over clips (the paper's way); `pooled` counts every "
        "pair once. The schema gate is the share of replies that parse into the structure.",
    ])
    scores = _frame(caption_scores)
    if caption_scores is None or not len(scores) or "metric" not in scores:
        doc.empty("No caption scores were given.")
        return
    top = scores[(scores["dataset"] == "*") & (scores["matcher"] == "greedy")]
    semantic = top[top["metric"].str.startswith("semantic_")]
    if not len(semantic) or semantic["value"].isna().all():
        doc.empty("No judge is configured: the semantic scores are empty (the structural metrics above are all "
                  "there is).")
    rows = []
    for (responder, model, condition), g in top.groupby(["responder", "model", "condition"], sort=True):
        v = g.set_index("metric")["value"]
        row = {"responder / model": _who(responder, model), "condition": condition,
               "schema gate": fmt(v.get("schema_gate"))}
        for kind, title in KIND_TITLES.items():
            for m, label in (("p", "P"), ("r", "R")):
                clip, pooled = v.get(f"semantic_{kind}_{m}"), v.get(f"semantic_{kind}_{m}_pooled")
                row[f"{title} {label}"] = DASH if pd.isna(clip) else f"{fmt(clip, 2)} ({fmt(pooled, 2)})"
        rows.append(row)
    doc.table(pd.DataFrame(rows), text_columns=2)
    doc.notes(["Each semantic cell: mean per clip (pooled over pairs in brackets)."])
