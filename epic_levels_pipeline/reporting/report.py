"""The human report: Markdown and a self-contained HTML page built from the scored tables.

``build_report`` turns the tables of :mod:`tables` (and optionally the verdicts and the judge audit) into a
:class:`Report`; ``write_report`` writes ``report.md``, ``report.html`` and the plots as PNG files under
``report_figures/`` (for the Markdown; the HTML embeds the same PNGs as base64 ``data:`` URIs and needs no
other file, script or network); ``report_from_warehouse`` does both for a project's data folder.

Contents, in order: a first line saying who was scored on what; the leaderboard (every model and offline
reference × level, all formats pooled, chance-corrected with its clip-clustered interval, under ``clip`` best
first, then ``no_clip`` and ``silenced``: tables and one figure; then each pair of models on the same items: the
difference with its interval, McNemar p and n per level); how to read the tables; the main table
(chance-corrected accuracy by level × format, one table per responder/model, rows condition × level, each cell the
value with its 95 % interval and n below it, faded under ten items); plots (a)
chance-corrected accuracy by level and format under ``clip`` and (b) clip vs no_clip vs silenced per format;
paired comparisons (conditions, format pairs, then model pairs per condition × format); the shortcut audit
(presence oracle vs chance, blind and silenced gaps); 4b over-marking next to Liu et al. 2025's 63–86 %; how verdicts were decided (rule, judge,
unparsed, undecided, skipped, error); the judge audit; the caption track (``caption_scores`` main metrics per
responder × condition, and a timeline figure per sample clip, one per dataset); HD-EPIC's VQA benchmark by its
authors' protocol (``vqa_official_scores`` in the published table's layout, with their published rows), when given.

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

import os
import tempfile
from pathlib import Path

from ..settings import Paths
from .audit_sections import (CAPTION_SAMPLE_RESPONDER, COUNT_KINDS, _caption_section, _counts_section,
                             _judge_audit_section, _over_marking_section, _shortcut_section, verdict_counts)
from .document import (CONDITION_ORDER, DASH, FEW, FIGURE_DIR, FORMAT_ORDER, LIU_RANGE, SECTION_CAPTIONS, SECTION_COUNTS,
                       SECTION_HOW_TO_READ, SECTION_JUDGE_AUDIT, SECTION_LEADERBOARD, SECTION_MAIN,
                       SECTION_OVER_MARKING, SECTION_PAIRED, SECTION_PLOTS, SECTION_SHORTCUT, SECTIONS, Document,
                       Report, _frame, fmt, fmt_interval, fmt_p, fmt_pct)
from .loading import REPORT_TABLES, caption_timeline_rows, load_table
from .plots import bar_panels, grouped_bars
from .model_sections import integrity_section, spend_section
from .judge_sections import SECTION_JUDGES, SECTION_SEMANTIC, judges_section, semantic_section
from .vqa_sections import SECTION_VQA_OFFICIAL, vqa_official_section
from .sections import (MAIN_COLUMNS, _leaderboard_section, _main_section, _paired_section, _plots_section,
                       leaderboard_table, main_table)


# -- the report -----------------------------------------------------------------------------------------

def build_report(scores, paired, over_marking, shortcut_audit, verdicts=None, judge_audit=None, *,
                 title: str = "epic-levels report", caption_scores=None, caption_alignments=None,
                 vqa_official=None, judge_agreement=None, judge_swap=None, media_integrity=None,
                 spend=None) -> Report:
    """Build the report from the scored tables (any of them may be None or empty; see the module docstring)."""
    scores, paired = _frame(scores), _frame(paired)
    over_marking, shortcut_audit = _frame(over_marking), _frame(shortcut_audit)
    verdicts_frame = _frame(verdicts)
    table = main_table(scores)
    doc = Document()
    doc.heading(1, title)
    doc.para(summary_line(scores, table), "lead")
    integrity_section(doc, media_integrity)  # first: a model that ignored its media makes its comparisons void
    if not any(len(x) for x in (scores, paired, over_marking, shortcut_audit, verdicts_frame)):
        doc.empty("Every table is empty or missing: run the pipeline first (no results to report).")

    _leaderboard_section(doc, table, paired)
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
        "Conditions: `clip` (video with sound), `no_clip` (text only), `silenced` (video, sound removed; asked "
        "where the clip's audio is annotated). Conditions are never pooled.",
        f"Values from fewer than {FEW} items are faded and starred in the tables and faded and hatched in the "
        "figures: their intervals are wide, and one item can make a cell look perfect.",
    ])
    _main_section(doc, table, scores)
    _plots_section(doc, table)
    _paired_section(doc, paired)
    _shortcut_section(doc, shortcut_audit)
    _over_marking_section(doc, over_marking)
    _counts_section(doc, verdicts_frame, scores)
    _judge_audit_section(doc, judge_audit)
    _caption_section(doc, caption_scores, caption_alignments)
    if caption_scores is not None:
        semantic_section(doc, caption_scores)
    if judge_agreement is not None or judge_swap is not None:
        judges_section(doc, judge_agreement, judge_swap)
    if vqa_official is not None:
        vqa_official_section(doc, vqa_official)
    spend_section(doc, spend)
    sizes = [f"scores {len(scores):,}", f"paired_comparisons {len(paired):,}", f"over_marking {len(over_marking):,}",
             f"shortcut_audit {len(shortcut_audit):,}",
             f"verdicts {len(verdicts_frame):,}" if verdicts is not None else "verdicts (not read)",
             f"judge_audit {len(_frame(judge_audit)):,}" if judge_audit is not None else "judge_audit (not read)"]
    doc.para("Made from the warehouse tables (rows): " + ", ".join(sizes) + ".", "note")
    markdown, page = doc.render(title)
    return Report(markdown=markdown, html=page, main_table=table, figures=doc.figures)


def summary_line(scores, table) -> str:
    """The report's first line: who was scored, on how many items of how many clips, and how to read a value."""
    board = table[(table["condition"] == "clip") & (table["level"] == "*") & (table["format"] == "*")] \
        if len(table) else table
    if not len(board):
        return "No scores yet: run `epic-levels run` to make them."
    names = [f"{r.responder}" if r.model in ("", "offline") else f"{r.model} ({r.responder})"
             for r in board.drop_duplicates(["responder", "model"]).itertuples(index=False)]
    datasets = sorted(set(scores.get("dataset", [])) - {"*"}) if len(scores) else []
    clips = int(board["n_clips"].max()) if "n_clips" in board and board["n_clips"].notna().any() else None
    where = f" of {clips:,} clips" if clips else ""
    return (f"How well {len(names)} responders answer questions about kitchen video clips: {', '.join(names)}, on up "
            f"to {int(board['n'].max()):,} items{where} ({', '.join(datasets)}). Each value is a chance-corrected "
            "accuracy: 0 is guessing, 1 is perfect, with its 95 % interval and its number of items n.")


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
                 title: str = "epic-levels report", caption_scores=None, caption_alignments=None,
                 vqa_official=None, judge_agreement=None, judge_swap=None, media_integrity=None,
                 spend=None) -> tuple[Path, Path]:
    """Write ``report.md``, ``report.html`` and ``report_figures/*.png`` under ``out_dir``; return (md, html).

    Each text file is replaced atomically. PNGs left in ``report_figures/`` by an earlier report that this one
    does not draw are removed (only ``*.png`` in that folder), so the Markdown never links a stale plot.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    report = build_report(scores, paired, over_marking, shortcut_audit, verdicts, judge_audit, title=title,
                          caption_scores=caption_scores, caption_alignments=caption_alignments,
                          vqa_official=vqa_official, judge_agreement=judge_agreement, judge_swap=judge_swap,
                          media_integrity=media_integrity, spend=spend)
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


def report_from_warehouse(paths: Paths, *, title: str = "epic-levels report", out_dir: Path | None = None
                          ) -> tuple[Path, Path]:
    """Read the scored tables (and verdicts, and ``judge_audit`` if materialized) from the project's data folder
    and write the report under ``out_dir`` (default ``paths.reports``). Missing tables give a report that says so."""
    tables = {name: load_table(paths, name) for name in REPORT_TABLES if name != "caption_alignments"}
    tables["caption_alignments"] = caption_timeline_rows(paths, CAPTION_SAMPLE_RESPONDER)
    return write_report(out_dir or paths.reports, tables["scores"], tables["paired_comparisons"], tables["over_marking"],
                        tables["shortcut_audit"], tables["verdicts"], tables["judge_audit"], title=title,
                        caption_scores=tables["caption_scores"], caption_alignments=tables["caption_alignments"],
                        vqa_official=tables["vqa_official_scores"], judge_agreement=tables["judge_agreement"],
                        judge_swap=tables["judge_swap"], media_integrity=tables["media_integrity"],
                        spend=tables["spend"])


__all__ = [
    "CAPTION_SAMPLE_RESPONDER", "CONDITION_ORDER", "COUNT_KINDS", "DASH", "FIGURE_DIR", "FORMAT_ORDER", "LIU_RANGE",
    "MAIN_COLUMNS", "REPORT_TABLES", "SECTIONS", "SECTION_CAPTIONS", "SECTION_COUNTS", "SECTION_HOW_TO_READ",
    "SECTION_JUDGE_AUDIT", "SECTION_LEADERBOARD", "SECTION_MAIN", "SECTION_OVER_MARKING", "SECTION_PAIRED",
    "SECTION_JUDGES", "SECTION_PLOTS", "SECTION_SEMANTIC", "SECTION_SHORTCUT", "SECTION_VQA_OFFICIAL", "Document", "Report", "bar_panels", "build_report", "fmt", "fmt_interval",
    "fmt_p", "fmt_pct", "grouped_bars", "leaderboard_table", "load_table", "main_table", "report_from_warehouse",
    "verdict_counts", "write_report",
]
