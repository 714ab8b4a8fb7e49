"""Annotation rows of a clip: filtering and grouping by a column, row ids by key, frames of column arrays."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..records import is_null


def rows_with(rows: list, column: str, value) -> list:
    """The rows whose ``column`` equals ``value`` (a null never does), in order: what a boolean filter
    ``frame[frame[column] == value]`` keeps."""
    return [r for r in rows if not is_null(getattr(r, column)) and getattr(r, column) == value]


def _grouped(rows: list, column: str) -> dict:
    """The rows grouped by their ``column`` value, nulls left out, each group in row order: for every
    value, what :func:`rows_with` keeps."""
    out: dict = {}
    for r in rows:
        value = getattr(r, column)
        if not is_null(value):
            out.setdefault(value, []).append(r)
    return out


def _ids_by(rows: list, key) -> dict:
    """Row ids grouped by ``key(row)``, in row order."""
    out: dict = {}
    for r in rows:
        out.setdefault(key(r), []).append(r.row_id)
    return out


def _frame(data: dict[str, np.ndarray], index: pd.Index | None = None) -> pd.DataFrame:
    """A frame of these column arrays (object columns stay object: no string inference)."""
    n = len(next(iter(data.values()))) if data else 0
    idx = pd.RangeIndex(n) if index is None else index
    return pd.DataFrame({c: pd.Series(v, index=idx, dtype=object) if getattr(v, "dtype", None) == object else
                         pd.Series(v, index=idx) for c, v in data.items()}, index=idx)
