"""A clip's rows as canonical JSON and their content hash (the ``clip_annotations`` data version): the same
whether the rows were read from the CSVs, from Parquet or by another library version."""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pandas as pd

from .clip_keys import Clip
from .clip_rows import CLIP_ANNOTATION_COLUMNS, iter_clips_annotations
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


def canonical_rows(rows: pd.DataFrame) -> str:
    """A clip's rows as canonical JSON: the fixed column order of :data:`CLIP_ANNOTATION_COLUMNS` (less
    ``source_row``, a line number that moves when unrelated rows are added above), each cell through
    :func:`canonical_value`, rows ordered by (stream, row id, start)."""
    cols = [c for c in CLIP_ANNOTATION_COLUMNS if c != "source_row"]
    # column lists (``tolist`` gives the cells iterating the frame gives, much faster on Arrow-backed
    # strings); a column the frame lacks is null in every row, as ``reindex`` makes it
    n = len(rows)
    columns = [rows[c].tolist() if c in rows.columns else [None] * n for c in cols]
    records = [[v if type(v) is str else canonical_value(v) for v in record] for record in zip(*columns)]  # (a str is its own)
    i_stream, i_id, i_start = cols.index("stream"), cols.index("row_id"), cols.index("start_s")
    records.sort(key=lambda r: (str(r[i_stream]), str(r[i_id]), json.dumps(r[i_start])))
    return json.dumps({"columns": cols, "rows": records}, separators=(",", ":"), ensure_ascii=False)


def content_hash(rows: pd.DataFrame) -> str:
    """A stable hash of a clip's rows: changes exactly when an overlapping row (or recipe context) changes,
    and is identical whether the rows come from the CSVs, from Parquet or from another library version
    (see :func:`canonical_rows`)."""
    return hashlib.sha256(canonical_rows(rows).encode()).hexdigest()[:16]


def clip_hashes(ann: Annotations, clips: list[Clip]) -> dict[str, str]:
    """Content hash of each clip's overlapping rows (the ``clip_annotations`` data version)."""
    return {clip.key: content_hash(rows) for clip, rows in iter_clips_annotations(ann, clips)}

