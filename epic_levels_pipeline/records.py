"""Table rows as plain tuples: namedtuples built from column lists (much faster than ``itertuples`` on pandas 3's
Arrow-backed strings), and the null test they share."""

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


def records_of(data: dict[str, np.ndarray]) -> list:
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


def is_null(value) -> bool:
    """Null as ``dropna`` sees it (None, NaN, ``pd.NA``)."""
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)
