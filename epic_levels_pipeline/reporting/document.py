"""The report's document: section names and orders, number formatting, and the block builder that renders
Markdown and HTML at once (``Document``; images are embedded in the HTML as base64 ``data:`` URIs)."""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

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
FEW = 10  # a value from fewer items than this is shown faded (a single item can make a cell look perfect)


@dataclass(frozen=True)
class Cell:
    """A table cell of one value and its details (interval, n, …) on lines of their own; ``few``: from fewer than
    :data:`FEW` items, shown faded."""

    value: str
    details: tuple[str, ...] = ()
    few: bool = False

    def __str__(self) -> str:
        return " ".join([self.value, *self.details])


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


def interval_cell(value, low, high, n=None, extra: tuple[str, ...] = (), digits: int = 3) -> Cell | str:
    """``value`` with ``[low, high]`` and ``n=…`` on lines of their own, faded when ``n`` < :data:`FEW`."""
    if _missing(value):
        return DASH if n is None or _missing(n) else f"{DASH} n={int(n)}"
    details = [] if _missing(low) or _missing(high) else [f"[{fmt(low, digits)}, {fmt(high, digits)}]"]
    if n is not None and not _missing(n):
        details.append(f"n={int(n)}")
    return Cell(fmt(value, digits), (*details, *extra), few=n is not None and not _missing(n) and int(n) < FEW)


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


def _pool(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """Rows pooled over ``column`` (its ``'*'`` roll-up), or all rows when it has a single value."""
    if column not in frame.columns or not len(frame):
        return frame
    if (frame[column] == "*").any():
        return frame[frame[column] == "*"]
    return frame if frame[column].nunique(dropna=False) == 1 else frame.iloc[0:0]


# -- the document: blocks rendered to Markdown and HTML at once ---------------------------------------------

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1200px;
       padding: 0 1em; color: #222; line-height: 1.45; }
h1 { border-bottom: 2px solid #444; padding-bottom: .2em; }
h2 { border-bottom: 1px solid #bbb; margin-top: 2em; }
.scroll { overflow-x: auto; margin: .6em 0 1.2em 0; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 3px 6px; text-align: right; vertical-align: top; }
td { white-space: nowrap; }
th { background: #f1f1f1; white-space: normal; }
td.text, th.text { text-align: left; white-space: normal; }
td .v { font-weight: 600; }
td .d { display: block; font-size: .8em; color: #555; }
td.few { opacity: .45; }
td.few .v::after { content: " *"; }
p.lead { font-size: 1.1em; }
p.note, ul.note { color: #444; font-size: 0.92em; }
p.empty { color: #a33; font-style: italic; }
img { max-width: 100%; border: 1px solid #ddd; margin: .4em 0 1em 0; }
code { background: #f4f4f4; padding: 0 3px; }
"""


class Document:
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
            text = str(v).replace("|", "\\|").replace("\n", " ")
            return f"*{text}* (n < {FEW})" if isinstance(v, Cell) and v.few else text

        lines = ["| " + " | ".join(md_cell(c) for c in cols) + " |",
                 "|" + "|".join(":---" if i < text_columns else "---:" for i in range(len(cols))) + "|"]
        for row in frame.itertuples(index=False):
            lines.append("| " + " | ".join(md_cell(v) for v in row) + " |")
        self.md.append("\n".join(lines) + "\n")

        def cls(i: int) -> str:
            return ' class="text"' if i < text_columns else ""

        def td(i: int, v) -> str:
            if not isinstance(v, Cell):
                return f"<td{cls(i)}>{html.escape(str(v))}</td>"
            few = f' class="few" title="from fewer than {FEW} items"' if v.few else ""
            details = "".join(f'<span class="d">{html.escape(d)}</span>' for d in v.details)
            return f'<td{few}><span class="v">{html.escape(v.value)}</span>{details}</td>'

        head = "".join(f"<th{cls(i)}>{html.escape(c)}</th>" for i, c in enumerate(cols))
        body = "".join("<tr>" + "".join(td(i, v) for i, v in enumerate(row)) + "</tr>"
                       for row in frame.itertuples(index=False))
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
