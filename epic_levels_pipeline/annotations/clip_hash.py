"""A clip's rows as canonical JSON and their content hash (the ``clip_annotations`` data version): the same
whether the rows were read from the CSVs, from Parquet or by another library version."""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pandas as pd

from .clip_keys import Clip
from .clip_rows import CLIP_ANNOTATION_COLUMNS, ClipRowsIndex, _clip_rows
from .readers import Annotations


def canonical_value(value):
    """One annotation cell as a plain JSON value, the same whatever read it (CSV, Parquet, another
    pandas or numpy version): nulls (None, NaN, ``pd.NA``, ``NaT``) become ``None``; numpy scalars become
    Python ones; integral floats become ints and other floats are rounded to 6 decimals (microseconds, far
    below the annotations' precision); lists, tuples and arrays become lists of canonical values; mappings
    get sorted keys; timestamps their ISO form; anything else its ``str``."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, (str, bytes)):
        return value.decode() if isinstance(value, bytes) else value
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        x = float(value)
        if math.isnan(x):
            return None
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        rounded = round(x, 6)
        return int(rounded) if rounded.is_integer() else rounded
    if isinstance(value, (list, tuple, np.ndarray, pd.api.extensions.ExtensionArray)):
        return [canonical_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): canonical_value(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        return pd.Timestamp(value).isoformat()
    return str(value)


_HASHED_COLUMNS = [c for c in CLIP_ANNOTATION_COLUMNS if c != "source_row"]


def _column_lists(rows: pd.DataFrame) -> list[list]:
    """The cells of :data:`_HASHED_COLUMNS`, one list per column (``tolist`` gives the cells iterating the
    frame gives, much faster on Arrow-backed strings); a column the frame lacks is null in every row, as
    ``reindex`` makes it."""
    n = len(rows)
    return [rows[c].tolist() if c in rows.columns else [None] * n for c in _HASHED_COLUMNS]


def _canonical_records(columns: list[list], a: int = 0, b: int | None = None) -> list[list]:
    """Rows ``a:b`` of the column lists as lists of canonical cells."""
    return [[v if type(v) is str else canonical_value(v) for v in record]  # (a str is its own)
            for record in zip(*(column[a:b] for column in columns))]


_I_STREAM, _I_ID, _I_START = (_HASHED_COLUMNS.index(c) for c in ("stream", "row_id", "start_s"))


def _canonical_json(records: list[list]) -> str:
    """Canonical records (sorted here, in place) as the canonical JSON text."""
    records.sort(key=lambda r: (str(r[_I_STREAM]), str(r[_I_ID]), json.dumps(r[_I_START])))
    return json.dumps({"columns": _HASHED_COLUMNS, "rows": records}, separators=(",", ":"), ensure_ascii=False)


def canonical_rows(rows: pd.DataFrame) -> str:
    """A clip's rows as canonical JSON: the fixed column order of :data:`CLIP_ANNOTATION_COLUMNS` (less
    ``source_row``, a line number that moves when unrelated rows are added above), each cell through
    :func:`canonical_value`, rows ordered by (stream, row id, start)."""
    return _canonical_json(_canonical_records(_column_lists(rows)))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def content_hash(rows: pd.DataFrame) -> str:
    """A stable hash of a clip's rows: changes exactly when an overlapping row (or recipe context) changes,
    and is identical whether the rows come from the CSVs, from Parquet or from another library version
    (see :func:`canonical_rows`)."""
    return _digest(canonical_rows(rows))


def clip_hashes(ann: Annotations, clips: list[Clip], batch: int = 1024) -> dict[str, str]:
    """Content hash of each clip's overlapping rows (the ``clip_annotations`` data version): for every clip
    ``content_hash(clip_annotations(ann, clip))``. The clips are joined ``batch`` at a time
    (:meth:`ClipRowsIndex.spans`); the cells of each frame of a batch are taken out once, column by column,
    and each clip makes canonical and hashes its own slice of them: no frame per clip (what the sensor
    computes for every window of the manifest when an annotation file changes)."""
    index = ClipRowsIndex(ann)
    out: dict[str, str] = {}
    for i in range(0, len(clips), batch):
        chunk = clips[i:i + batch]
        spans = index.spans(chunk)
        made: dict[int, tuple[pd.DataFrame, list[list]]] = {}  # by the frame's id (the frame kept alive with it)
        for clip in chunk:
            span = spans[clip.key]
            if span is None:
                out[clip.key] = content_hash(_clip_rows(None))
                continue
            frame, a, b = span
            if id(frame) not in made:
                made[id(frame)] = (frame, _column_lists(frame))
            out[clip.key] = _digest(_canonical_json(_canonical_records(made[id(frame)][1], a, b)))
    return out
