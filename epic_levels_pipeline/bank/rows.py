"""Annotation rows as plain tuples: records of a frame or of column arrays, null tests, grouping by a column."""

from __future__ import annotations

from collections import namedtuple
from functools import lru_cache

import numpy as np
import pandas as pd


def records(frame: pd.DataFrame):
    """Rows as namedtuples, built from column lists: much faster than ``DataFrame.itertuples`` on the
    Arrow-backed string columns of pandas 3."""
    if not len(frame):
        return []
    Row = _row_type(tuple(frame.columns))
    if all(isinstance(t, np.dtype) and t.kind in "Ofib" for t in frame.dtypes):
        # plain numpy columns: one conversion of the whole frame (floats, ints and bools become Python's)
        return [Row(*values) for values in frame.to_numpy(dtype=object).tolist()]
    return [Row(*values) for values in zip(*(frame[c].tolist() for c in frame.columns))]


def _records_of(data: dict[str, np.ndarray]) -> list:
    """:func:`records` of the frame these column arrays would make, without making it: each column's
    ``tolist()`` gives the Python values the frame's conversion gives (floats, ints, bools; ``pd.NA`` in
    nullable integers)."""
    if not data or not len(next(iter(data.values()))):
        return []
    Row = _row_type(tuple(data))
    return [Row(*values) for values in zip(*(v.tolist() for v in data.values()))]


@lru_cache(maxsize=None)
def _row_type(columns: tuple):
    """The namedtuple type of rows of these columns (one per column list)."""
    return namedtuple("Row", columns, rename=True)


def _missing(value) -> bool:
    """Null as ``dropna`` sees it (None, NaN, ``pd.NA``)."""
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


def rows_with(rows: list, column: str, value) -> list:
    """The rows whose ``column`` equals ``value`` (a null never does), in order: what a boolean filter
    ``frame[frame[column] == value]`` keeps."""
    return [r for r in rows if not _missing(getattr(r, column)) and getattr(r, column) == value]


def _grouped(rows: list, column: str) -> dict:
    """The rows grouped by their ``column`` value, nulls left out, each group in row order: for every
    value, what :func:`rows_with` keeps."""
    out: dict = {}
    for r in rows:
        value = getattr(r, column)
        if not _missing(value):
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
