"""The report's section on HD-EPIC's VQA benchmark by its authors' protocol (``vqa_official_scores``): the
published table's layout, this run's rows above the authors' published rows (labelled as such), then the
per-type accuracies with their intervals and the two letter rules side by side."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .document import DASH, Document, _frame, fmt, fmt_interval

SECTION_VQA_OFFICIAL = "HD-EPIC VQA by its authors' protocol"

#: The published table's columns, in its order: (column title, category).
PUBLISHED_COLUMNS = (("Recipe", "recipe"), ("Ingredient", "ingredient"), ("Nutrition", "nutrition"),
                     ("Action", "fine_grained"), ("3D", "3d_perception"), ("Motion", "object_motion"),
                     ("Gaze", "gaze"))
PUBLISHED_SOURCE = "HD-EPIC (Perrett et al., CVPR 2025), VQA results per category, % accuracy: hd-epic.github.io"
#: The authors' published rows (figures, %): (model, input, Recipe … Gaze, Avg.).
PUBLISHED = (
    ("Llama 3.2", "blind (language only)", 28.4, 26.8, 26.7, 23.3, 26.6, 24.0, 19.2, 25.0),
    ("Gemini Pro", "blind (language only)", 29.5, 31.2, 23.0, 22.1, 30.5, 25.3, 22.7, 26.3),
    ("VideoLlama 2", "video-language", 25.0, 26.7, 30.0, 27.2, 24.1, 24.5, 23.6, 25.9),
    ("LongVA", "video-language", 22.0, 30.0, 31.0, 28.9, 30.4, 24.4, 24.1, 27.3),
    ("Gemini Pro", "video-language", 53.4, 44.0, 35.0, 39.6, 31.6, 23.0, 32.8, 37.0),
)
PUBLISHED_CHANCE = 20.0  # 5-way multiple choice


def published_layout(scores: pd.DataFrame, *, digits: int = 1) -> pd.DataFrame:
    """The published table's layout: one row per responder/model × condition (``no_clip`` is the paper's
    "blind"), the categories' accuracies in %, ``Avg.`` (the headline) and ``Pooled`` beside it; then the authors'
    own rows (:data:`PUBLISHED`), labelled ``published``. A category not imported is empty."""
    columns = ["source", "model", "input"] + [title for title, _ in PUBLISHED_COLUMNS] + ["Avg.", "Pooled", "n"]
    rows = []
    if len(scores):
        for (responder, model, condition), g in scores.groupby(["responder", "model", "condition"], sort=True):
            cats = g[g["aggregate"] == "category"].set_index("category")["accuracy"]
            head = g.loc[g["aggregate"] == "headline", "accuracy"]
            pool = g[g["aggregate"] == "pooled"]
            who = responder if str(model) in ("", "offline") else f"{responder}/{model}"
            rows.append({"source": "this run", "model": who,
                         "input": {"no_clip": "blind (language only)", "clip": "video-language"}.get(condition, condition),
                         **{title: round(100 * cats[c], digits) if c in cats else np.nan for title, c in PUBLISHED_COLUMNS},
                         "Avg.": round(100 * head.iloc[0], digits) if len(head) else np.nan,
                         "Pooled": round(100 * pool["accuracy"].iloc[0], digits) if len(pool) else np.nan,
                         "n": int(pool["n"].iloc[0]) if len(pool) else 0})
    for model, kind, *values in PUBLISHED:
        rows.append({"source": "published", "model": model, "input": kind,
                     **dict(zip([t for t, _ in PUBLISHED_COLUMNS] + ["Avg."], values)), "Pooled": np.nan, "n": np.nan})
    rows.append({"source": "published", "model": "chance", "input": "5-way",
                 **{t: PUBLISHED_CHANCE for t, _ in PUBLISHED_COLUMNS}, "Avg.": PUBLISHED_CHANCE, "Pooled": np.nan,
                 "n": np.nan})
    return pd.DataFrame(rows, columns=columns)


def _pct(x) -> str:
    return DASH if pd.isna(x) else f"{float(x):.1f}"


def vqa_official_section(doc: Document, table) -> None:
    doc.heading(2, SECTION_VQA_OFFICIAL)
    doc.notes([
        "Each imported question asked as its authors ask it (the question, its five choices, a letter reply) and "
        "read by their rule: the first A–Z character of the reply as written; unreadable replies and failed or "
        "blocked calls count wrong. Questions not asked (no media for the condition) are left out.",
        "A category is the unweighted mean of its question types; `Avg.` the unweighted mean of the categories, as "
        "the paper computes both. `Pooled` counts every question once (neither published number). `blind` rows "
        f"are text only (`no_clip`). Chance is {PUBLISHED_CHANCE:g} %.",
        f"Rows marked `published` are the authors' figures ({PUBLISHED_SOURCE}), not results of this run; they "
        "cover all 30 question types, this run the imported ones (see the notes below).",
        "The project's own chance-corrected formats of the same questions are in the main table (dataset "
        "`hd_epic_vqa`, format `official_mcq` among them).",
    ])
    frame = _frame(table)
    if table is None or not len(frame):
        doc.empty("No vqa_official_scores: no HD-EPIC VQA files were imported (or the table is not materialized).")
        return
    layout = published_layout(frame)
    cells = layout.copy()
    for c in layout.columns[3:]:
        cells[c] = [(_pct(v) if c != "n" else (DASH if pd.isna(v) else str(int(v)))) for v in layout[c]]
    doc.table(cells, text_columns=3)
    notes = sorted({str(n) for n in frame.loc[frame["aggregate"].isin(["category", "headline"]), "note"] if str(n)})
    if notes:
        doc.notes(notes)
    doc.heading(3, "Per question type (accuracy [95 % interval over videos]; lmms-eval's reading beside it)")
    rows = []
    for r in frame[frame["aggregate"] == "type"].to_dict("records"):
        who = r["responder"] if str(r["model"]) in ("", "offline") else f"{r['responder']}/{r['model']}"
        rows.append({"responder / model": who, "condition": r["condition"], "question type": r["question_type"],
                     "n": fmt(r["n"]), "accuracy": fmt_interval(r["accuracy"], r["ci_low"], r["ci_high"]),
                     "unreadable": fmt(r["n_unreadable"]), "failed": fmt(r["n_failed"]),
                     "lmms-eval reading": fmt(r["accuracy_lmms"]), "unreadable (lmms)": fmt(r["n_unreadable_lmms"])})
    doc.table(pd.DataFrame(rows), text_columns=3)
