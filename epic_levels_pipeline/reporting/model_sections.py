"""The report's sections on the models themselves: whether their servers used the media they were sent (first, when
one did not), and what the runs spent."""

from __future__ import annotations

import math

import pandas as pd

from .document import Document, _frame, fmt

SECTION_INTEGRITY = "Media integrity: did each model's server use the audio and video it was sent?"
SECTION_SPEND = "Spend: calls, tokens and cost of the model calls"


def integrity_section(doc: Document, integrity) -> None:
    """A warning section listing the models whose servers ignored audio or video (it leads the report then), or
    one line saying every checked model × clip used both."""
    frame = _frame(integrity)
    if not len(frame):
        return
    flagged = frame[frame["audio_ignored"].fillna(False).astype(bool) | frame["video_ignored"].fillna(False).astype(bool)]
    doc.heading(2, SECTION_INTEGRITY)
    checked = int(frame["audio_ignored"].notna().sum()), int(frame["video_ignored"].notna().sum())
    if not len(flagged):
        doc.para(f"Every model's server used what it was sent: the audio on {checked[0]} model × clip pairs checked, the "
                 f"video on {checked[1]} (the prompt tokens it reported grew with each).", "note")
        return
    doc.para("Some models' servers reported the same prompt tokens for an item with and without its audio (or "
             "video): they ignored it, so their `clip` vs `silenced` (or `no_clip`) comparisons measure nothing. "
             "Their rows are marked `audio_ignored` / `video_ignored` in `responses` and `verdicts`; "
             "`epic-levels run --strict-media` fails such a run.", "warning")
    summary = flagged.groupby(["responder", "model"], sort=True).agg(
        clips=("clip_key", "nunique"), audio=("audio_ignored", lambda x: int(x.fillna(False).astype(bool).sum())),
        video=("video_ignored", lambda x: int(x.fillna(False).astype(bool).sum()))).reset_index()
    doc.table(pd.DataFrame([{"model": r["model"], "provider": r["responder"], "clips": fmt(r["clips"]),
                             "audio ignored (clips)": fmt(r["audio"]), "video ignored (clips)": fmt(r["video"])}
                            for r in summary.to_dict("records")]), text_columns=2)


def spend_section(doc: Document, spend) -> None:
    frame = _frame(spend)
    if not len(frame):
        return
    doc.heading(2, SECTION_SPEND)
    doc.notes(["Summed over every run (`spend` table, `run_id = '*'`; one row per run there too). `calls`: distinct "
               "requests sent; `cached`: requests answered from the call cache, which cost nothing again.",
               "Cost at the pricing table (input and output price per 1M tokens, audio and cached input at the input "
               "price): an assumption, not a bill; unknown for a model without a price (every local server)."])
    total = frame[frame["run_id"] == "*"]
    doc.table(pd.DataFrame([{"model": r["model"], "purpose": r["purpose"], "calls": fmt(r["calls"]),
                             "cached": fmt(r["cached"]), "failed": fmt(r["failed"]),
                             "input tokens": fmt(r["prompt_tokens"]), "output tokens": fmt(r["output_tokens"]),
                             "cost": "unknown" if r["cost_usd"] is None or (isinstance(r["cost_usd"], float)
                                                                             and math.isnan(r["cost_usd"]))
                             else f"${float(r['cost_usd']):,.2f}"}
                            for r in total.to_dict("records")]), text_columns=2)
