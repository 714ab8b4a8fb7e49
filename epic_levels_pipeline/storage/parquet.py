"""Parquet files of the table store: atomic writes checked against the declared schemas, reads as one frame."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .. import schemas

# A file of at most this many rows (a clip's table) is read whole, never filtered by row group: it is
# written without column statistics and dictionary pages, which cost more CPU than they save at that size.
SMALL_FILE_ROWS = 5_000


def write_parquet(frame: pd.DataFrame | pa.Table, path: Path, name: str | None = None) -> pa.Table:
    """Write atomically: a failed write never replaces a good file. Returns the Arrow table written (its
    ``to_pandas()`` is what reading the file gives; the frame's index is not written). ``name``: the
    warehouse table it is a file of, whose declared schema (:mod:`..schemas`) it is cast to and checked against."""
    return write_parquets([(frame, path)], name)[0]


def _arrow(frame: pd.DataFrame | pa.Table, name: str | None) -> pa.Table:
    """The Arrow table written for ``frame``: of its table's declared schema when ``name`` is given
    (:func:`..schemas.conform`: a mismatch raises, naming the table and the column), else as inferred."""
    if name is not None:
        return schemas.conform(name, frame)
    return frame if isinstance(frame, pa.Table) else pa.Table.from_pandas(frame, preserve_index=False)


def write_file(table: pa.Table, path: Path) -> None:
    """``table`` to ``path`` through a temporary file in its folder, which replaces ``path`` once complete."""
    small = table.num_rows <= SMALL_FILE_ROWS
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    os.close(fd)
    try:
        pq.write_table(table, tmp, write_statistics=not small, use_dictionary=not small)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_parquets(outputs: list[tuple[pd.DataFrame | pa.Table, Path]], name: str | None = None) -> list[pa.Table]:
    """``write_parquet`` of each (frame or Arrow table, path) of table ``name``, in order; the Arrow tables
    written. Every output is converted (and checked against its declared schema) before any file is written,
    so a table that does not fit leaves every file as it was; each file is then written atomically as by
    ``write_parquet``, in order, and nothing more is written after a failed write (which raises)."""
    for folder in dict.fromkeys(path.parent for _, path in outputs):
        folder.mkdir(parents=True, exist_ok=True)
    tables = [_arrow(frame, name) for frame, _ in outputs]
    for table, (_, path) in zip(tables, outputs):
        write_file(table, path)
    return tables


def read_file(path: Path) -> pa.Table:
    """One file's table, as ``pq.read_table(path)`` gives it (schema and metadata included), through
    ``pq.ParquetFile``: without building a dataset per file, a third of the time on a clip-sized file (reading
    thousands of clip files is most of a cross-clip table's cost); a clip-sized file is decoded in this
    thread (a thread pool per file costs more than its few rows)."""
    with pq.ParquetFile(path) as file:
        return file.read(use_threads=file.metadata.num_rows > SMALL_FILE_ROWS)


def read_parquet(paths: list[Path]) -> pd.DataFrame:
    """The files' rows as one frame, in file order. Files without rows add no rows: they are left out as the
    core's concatenation leaves out empty frames (an empty clip file, whose columns have no values to type,
    would otherwise turn every column of the result into ``object``), unless no file has rows; files without
    columns are left out. Consecutive files of one schema are concatenated as Arrow tables and converted
    once, which gives the frame converting them one by one and concatenating gives."""
    return frame_of([read_file(p) for p in paths if p.exists()])


def frame_of(tables: list[pa.Table]) -> pd.DataFrame:
    """``read_parquet``'s frame of the files' tables (each with its own schema metadata: the pandas
    metadata a file was written with decides how its columns convert)."""
    tables = [t for t in tables if t.num_columns]
    if not tables:
        return pd.DataFrame()
    columns = list(dict.fromkeys(name for t in tables for name in t.column_names))
    tables = [t for t in tables if t.num_rows] or tables
    runs: list[list[pa.Table]] = []
    for table in tables:
        if runs and table.schema.equals(runs[-1][0].schema, check_metadata=True):
            runs[-1].append(table)
        else:
            runs.append([table])
    frames = [(pa.concat_tables(run) if len(run) > 1 else run[0]).to_pandas() for run in runs]
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    if list(frame.columns) != columns:  # a column only row-less files had stays, without values
        frame = frame.reindex(columns=columns)
    return frame



def file_stamp(path: Path) -> tuple[int, int, int] | None:
    """What tells a stored file's versions apart (inode, mtime in ns, size: every write replaces the file),
    None while it does not exist."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_ino, stat.st_mtime_ns, stat.st_size
