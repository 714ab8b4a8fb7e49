"""Field parsers (one decision each: timestamps, list literals, instance suffixes) and the column checks every
annotation reader shares; a check adds one :class:`~epic_levels_pipeline.errors.Problem` per offending row and
returns the rows that stay."""

from __future__ import annotations

import ast
import csv
import io
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from ..errors import Problem

# ----------------------------------------------------------------------------------------------------
# Small parsers (each owns one decision)
# ----------------------------------------------------------------------------------------------------

_TS = re.compile(r"^(\d{1,3}):([0-5]\d):([0-5]\d(?:\.\d+)?)$")


def parse_timestamps(values: pd.Series) -> tuple[pd.Series, pd.Series]:
    """``HH:MM:SS.fff`` (EPIC-SOUNDS) or ``HH:mm:ss.SS`` (EPIC-KITCHENS-100) to seconds.

    Returns (seconds, ok-mask). Minutes and seconds must be below 60; a sign, a missing field or any
    other text is not a timestamp (``ok`` False, seconds NaN). Hours may have up to three digits.
    """
    parts = values.astype(str).str.strip().str.extract(_TS)
    ok = parts[0].notna()
    seconds = (
        parts[0].astype(float) * 3600 + parts[1].astype(float) * 60 + parts[2].astype(float)
    ).where(ok)
    return seconds, ok


def parse_seconds(values: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Plain decimal seconds (HD-EPIC). Returns (seconds, ok-mask); ``inf``/``nan`` text is not ok."""
    num = pd.to_numeric(values.astype(str).str.strip(), errors="coerce")
    ok = num.notna() & np.isfinite(num.fillna(0))
    return num.where(ok), ok


@lru_cache(maxsize=65536)
def _literal_list(text: str) -> tuple:
    value = ast.literal_eval(text)
    if not isinstance(value, (list, tuple)):
        raise ValueError("not a list")
    return tuple(value)


def parse_list_literal(text: str) -> list | None:
    """``"['water', 'plate']"`` → ``['water', 'plate']``; ``""`` → ``[]``; anything else → None."""
    text = (text or "").strip()
    if not text:
        return []
    try:
        return list(_literal_list(text))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


_INSTANCE_SUFFIX = re.compile(r"(?<=[a-z])\d+$")


_PLACEHOLDER = re.compile(r"^(new )?track \d+\b|^object \d+\b|^unknown\b|\(skipped\)")


def is_placeholder_name(name: str) -> bool:
    """HD-EPIC tracks named ``track 87``, ``new track 2``, ``track 298 (skipped)`` have no object name: never an option."""
    return bool(_PLACEHOLDER.match(str(name)))


_INSTANCE_WORD = re.compile(r"\s+(\d+|first|second|third)$")


@lru_cache(maxsize=1)
def object_name_fixes() -> dict[str, str]:
    """The one table of obvious upstream misspellings of HD-EPIC object names (``object_name_fixes.csv``):
    normalised name → the name shown."""
    text = resources.files("epic_levels_pipeline.annotations").joinpath("object_name_fixes.csv").read_text("utf-8")
    return {r["name"]: r["display"] for r in csv.DictReader(io.StringIO(text))}


def normalise_object_name(raw: str) -> str:
    """HD-EPIC object names carry instance suffixes: ``knife2`` → ``knife``, ``baking tray2`` → ``baking
    tray``, ``muffin tray1`` → ``muffin tray``, ``recipe kit 2`` → ``recipe kit``, ``fork first`` → ``fork``.
    Text with inner digits (``1 tablespoon``) is untouched; case and spaces are normalised; obvious upstream
    misspellings are corrected from one table (:func:`object_name_fixes`). The raw name is kept beside it
    for provenance."""
    name = " ".join(str(raw).strip().lower().split())
    name = _INSTANCE_SUFFIX.sub("", name).strip()
    fixes = object_name_fixes()
    name = fixes.get(name, name)
    if is_placeholder_name(name):
        return name
    stripped = _INSTANCE_WORD.sub("", name).strip()
    name = stripped if stripped else name
    return fixes.get(name, name)


# ----------------------------------------------------------------------------------------------------
# Reading a CSV into raw strings, with encoding / shape problems located
# ----------------------------------------------------------------------------------------------------


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _read_text(path: Path, problems: list[Problem]) -> str | None:
    name = _display(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        problems.append(Problem(name, 0, "-", f"cannot read file: {exc.strerror or exc}"))
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line_no = data[: exc.start].count(b"\n") + 1
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        column = "-"
        header = data.split(b"\n", 1)[0].decode("utf-8", "replace").strip().split(",")
        field_index = data[line_start : exc.start].count(b",")
        if path.suffix == ".csv" and field_index < len(header):
            column = header[field_index]
        problems.append(
            Problem(name, line_no, column,
                    f"invalid UTF-8 byte 0x{data[exc.start]:02x} at byte {exc.start - line_start + 1} of the line;"
                    " the file must be UTF-8")
        )
        return None
    if not text.strip():
        problems.append(Problem(name, 1, "-", "file is empty"))
        return None
    return text


def read_csv_strings(path: Path, required: list[str], problems: list[Problem]) -> pd.DataFrame | None:
    """The file's rows as strings (no type guessing), with ``_row`` = line number; None if unusable."""
    name = _display(path)
    text = _read_text(path, problems)
    if text is None:
        return None
    try:
        # skip_blank_lines=False keeps line numbers true; a blank line becomes a row of empty values (an error
        # on its id column), never a silent shift of every later row number.
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, na_filter=False, skip_blank_lines=False)
    except pd.errors.ParserError as exc:
        match = re.search(r"line (\d+)", str(exc))
        problems.append(Problem(name, int(match.group(1)) if match else 0, "-", f"malformed CSV: {exc}"))
        return None
    except pd.errors.EmptyDataError:
        problems.append(Problem(name, 1, "-", "file is empty"))
        return None
    frame.columns = [str(c).strip() for c in frame.columns]
    frame = frame.fillna("")
    missing = [c for c in required if c not in frame.columns]
    for column in missing:
        problems.append(Problem(name, 1, column, f"missing column '{column}' (header has: {', '.join(frame.columns)})"))
    if missing:
        return None
    # Line numbers: header is line 1. Quoted fields with newlines would shift this; the sources have none.
    frame["_row"] = np.arange(2, len(frame) + 2)
    return frame


def _flag(problems: list[Problem], name: str, frame: pd.DataFrame, mask: pd.Series, column: str,
          message: Callable[[pd.Series], str] | str, severity: str = "error") -> None:
    if not mask.any():
        return
    for _, row in frame.loc[mask].iterrows():
        text = message(row) if callable(message) else message
        problems.append(Problem(name, int(row["_row"]), column, text, severity))


def _check_span(problems: list[Problem], name: str, frame: pd.DataFrame, start_col: str, stop_col: str,
                start: pd.Series, stop: pd.Series, errata: Callable[[pd.Series], str | None] | None = None) -> pd.Series:
    """Negative times and inverted spans are errors; zero-length spans are dropped. Returns keep-mask."""
    keep = pd.Series(True, index=frame.index)
    negative_start = start < 0
    negative_stop = stop < 0
    _flag(problems, name, frame, negative_start, start_col, lambda r: f"negative time {r[start_col]!r}")
    _flag(problems, name, frame, negative_stop & ~negative_start, stop_col, lambda r: f"negative time {r[stop_col]!r}")
    inverted = (stop < start) & ~negative_start & ~negative_stop
    for idx in frame.index[inverted]:
        row = frame.loc[idx]
        reason = errata(row) if errata else None
        if reason:
            problems.append(Problem(name, int(row["_row"]), stop_col, f"known erratum: {reason}", "dropped"))
        else:
            problems.append(Problem(name, int(row["_row"]), stop_col,
                                    f"stop {row[stop_col]!r} is before start {row[start_col]!r}"))
    zero = stop == start
    _flag(problems, name, frame, zero, stop_col,
          lambda r: f"zero-length span ({r[start_col]} to {r[stop_col]}); row left out", "dropped")
    keep &= ~(negative_start | negative_stop | inverted | zero)
    return keep


def _numbered(ids: pd.Series) -> pd.Series:
    """Make ids unique by suffixing repeats with ``#2``, ``#3`` … in file order."""
    nth = ids.groupby(ids).cumcount()
    return ids.where(nth == 0, ids + "#" + (nth + 1).astype(str))


def _check_unique(problems: list[Problem], name: str, frame: pd.DataFrame, column: str) -> pd.Series:
    dup = frame[column].duplicated(keep="first")
    if dup.any():
        first_rows = frame.groupby(column)["_row"].transform("min")
        for idx in frame.index[dup]:
            problems.append(Problem(name, int(frame.at[idx, "_row"]), column,
                                    f"duplicate id {frame.at[idx, column]!r} (first at row {int(first_rows[idx])})"))
    return ~dup


def _check_nonempty(problems: list[Problem], name: str, frame: pd.DataFrame, columns: list[str]) -> pd.Series:
    ok = pd.Series(True, index=frame.index)
    for column in columns:
        blank = frame[column].str.strip() == ""
        _flag(problems, name, frame, blank, column, "empty value")
        ok &= ~blank
    return ok


def _times(problems: list[Problem], name: str, frame: pd.DataFrame, column: str, parser) -> pd.Series:
    seconds, ok = parser(frame[column])
    expected = "HH:MM:SS.fff" if parser is parse_timestamps else "seconds"
    _flag(problems, name, frame, ~ok, column, lambda r: f"unparsable time {r[column]!r} (expected {expected})")
    return seconds
