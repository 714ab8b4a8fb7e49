"""Arrow tables to pandas frames in batches: tables that convert alike are converted once, then cut apart."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa


def _is_list(kind: pa.DataType) -> bool:
    return pa.types.is_list(kind) or pa.types.is_large_list(kind)


def _plain(kind: pa.DataType) -> bool:
    """A type whose conversion to pandas depends only on the type and on whether the column has nulls:
    numbers, booleans, strings, nulls, and lists of these (whose values are converted as one array)."""
    if _is_list(kind):
        return _plain(kind.value_type)
    return (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind)
            or pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_null(kind))


def _nulls_change_type(kind: pa.DataType) -> bool:
    """Whether a column of ``kind`` converts to another NumPy type when it has nulls (integers become
    float64, booleans object), inside lists too."""
    if _is_list(kind):
        return _nulls_change_type(kind.value_type)
    return pa.types.is_integer(kind) or pa.types.is_boolean(kind)


def _has_nulls(column, kind: pa.DataType) -> bool:
    """Nulls in ``column``, or in its list values for a list column (those are what ``_nulls_change_type``
    of a list column is about)."""
    if not _is_list(kind):
        return bool(column.null_count)
    return any(_has_nulls(chunk.flatten(), kind.value_type) for chunk in getattr(column, "chunks", [column]))


def _converts_alike(table: pa.Table) -> tuple | None:
    """What decides the types ``table.to_pandas()`` gives, for a table of ``_plain`` columns: its schema (with
    the pandas metadata) and, for the columns whose type depends on it, whether they have nulls. Tables with
    equal keys converted together give each table the types it gets alone. None for other tables."""
    if not all(_plain(f.type) for f in table.schema):
        return None
    nulls = tuple(_has_nulls(table.column(i), f.type) for i, f in enumerate(table.schema)
                  if _nulls_change_type(f.type))
    return table.schema, nulls


def to_frames(tables: list[pa.Table]) -> list[pd.DataFrame]:
    """Each table's ``to_pandas()`` (the frame reading its file gives), with runs of consecutive tables that
    convert alike (``_converts_alike``) concatenated and converted once, then cut back into each table's rows:
    converting a table has a fixed cost per column, which a batch of small clip tables otherwise pays once
    per clip. Tables without rows, and tables with other than ``_plain`` columns, are converted alone."""
    frames: list[pd.DataFrame | None] = [None] * len(tables)
    runs: list[tuple[tuple, list[int]]] = []
    for i, table in enumerate(tables):
        key = _converts_alike(table) if table.num_rows and table.num_columns else None
        if key is None:
            frames[i] = table.to_pandas()
            continue
        if runs and runs[-1][0][1] == key[1] and runs[-1][0][0].equals(key[0], check_metadata=True):
            runs[-1][1].append(i)
        else:
            runs.append((key, [i]))
    for _key, members in runs:
        if len(members) == 1:
            frames[members[0]] = tables[members[0]].to_pandas()
            continue
        whole = pa.concat_tables([tables[i] for i in members]).to_pandas()
        start = 0
        for i in members:
            stop = start + tables[i].num_rows
            frames[i] = whole.iloc[start:stop].reset_index(drop=True)
            start = stop
    return frames
