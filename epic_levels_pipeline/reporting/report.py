"""The human report: Markdown and a self-contained HTML page built from the scored tables.

``build_report`` turns the tables of :mod:`tables` (and optionally the verdicts and the judge audit) into a
:class:`Report`; ``write_report`` writes ``report.md``, ``report.html`` and the plots as PNG files under
``report_figures/`` (for the Markdown; the HTML embeds the same PNGs as base64 ``data:`` URIs and needs no
other file, script or network); ``report_from_warehouse`` does both for a project's data folder.

Contents, in order: the leaderboard (every model and offline reference × level, all formats pooled,
chance-corrected with its clip-clustered interval, under ``clip``, ``no_clip`` and ``silenced``: one table and
one figure); how to read the tables; the main table (chance-corrected accuracy by level × format, one
table per responder/model, rows condition × level, each cell ``value [95 % interval] n=…``); plots (a)
chance-corrected accuracy by level and format under ``clip`` and (b) clip vs no_clip vs silenced per format;
paired comparisons (conditions, then format pairs); the shortcut audit (presence oracle vs chance, blind and
silenced gaps); 4b over-marking next to Liu et al. 2025's 63–86 %; how verdicts were decided (rule, judge,
unparsed, undecided, skipped, error); the judge audit; the caption track (``caption_scores`` main metrics per
responder × condition, and a timeline figure per sample clip, one per dataset).

Decisions and edge cases:

- The main table uses the scores' roll-up rows pooled over dataset and subtype (``'*'``); a scores table
  without them but with a single dataset/subtype uses that one. Level ``*`` is "all levels" and format ``*``
  "all formats". Conditions are never pooled (that is how :func:`tables.scores` stores them).
- Cells of groups with undecided rows also give the strict value (undecided counted as wrong), when the
  scores table has ``chance_corrected_strict`` (tables materialized before it existed lack it: then the
  report says so instead of failing).
- Every table may be None, empty or missing columns: its section then says so; nothing raises. A report
  from no data at all is a valid report that says every table is empty.
- Format pairs are shown pooled over levels (``level == '*'``); condition pairs for every level. McNemar
  p-values are the clip-clustered ones (``mcnemar_p``; a clip counts once however many pairs it holds) and
  are not adjusted for the number of comparisons (both stated in the notes).
- Plots are drawn with matplotlib's Agg canvas on ``Figure`` objects (no pyplot, no global backend change),
  so building a report is safe inside a server process. Bars with no value are left out; whiskers are the
  interval (clipped to be non-negative where a point estimate lies outside its percentile interval).
- Output is deterministic for the same tables (no timestamps).
"""

from __future__ import annotations

import base64
import html
import io
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..settings import Paths

SECTION_LEADERBOARD = "Leaderboard: models and offline references × level"
SECTION_HOW_TO_READ = "How to read this report"
SECTION_MAIN = "Main table: chance-corrected accuracy by level × format"
SECTION_PLOTS = "Plots"
SECTION_PAIRED = "Paired comparisons"
SECTION_SHORTCUT = "Shortcut audit"
SECTION_OVER_MARKING = "4b over-marking"
SECTION_COUNTS = "Verdicts: rule, judge, unparsed, undecided"
SECTION_JUDGE_AUDIT = "Judge audit"
SECTION_CAPTIONS = "Caption track"
SECTIONS = (SECTION_LEADERBOARD, SECTION_HOW_TO_READ, SECTION_MAIN, SECTION_PLOTS, SECTION_PAIRED, SECTION_SHORTCUT,
            SECTION_OVER_MARKING, SECTION_COUNTS, SECTION_JUDGE_AUDIT, SECTION_CAPTIONS)

FORMAT_ORDER = ("yes_no", "multiple_choice", "statements", "option_judgement", "open", "open_with_reason")
CONDITION_ORDER = ("clip", "no_clip", "silenced")
LIU_RANGE = (0.63, 0.86)
FIGURE_DIR = "report_figures"
DASH = "—"


@dataclass
class Report:
    """``markdown`` references plots as ``report_figures/<name>``; ``html`` embeds them; ``figures`` maps each
    file name to its PNG bytes; ``main_table`` is the long-form table behind the main section."""

    markdown: str
    html: str
    main_table: pd.DataFrame
    figures: dict[str, bytes] = field(default_factory=dict)


# -- formatting -------------------------------------------------------------------------------------------

def _missing(x) -> bool:
    try:
        return x is None or x is pd.NA or bool(pd.isna(x))
    except (TypeError, ValueError):
        return False


def fmt(x, digits: int = 3) -> str:
    """A number with ``digits`` decimals; missing → ``—``."""
    if _missing(x):
        return DASH
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    return f"{float(x):.{digits}f}"


def fmt_pct(x) -> str:
    return DASH if _missing(x) else f"{100 * float(x):.1f} %"


def fmt_p(p) -> str:
    if _missing(p):
        return DASH
    return "<0.001" if float(p) < 0.001 else f"{float(p):.3f}"


def fmt_interval(value, low, high, digits: int = 3) -> str:
    if _missing(value):
        return DASH
    if _missing(low) or _missing(high):
        return fmt(value, digits)
    return f"{fmt(value, digits)} [{fmt(low, digits)}, {fmt(high, digits)}]"


def _label(responder, model) -> str:
    return f"{responder} / {model}"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", str(text)).strip("-").lower() or "x"


def _ordered(values, order) -> list:
    values = [v for v in pd.unique(pd.Series(list(values), dtype=object)) if not _missing(v)]
    star = [v for v in values if v == "*"]
    known = [v for v in order if v in values]
    rest = sorted(str(v) for v in values if v not in order and v != "*")
    return known + rest + star


def _level_name(level) -> str:
    return "all levels" if level == "*" else str(level)


def _format_name(fmt_name) -> str:
    return "all formats" if fmt_name == "*" else str(fmt_name)


def _frame(x) -> pd.DataFrame:
    return x if isinstance(x, pd.DataFrame) else pd.DataFrame()


def _has(frame: pd.DataFrame, columns) -> bool:
    return len(frame) > 0 and set(columns) <= set(frame.columns)


# -- the document: blocks rendered to Markdown and HTML at once ---------------------------------------------

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1200px;
       padding: 0 1em; color: #222; line-height: 1.45; }
h1 { border-bottom: 2px solid #444; padding-bottom: .2em; }
h2 { border-bottom: 1px solid #bbb; margin-top: 2em; }
.scroll { overflow-x: auto; margin: .6em 0 1.2em 0; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: right; white-space: nowrap; }
th { background: #f1f1f1; }
td.text, th.text { text-align: left; }
p.note, ul.note { color: #444; font-size: 0.92em; }
p.empty { color: #a33; font-style: italic; }
img { max-width: 100%; border: 1px solid #ddd; margin: .4em 0 1em 0; }
code { background: #f4f4f4; padding: 0 3px; }
"""


class _Doc:
    def __init__(self) -> None:
        self.md: list[str] = []
        self.html: list[str] = []
        self.figures: dict[str, bytes] = {}

    @staticmethod
    def _inline(text: str) -> str:
        escaped = html.escape(text)
        return re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped)

    def heading(self, level: int, text: str) -> None:
        self.md.append(f"{'#' * level} {text}\n")
        self.html.append(f"<h{level} id=\"{_slug(text)}\">{html.escape(text)}</h{level}>")

    def para(self, text: str, kind: str = "") -> None:
        self.md.append(("*" + text + "*" if kind == "empty" else text) + "\n")
        cls = f' class="{kind}"' if kind else ""
        self.html.append(f"<p{cls}>{self._inline(text)}</p>")

    def empty(self, text: str) -> None:
        self.para(text, "empty")

    def notes(self, items: list[str]) -> None:
        self.md.append("\n".join(f"- {t}" for t in items) + "\n")
        self.html.append('<ul class="note">' + "".join(f"<li>{self._inline(t)}</li>" for t in items) + "</ul>")

    def table(self, frame: pd.DataFrame, text_columns: int = 1) -> None:
        """``frame`` of already formatted cells; the first ``text_columns`` columns are left-aligned."""
        cols = [str(c) for c in frame.columns]

        def md_cell(v) -> str:
            return str(v).replace("|", "\\|").replace("\n", " ")

        lines = ["| " + " | ".join(md_cell(c) for c in cols) + " |",
                 "|" + "|".join(":---" if i < text_columns else "---:" for i in range(len(cols))) + "|"]
        for row in frame.itertuples(index=False):
            lines.append("| " + " | ".join(md_cell(v) for v in row) + " |")
        self.md.append("\n".join(lines) + "\n")

        def cls(i: int) -> str:
            return ' class="text"' if i < text_columns else ""

        head = "".join(f"<th{cls(i)}>{html.escape(c)}</th>" for i, c in enumerate(cols))
        body = "".join("<tr>" + "".join(f"<td{cls(i)}>{html.escape(str(v))}</td>" for i, v in enumerate(row))
                       + "</tr>" for row in frame.itertuples(index=False))
        self.html.append(f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>')

    def image(self, name: str, png: bytes, alt: str) -> None:
        self.figures[name] = png
        self.md.append(f"![{alt}]({FIGURE_DIR}/{name})\n")
        data = base64.b64encode(png).decode("ascii")
        self.html.append(f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt)}">')

    def render(self, title: str) -> tuple[str, str]:
        markdown = "\n".join(self.md)
        page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>\n"
                + "\n".join(self.html) + "\n</body></html>\n")
        return markdown, page


# -- main table -----------------------------------------------------------------------------------------

MAIN_COLUMNS = ["responder", "model", "condition", "level", "format", "n", "n_clips", "accuracy", "chance",
                "chance_corrected", "ci_low", "ci_high", "accuracy_strict", "chance_corrected_strict",
                "n_undecided", "n_judge", "n_unparsed"]


def _pool(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """Rows pooled over ``column`` (its ``'*'`` roll-up), or all rows when it has a single value."""
    if column not in frame.columns or not len(frame):
        return frame
    if (frame[column] == "*").any():
        return frame[frame[column] == "*"]
    return frame if frame[column].nunique(dropna=False) == 1 else frame.iloc[0:0]


def main_table(scores: pd.DataFrame | None) -> pd.DataFrame:
    """Long form: one row per responder/model × condition × level × format (``'*'`` = pooled), pooled over
    dataset and subtype. Columns missing in ``scores`` come out NaN."""
    s = _frame(scores)
    needed = {"responder", "model", "condition", "level", "format"}
    if not _has(s, needed):
        return pd.DataFrame(columns=MAIN_COLUMNS)
    s = _pool(_pool(s, "dataset"), "subtype")
    out = s.reindex(columns=MAIN_COLUMNS).copy()
    keys = ["responder", "model", "condition", "level", "format"]
    out = out.drop_duplicates(keys)
    cond_rank = {c: i for i, c in enumerate(CONDITION_ORDER)}
    fmt_rank = {f: i for i, f in enumerate(FORMAT_ORDER)}
    out["_c"] = out["condition"].map(lambda c: cond_rank.get(c, len(cond_rank)))
    out["_l"] = out["level"].map(lambda lv: (1, "") if lv == "*" else (0, str(lv)))
    out["_f"] = out["format"].map(lambda f: len(fmt_rank) + 1 if f == "*" else fmt_rank.get(f, len(fmt_rank)))
    out = out.sort_values(["responder", "model", "_c", "condition", "_l", "_f", "format"], kind="stable")
    return out.drop(columns=["_c", "_l", "_f"]).reset_index(drop=True)


def _cell(row) -> str:
    n = 0 if _missing(row["n"]) else int(row["n"])
    text = f"{DASH} n=0" if n == 0 else \
        f"{fmt_interval(row['chance_corrected'], row['ci_low'], row['ci_high'])} n={n}"
    undecided = row.get("n_undecided")
    if not _missing(undecided) and int(undecided) > 0:
        strict = row.get("chance_corrected_strict")
        text += f"; strict {fmt(strict)} ({int(undecided)} undecided)" if not _missing(strict) else \
            f"; {int(undecided)} undecided"
    return text


def _main_section(doc: _Doc, table: pd.DataFrame, scores: pd.DataFrame) -> None:
    doc.heading(2, SECTION_MAIN)
    doc.notes([
        "Each cell: chance-corrected accuracy `(acc − chance)/(1 − chance)` [95 % bootstrap interval, resampled "
        "by clip] and n (decided verdicts). 0 = chance, 1 = perfect, below 0 = worse than chance.",
        "Rows are condition × level; `all levels` / `all formats` pool every level / format. Datasets and "
        "subtypes are pooled.",
        "`strict` (shown where a group has undecided rows): undecided open replies counted as wrong — a lower "
        "bound; the first value leaves them out, which favours guessers.",
    ])
    if not len(table):
        doc.empty("The scores table is empty or missing: there is no main table.")
        return
    if "chance_corrected_strict" not in scores.columns:
        doc.para("This scores table has no strict columns (materialized before they existed): undecided rows "
                 "are only counted, not scored strictly.", "note")
    for (responder, model), g in table.groupby(["responder", "model"], sort=False):
        doc.heading(3, _label(responder, model))
        formats = _ordered(g["format"], FORMAT_ORDER)
        rows = []
        for condition in _ordered(g["condition"], CONDITION_ORDER):
            gc = g[g["condition"] == condition]
            for level in _ordered(gc["level"], ()):
                gl = gc[gc["level"] == level].set_index("format")
                cells = {"condition": condition, "level": _level_name(level)}
                for f in formats:
                    cells[_format_name(f)] = _cell(gl.loc[f]) if f in gl.index else DASH
                rows.append(cells)
        doc.table(pd.DataFrame(rows), text_columns=2)
        clips = g["n_clips"].dropna()
        if len(clips) and (clips == 1).any():
            doc.para("Groups from a single clip have row-resampled intervals (no clip variation to resample).",
                     "note")


# -- plots ----------------------------------------------------------------------------------------------

def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    return buf.getvalue()


def _bars(ax, groups: list[str], series: list[str], values: dict, title: str, ylabel: str, legend: bool = True) -> None:
    """Grouped bars on ``ax``: ``values[(group, series)] = (value, low, high)``; missing values are not drawn."""
    width = 0.8 / max(1, len(series))
    colors = [f"C{i % 10}" for i in range(len(series))]
    x = np.arange(len(groups))
    lows, highs = [0.0], [1.0]
    for j, name in enumerate(series):
        xs, heights, err_lo, err_hi = [], [], [], []
        for i, group in enumerate(groups):
            value, low, high = values.get((group, name), (np.nan, np.nan, np.nan))
            if _missing(value):
                continue
            xs.append(x[i] - 0.4 + width * (j + 0.5))
            heights.append(float(value))
            err_lo.append(max(0.0, float(value) - float(low)) if not _missing(low) else 0.0)
            err_hi.append(max(0.0, float(high) - float(value)) if not _missing(high) else 0.0)
            lows.append(float(value) - err_lo[-1])
            highs.append(float(value) + err_hi[-1])
        if xs:
            ax.bar(xs, heights, width=width * 0.95, color=colors[j], label=name,
                   yerr=np.array([err_lo, err_hi]), capsize=2, error_kw={"elinewidth": 0.8, "ecolor": "#333"})
    ax.axhline(0, color="#555", linewidth=0.8)
    ax.set_xticks(x)
    ax.set_xticklabels(groups, rotation=0 if len(groups) < 7 else 30, ha="center" if len(groups) < 7 else "right")
    ax.set_ylim(min(-0.1, min(lows) - 0.05), max(1.05, max(highs) + 0.05))
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    if series and legend:
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)


def grouped_bars(groups: list[str], series: list[str], values: dict, title: str, ylabel: str) -> bytes:
    """PNG of grouped bars: ``values[(group, series)] = (value, low, high)``; missing values are not drawn."""
    fig = _figure(max(6.0, 1.1 * len(groups) * max(1, len(series)) * 0.45 + 2), 4.2)
    _bars(fig.add_subplot(1, 1, 1), groups, series, values, title, ylabel)
    return _png(fig)


def bar_panels(panels: list[tuple[str, dict]], groups: list[str], series: list[str], ylabel: str) -> bytes:
    """PNG of one grouped-bar panel per ``(title, values)`` side by side, sharing groups, series and a legend."""
    width = max(4.0, 0.35 * len(groups) * max(1, len(series)) + 1.5)
    fig = _figure(width * len(panels) + 2, 4.2)
    for i, (title, values) in enumerate(panels, 1):
        _bars(fig.add_subplot(1, len(panels), i), groups, series, values, title, ylabel if i == 1 else "",
              legend=i == len(panels))
    return _png(fig)


# -- leaderboard ----------------------------------------------------------------------------------------

def leaderboard_table(table: pd.DataFrame) -> pd.DataFrame:
    """From the main table's long form: all formats pooled (``format == '*'``), one row per responder/model ×
    condition × level."""
    if not len(table) or not (table["format"] == "*").any():
        return table.iloc[0:0]
    return table[table["format"] == "*"].reset_index(drop=True)


def _leaderboard_section(doc: _Doc, table: pd.DataFrame) -> None:
    doc.heading(2, SECTION_LEADERBOARD)
    doc.notes(["Chance-corrected accuracy over all formats [95 % bootstrap interval, resampled by clip] per "
               "responder/model (models as `provider / model`, and the offline references `oracle`, `chance`, "
               "`presence`, `blind`) × level, under each condition; n = decided verdicts.",
               "The figure shows the same values, one panel per condition; whiskers are the intervals. Per-format "
               "detail follows in the main table."])
    board = leaderboard_table(table)
    if not len(board):
        doc.empty("No scores pooled over formats: no leaderboard.")
        return
    labels = {key: _label(*key) for key in board[["responder", "model"]].drop_duplicates().itertuples(index=False)}
    levels = _ordered(board["level"], ())
    conditions = _ordered(board["condition"], CONDITION_ORDER)
    rows = []
    for (responder, model), g in board.groupby(["responder", "model"], sort=False):
        for condition in conditions:
            gc = g[g["condition"] == condition].set_index("level")
            if not len(gc):
                continue
            cells = {"responder / model": labels[(responder, model)], "condition": condition}
            for level in levels:
                cells[_level_name(level)] = _cell(gc.loc[level]) if level in gc.index else DASH
            rows.append(cells)
    doc.table(pd.DataFrame(rows), text_columns=2)
    series = list(labels.values())
    panels = []
    for condition in conditions:
        gc = board[board["condition"] == condition]
        values = {(_level_name(r.level), labels[(r.responder, r.model)]): (r.chance_corrected, r.ci_low, r.ci_high)
                  for r in gc.itertuples(index=False)}
        panels.append((condition, values))
    png = bar_panels(panels, [_level_name(lv) for lv in levels], series, "chance-corrected accuracy")
    doc.image("leaderboard.png", png, "Leaderboard: chance-corrected accuracy by level per responder/model, "
                                      "under clip, no_clip and silenced")


def _plots_section(doc: _Doc, table: pd.DataFrame) -> None:
    doc.heading(2, SECTION_PLOTS)
    doc.notes(["(a) chance-corrected accuracy by level and format under `clip`, whiskers = 95 % clip-bootstrap "
               "interval; 0 is chance.",
               "(b) the same pooled over levels, per format (and all formats), under clip, no_clip and silenced: "
               "no_clip far above 0 means the question is answerable without the clip; clip above silenced means "
               "the sound helped."])
    if not len(table):
        doc.empty("No scores: no plots.")
        return
    for (responder, model), g in table.groupby(["responder", "model"], sort=False):
        label = _label(responder, model)
        doc.heading(3, label)
        slug = _slug(f"{responder}-{model}")
        clip = g[(g["condition"] == "clip") & (g["format"] != "*")]
        if len(clip):
            levels = _ordered(clip["level"], ())
            formats = _ordered(clip["format"], FORMAT_ORDER)
            values = {(_level_name(r.level), r.format): (r.chance_corrected, r.ci_low, r.ci_high)
                      for r in clip.itertuples(index=False)}
            png = grouped_bars([_level_name(lv) for lv in levels], formats, values,
                               f"(a) {label}: chance-corrected accuracy under clip", "chance-corrected accuracy")
            doc.image(f"a_{slug}.png", png, f"(a) {label}: chance-corrected accuracy by level and format under clip")
        else:
            doc.empty(f"(a) {label}: no scores under `clip`.")
        pooled = g[g["level"] == "*"]
        if len(pooled):
            formats = _ordered(pooled["format"], FORMAT_ORDER)
            conditions = _ordered(pooled["condition"], CONDITION_ORDER)
            values = {(_format_name(r.format), r.condition): (r.chance_corrected, r.ci_low, r.ci_high)
                      for r in pooled.itertuples(index=False)}
            png = grouped_bars([_format_name(f) for f in formats], conditions, values,
                               f"(b) {label}: clip vs no_clip vs silenced (all levels)", "chance-corrected accuracy")
            doc.image(f"b_{slug}.png", png, f"(b) {label}: clip vs no_clip vs silenced per format")
        else:
            doc.empty(f"(b) {label}: no scores pooled over levels.")


# -- paired comparisons ---------------------------------------------------------------------------------

def _pair_rows(frame: pd.DataFrame, with_condition: bool) -> pd.DataFrame:
    rows = []
    for r in frame.itertuples(index=False):
        row = {}
        if with_condition:
            row["condition"] = r.condition
        else:
            row["level"] = _level_name(r.level)
        row.update({
            "A vs B": f"{r.a} vs {r.b}", "pairs": fmt(r.n_pairs), "both right": fmt(r.both),
            "only A": fmt(r.only_a), "only B": fmt(r.only_b), "neither": fmt(r.neither),
            "acc A": fmt(r.accuracy_a), "acc B": fmt(r.accuracy_b),
            "diff A−B [95 %]": fmt_interval(r.diff, r.diff_ci_low, r.diff_ci_high),
            "McNemar p (clip-clustered)": fmt_p(r.mcnemar_p),
        })
        rows.append(row)
    return pd.DataFrame(rows)


def _paired_section(doc: _Doc, paired: pd.DataFrame) -> None:
    doc.heading(2, SECTION_PAIRED)
    doc.notes([
        "Pairs are the same item under two conditions (clip vs no_clip, clip vs silenced) or the same base "
        "question in two formats (within one condition); only pairs decided on both sides count.",
        "`diff` = accuracy A − accuracy B on those pairs, with a 95 % bootstrap interval resampled by clip; "
        "`McNemar p (clip-clustered)` is an exact two-sided sign-flip test over clips on the discordant pairs "
        "(only A / only B right): each clip's net lean counts once, so many questions from one clip cannot "
        "make a difference look surer than its clips allow (with one pair per clip it is the exact McNemar "
        "test; the smallest p that K leaning clips can give is 2^(1−K)).",
        "p-values are not adjusted for the number of comparisons: read them as screening, not as proof.",
    ])
    needed = {"responder", "model", "level", "kind", "condition", "a", "b", "n_pairs", "both", "only_a", "only_b",
              "neither", "mcnemar_p", "diff", "diff_ci_low", "diff_ci_high", "accuracy_a", "accuracy_b"}
    if not _has(paired, needed):
        doc.empty("The paired_comparisons table is empty or missing.")
        return
    level_rank = lambda s: s.map(lambda lv: (1, "") if lv == "*" else (0, str(lv)))  # noqa: E731
    cond = paired[paired["kind"] == "condition"]
    doc.heading(3, "Conditions: clip vs no_clip, clip vs silenced")
    if len(cond):
        for (responder, model), g in cond.groupby(["responder", "model"], sort=True):
            g = g.assign(_l=level_rank(g["level"])).sort_values(["_l", "b"], kind="stable")
            doc.para(_label(responder, model) + ":")
            doc.table(_pair_rows(g, with_condition=False), text_columns=2)
    else:
        doc.empty("No condition pairs (no item answered under clip and another condition).")
    formats = paired[(paired["kind"] == "format") & (paired["level"] == "*")]
    doc.heading(3, "Format pairs (all levels)")
    if len(formats):
        cond_rank = {c: i for i, c in enumerate(CONDITION_ORDER)}
        for (responder, model), g in formats.groupby(["responder", "model"], sort=True):
            g = g.assign(_c=g["condition"].map(lambda c: cond_rank.get(c, 99))).sort_values(["_c", "a", "b"],
                                                                                             kind="stable")
            doc.para(_label(responder, model) + ":")
            doc.table(_pair_rows(g, with_condition=True), text_columns=2)
    else:
        doc.empty("No format pairs pooled over levels.")


# -- shortcut audit -------------------------------------------------------------------------------------

def _shortcut_section(doc: _Doc, audit: pd.DataFrame) -> None:
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

def _over_marking_section(doc: _Doc, over: pd.DataFrame) -> None:
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


def _counts_section(doc: _Doc, verdicts: pd.DataFrame, scores: pd.DataFrame) -> None:
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

def _judge_audit_section(doc: _Doc, audit) -> None:
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


def _caption_section(doc: _Doc, caption_scores, caption_alignments) -> None:
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


# -- the report -----------------------------------------------------------------------------------------

def build_report(scores, paired, over_marking, shortcut_audit, verdicts=None, judge_audit=None, *,
                 title: str = "epic-levels report", caption_scores=None, caption_alignments=None) -> Report:
    """Build the report from the scored tables (any of them may be None or empty; see the module docstring)."""
    scores, paired = _frame(scores), _frame(paired)
    over_marking, shortcut_audit = _frame(over_marking), _frame(shortcut_audit)
    verdicts_frame = _frame(verdicts)
    table = main_table(scores)
    doc = _Doc()
    doc.heading(1, title)
    sizes = [f"scores {len(scores)}", f"paired_comparisons {len(paired)}", f"over_marking {len(over_marking)}",
             f"shortcut_audit {len(shortcut_audit)}",
             f"verdicts {len(verdicts_frame)}" if verdicts is not None else "verdicts not given",
             f"judge_audit {len(_frame(judge_audit))}" if judge_audit is not None else "judge audit not given"]
    doc.para("Rows per table: " + ", ".join(sizes) + ".", "note")
    if not any(len(x) for x in (scores, paired, over_marking, shortcut_audit, verdicts_frame)):
        doc.empty("Every table is empty or missing: run the pipeline first (no results to report).")

    _leaderboard_section(doc, table)
    doc.heading(2, SECTION_HOW_TO_READ)
    doc.notes([
        "Chance-corrected accuracy = `(acc − chance)/(1 − chance)`: 0 at chance, 1 at perfect, negative below "
        "chance; chance is the mean chance of the group's items (1/2 yes-no, 1/4 four options, lower for the "
        "multi-part formats).",
        "Intervals are 95 % percentile bootstrap intervals resampled by clip (questions of one clip share the video, "
        "so clips, not questions, are the independent units).",
        "Undecided rows (open replies the rules could not map to one candidate, with no judge verdict) are excluded "
        "from `accuracy` and counted as wrong in `accuracy_strict`. Unparsed replies are wrong; skipped and error "
        "rows are excluded and counted.",
        "Conditions: `clip` (video with sound), `no_clip` (text only), `silenced` (video, sound removed; "
        "EPIC-SOUNDS clips only). Conditions are never pooled.",
    ])
    _main_section(doc, table, scores)
    _plots_section(doc, table)
    _paired_section(doc, paired)
    _shortcut_section(doc, shortcut_audit)
    _over_marking_section(doc, over_marking)
    _counts_section(doc, verdicts_frame, scores)
    _judge_audit_section(doc, judge_audit)
    _caption_section(doc, caption_scores, caption_alignments)
    markdown, page = doc.render(title)
    return Report(markdown=markdown, html=page, main_table=table, figures=doc.figures)


def _write_text(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; a report is meant to be read by others
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_report(out_dir: Path, scores, paired, over_marking, shortcut_audit, verdicts=None, judge_audit=None, *,
                 title: str = "epic-levels report", caption_scores=None, caption_alignments=None) -> tuple[Path, Path]:
    """Write ``report.md``, ``report.html`` and ``report_figures/*.png`` under ``out_dir``; return (md, html).

    Each text file is replaced atomically. PNGs left in ``report_figures/`` by an earlier report that this one
    does not draw are removed (only ``*.png`` in that folder), so the Markdown never links a stale plot.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    report = build_report(scores, paired, over_marking, shortcut_audit, verdicts, judge_audit, title=title,
                          caption_scores=caption_scores, caption_alignments=caption_alignments)
    figures = out_dir / FIGURE_DIR
    figures.mkdir(exist_ok=True)
    for old in figures.glob("*.png"):
        if old.name not in report.figures:
            old.unlink()
    for name, png in report.figures.items():
        (figures / name).write_bytes(png)
    md_path, html_path = out_dir / "report.md", out_dir / "report.html"
    _write_text(md_path, report.markdown)
    _write_text(html_path, report.html)
    return md_path, html_path


REPORT_TABLES = ("scores", "paired_comparisons", "over_marking", "shortcut_audit", "verdicts", "judge_audit",
                 "caption_scores", "caption_alignments")


def load_table(paths: Paths, name: str) -> pd.DataFrame | None:
    """A table from ``data/assets/<name>.parquet`` or the folder ``data/assets/<name>/`` (one file per clip),
    else the warehouse's table/view of that name; None when none exists (or the warehouse cannot be read)."""
    from ..warehouse import TableStore, query, read_parquet

    store = TableStore(paths.assets)
    file, clip_files = store.path(name), store.partition_files(name)
    if file.exists():
        return read_parquet([file])
    if clip_files:
        return read_parquet(clip_files)
    if paths.warehouse.exists():
        try:
            found = query(paths.warehouse, "SELECT count(*) AS k FROM information_schema.tables "
                                           f"WHERE table_name = '{name}'")
            if int(found["k"].iloc[0]):
                return query(paths.warehouse, f'SELECT * FROM "{name}"')
        except Exception:  # noqa: BLE001 - a missing or unreadable warehouse means "no table", stated in the report
            return None
    return None


def report_from_warehouse(paths: Paths, *, title: str = "epic-levels report") -> tuple[Path, Path]:
    """Read the scored tables (and verdicts, and ``judge_audit`` if materialized) from the project's data folder
    and write the report under ``paths.reports``. Missing tables give a report that says so."""
    tables = {name: load_table(paths, name) for name in REPORT_TABLES}
    return write_report(paths.reports, tables["scores"], tables["paired_comparisons"], tables["over_marking"],
                        tables["shortcut_audit"], tables["verdicts"], tables["judge_audit"], title=title,
                        caption_scores=tables["caption_scores"], caption_alignments=tables["caption_alignments"])
