"""The report's timeline figure of one response: the reference's events and actions above the axis, the response's
below, each matched pair joined. Drawn on a matplotlib ``Figure`` with the Agg canvas (no pyplot, no global
backend change)."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd

_LANES = {("reference", "event"): 3, ("reference", "action"): 2, ("response", "action"): 1, ("response", "event"): 0}
_COLOURS = {"event": "#d95f02", "action": "#1b9e77"}


def timeline_png(alignments: pd.DataFrame, duration_s: float, title: str = "", path: Path | None = None) -> bytes:
    """PNG of one response's greedy alignment (rows of ``caption_alignments`` for one clip × condition ×
    responder × model); also written to ``path`` when given. Returns the PNG bytes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    a = alignments[(alignments["matcher"] == "greedy") & alignments["unit"].isin(["event", "action"])]
    fig = Figure(figsize=(10, 3.2), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    drawn: set[tuple] = set()
    for r in a.itertuples(index=False):
        for side, start, stop, uid in (("reference", r.ref_start_s, r.ref_stop_s, r.ref_id),
                                       ("response", r.resp_start_s, r.resp_stop_s, r.resp_id)):
            if uid is None or pd.isna(start) or (side, r.unit, uid) in drawn:
                continue
            drawn.add((side, r.unit, uid))
            lane = _LANES[(side, r.unit)]
            ax.broken_barh([(start, stop - start)], (lane - 0.35, 0.7), facecolors=_COLOURS[r.unit], alpha=0.55,
                           edgecolors="black", linewidth=0.4)
        if r.ref_id is not None and r.resp_id is not None and not pd.isna(r.ref_start_s):
            ax.plot([(r.ref_start_s + r.ref_stop_s) / 2, (r.resp_start_s + r.resp_stop_s) / 2],
                    [_LANES[("reference", r.unit)] - 0.35, _LANES[("response", r.unit)] + 0.35],
                    color="grey" if r.verdict == "agree" else "red", linewidth=0.8)
    ax.set_yticks([3, 2, 1, 0], ["reference events", "reference actions", "response actions", "response events"])
    ax.tick_params(labelsize=11)
    ax.set_xlim(0, duration_s)
    ax.set_ylim(-0.6, 3.6)
    ax.axhline(1.5, color="black", linewidth=0.6)
    ax.set_xlabel("seconds from the clip start (lines: matched pairs; red: labels do not agree)", fontsize=11)
    if title:
        ax.set_title(title, fontsize=12)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    data = buf.getvalue()
    if path is not None:
        Path(path).write_bytes(data)
    return data
