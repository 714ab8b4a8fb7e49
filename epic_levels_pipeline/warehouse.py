"""The DuckDB warehouse: views over the per-clip Parquet files, tables for the scored results.

Per-clip assets are stored as one Parquet file per partition (``data/assets/<table>/<clip>.parquet``,
written atomically), so runs of different clips never contend for a database lock, and runs on different
machines only need a filesystem they all reach. The warehouse (``data/warehouse.duckdb``) exposes each
table as a view over its file or its folder's glob, which DuckDB evaluates at query time: a newly
materialized clip is visible without touching the database. One writer creates the views
(``refresh_views``, called by the ``warehouse`` asset alone), so no two processes open the file for writing.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from . import schemas


class TableStore:
    """The one place that knows where materialized tables are stored.

    An unpartitioned table is ``<root>/<name>.parquet`` (``.json`` for the one output that is not a table,
    the entity catalogue); a per-clip table is ``<root>/<name>/<clip>.parquet``, one file per partition.
    The IO manager writes through it; the CLI, the report, the estimate and the sensor read through it, so
    a change of layout is one change here.
    """

    def __init__(self, root: Path):
        self.root = Path(root)

    def path(self, name: str, partition: str | None = None) -> Path:
        """The Parquet file of table ``name`` (of one clip when ``partition`` is given)."""
        base = self.root / name
        return base / f"{partition}.parquet" if partition else base.with_suffix(".parquet")

    def consolidated_path(self, name: str) -> Path:
        """The one-file copy of every clip file of a per-clip table that cross-clip reads keep up to date
        (``read_partitions``); under a dot folder, so it is no table of its own and in no warehouse view."""
        return self.root / ".all-clips" / f"{name}.parquet"

    def document_path(self, name: str) -> Path:
        """The JSON document of an unpartitioned output that is not a table (the entity catalogue)."""
        return self.path(name).with_suffix(".json")

    def folder(self, name: str) -> Path:
        """The folder of a per-clip table's files (what its warehouse view globs)."""
        return self.root / name

    def partition_files(self, name: str) -> list[Path]:
        """Every clip file of a per-clip table, sorted (none when it was never materialized)."""
        folder = self.folder(name)
        return sorted(folder.glob("*.parquet")) if folder.is_dir() else []

    def tables(self) -> dict[str, Path]:
        """Every stored table by name: an unpartitioned table's file, or a per-clip table's folder (with files).

        This is how a table reaches the warehouse: anything written through this store is found here, and
        the warehouse writer makes a view of it."""
        found: dict[str, Path] = {}
        if not self.root.is_dir():
            return found
        for entry in sorted(self.root.iterdir()):
            if entry.name.startswith("."):
                continue
            if entry.is_file() and entry.suffix == ".parquet":
                found[entry.stem] = entry
            elif entry.is_dir() and any(entry.glob("*.parquet")):
                found[entry.name] = entry
        return found

    def retire(self, name: str, partition: str) -> Path | None:
        """Move one clip's file aside into ``<name>/retired/`` (kept for audit); its new path, or None."""
        path = self.path(name, partition)
        if not path.exists():
            return None
        target = self.folder(name) / "retired" / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)
        return target


# A file of at most this many rows (a clip's table) is read whole, never filtered by row group: it is
# written without column statistics and dictionary pages, which cost more CPU than they save at that size.
SMALL_FILE_ROWS = 5_000


def write_parquet(frame: pd.DataFrame | pa.Table, path: Path, name: str | None = None) -> pa.Table:
    """Write atomically: a failed write never replaces a good file. Returns the Arrow table written (its
    ``to_pandas()`` is what reading the file gives; the frame's index is not written). ``name``: the
    warehouse table it is a file of, whose declared schema (:mod:`.schemas`) it is cast to and checked against."""
    return write_parquets([(frame, path)], name)[0]


def _arrow(frame: pd.DataFrame | pa.Table, name: str | None) -> pa.Table:
    """The Arrow table written for ``frame``: of its table's declared schema when ``name`` is given
    (:func:`.schemas.conform`: a mismatch raises, naming the table and the column), else as inferred."""
    if name is not None:
        return schemas.conform(name, frame)
    return frame if isinstance(frame, pa.Table) else pa.Table.from_pandas(frame, preserve_index=False)


def _write_file(table: pa.Table, path: Path) -> None:
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
        _write_file(table, path)
    return tables


def _read_file(path: Path) -> pa.Table:
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
    return _frame_of([_read_file(p) for p in paths if p.exists()])


def _frame_of(tables: list[pa.Table]) -> pd.DataFrame:
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


ALL_CLIPS_KEY = b"epic_levels.all_clips"  # the consolidated file's index, in its schema metadata


def file_stamp(path: Path) -> tuple[int, int, int] | None:
    """What tells a stored file's versions apart (inode, mtime in ns, size: every write replaces the file),
    None while it does not exist."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_ino, stat.st_mtime_ns, stat.st_size


def _read_consolidated(path: Path) -> tuple[pa.Table, dict[str, tuple[list[int], int, int, dict]]] | None:
    """The consolidated table (without schema metadata) and its index, file name -> (stamp, first row, rows,
    that file's own schema metadata); None when there is none or it cannot be read (it is then rebuilt from
    the clip files)."""
    if not path.exists():
        return None
    try:
        table = _read_file(path)
        index_json = json.loads((table.schema.metadata or {})[ALL_CLIPS_KEY])
        metadata = [{k.encode("latin-1"): v.encode("latin-1") for k, v in m.items()} for m in index_json["metadata"]]
        index, offset = {}, 0
        for name, stamp, rows, which in index_json["files"]:
            index[name] = (stamp, offset, rows, metadata[which])
            offset += rows
    except (OSError, KeyError, ValueError, TypeError, IndexError, pa.ArrowException):
        return None
    if offset != table.num_rows:
        return None
    return table.replace_schema_metadata(None), index


def _index_json(names: list[str], stamps: list, pieces: list[pa.Table]) -> bytes:
    """The consolidated copy's index: every file's name, stamp and rows, and which of the distinct schema
    metadata it was written with (bytes kept exactly, as latin-1 text)."""
    distinct: dict[tuple, int] = {}
    files = []
    for name, stamp, table in zip(names, stamps, pieces):
        meta = tuple(sorted((table.schema.metadata or {}).items()))
        files.append([name, stamp, table.num_rows, distinct.setdefault(meta, len(distinct))])
    metadata = [{k.decode("latin-1"): v.decode("latin-1") for k, v in meta} for meta in distinct]
    return json.dumps({"files": files, "metadata": metadata}).encode()


def read_partitions(paths: list[Path], consolidated: Path) -> pd.DataFrame:
    """``read_parquet(paths)`` of a per-clip table's files, through one consolidated copy of them
    (``consolidated``, rewritten atomically when a file changed): a file whose stamp (inode, mtime, size) is
    the one the copy recorded is taken from the copy, only new or changed files are read, so a cross-clip
    table reads a few files plus one instead of one per clip. The copy keeps each file's own schema metadata
    (the pandas metadata it was written with: a clip whose string column held no value converts it as
    ``object``), so the frame is the one ``read_parquet`` gives: the files' rows in file order, files
    without rows left out, each run of files of one schema converted alike. Files whose columns or types
    differ (a table written before a schema change) are read as ``read_parquet`` reads them, without a copy."""
    stamps = [(p, file_stamp(p)) for p in paths]
    stamps = [(p, s) for p, s in stamps if s is not None]
    found = _read_consolidated(consolidated)
    base, index = found if found is not None else (None, {})
    pieces, fresh = [], 0
    for path, stamp in stamps:
        entry = index.get(path.name)
        if entry is not None and tuple(entry[0]) == stamp:
            pieces.append(base.slice(entry[1], entry[2]).replace_schema_metadata(entry[3] or None))
        else:
            pieces.append(_read_file(path))
            fresh += 1
    schema = pieces[0].schema if pieces else None
    if not pieces or any(t.num_columns == 0 or not t.schema.equals(schema, check_metadata=False) for t in pieces):
        return read_parquet([p for p, _ in stamps])
    if fresh or len(index) != len(stamps):
        whole = pa.concat_tables([t.replace_schema_metadata(None) for t in pieces]).replace_schema_metadata(
            {ALL_CLIPS_KEY: _index_json([p.name for p, _ in stamps], [s for _, s in stamps], pieces)})
        consolidated.parent.mkdir(parents=True, exist_ok=True)
        _write_file(whole, consolidated)
    return _frame_of(pieces)


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


def connect(path: Path, read_only: bool = False, attempts: int = 50) -> duckdb.DuckDBPyConnection:
    """Open the warehouse, waiting briefly while another process holds its write lock."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for i in range(attempts):
        try:
            return duckdb.connect(str(path), read_only=read_only)
        except duckdb.IOException:
            if i == attempts - 1:
                raise
            time.sleep(0.1 * (1 + i % 5))
    raise RuntimeError("unreachable")


_ENSURED: set[tuple[str, str, str]] = set()


def _view_sql(name: str, target: Path) -> str:
    """``CREATE OR REPLACE VIEW`` over a table's Parquet file, or every file of a per-clip table's folder."""
    target = target.resolve()
    glob = str(target / "*.parquet" if target.is_dir() else target).replace("'", "''")
    return f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM read_parquet('{glob}', union_by_name = true)"


def ensure_view(warehouse: Path, name: str, target: Path) -> None:
    """``CREATE OR REPLACE VIEW name`` over a table's Parquet file, or every file of a partitioned table's folder.

    A view over a folder's glob sees new files without being recreated, so each view is (re)created once per
    process and warehouse file (the write lock is not taken again for every clip)."""
    sql = _view_sql(name, target)
    key = (str(warehouse.resolve()), name, sql)
    if key in _ENSURED and warehouse.exists():
        return
    with connect(warehouse) as con:
        con.execute(sql)
    _ENSURED.add(key)


# What the last refresh made each view from, kept in the warehouse file itself (schema ``epic_levels_state``):
# the view's SQL and columns, and the stamp of every file it read. Deleting the warehouse deletes it too.
_STATE = "epic_levels_state"


def _files_of(target: Path) -> dict[str, tuple[int, int, int]]:
    """Every Parquet file a view reads (a table's file, or its folder's), by name, with its stamp."""
    if not target.is_dir():
        stamp = file_stamp(target)
        return {target.name: stamp} if stamp is not None else {}
    found = {}
    with os.scandir(target) as entries:
        for entry in entries:
            if entry.name.endswith(".parquet") and entry.is_file():
                st = entry.stat()
                found[entry.name] = (st.st_ino, st.st_mtime_ns, st.st_size)
    return found


def _columns(con: duckdb.DuckDBPyConnection, relation: str) -> list[list[str]]:
    """``[name, type]`` of each column of a relation (a view, or ``read_parquet`` of one file), sorted."""
    return sorted([str(r[0]), str(r[1])] for r in con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall())


def _recorded(con: duckdb.DuckDBPyConnection) -> dict[str, dict]:
    """The state of the last refresh, per view: ``sql``, ``columns`` and ``files`` (name -> stamp)."""
    try:
        views = con.execute(f"SELECT view, sql, columns FROM {_STATE}.views").fetchall()
        files = con.execute(f"SELECT view, file, ino, mtime_ns, size FROM {_STATE}.files").fetchall()
    except duckdb.Error:  # a warehouse made before the state was kept: every view is made again
        return {}
    state = {view: {"sql": sql, "columns": json.loads(columns), "files": {}} for view, sql, columns in views}
    for view, file, ino, mtime_ns, size in files:
        if view in state:
            state[view]["files"][file] = (ino, mtime_ns, size)
    return state


def _unchanged(con, name: str, sql: str, target: Path, files: dict, before: dict | None, views: set[str]) -> bool:
    """Whether view ``name`` as it is reads ``files`` as a new view would: the same SQL, no file gone, and
    every file written since the view was made has exactly the view's columns and types (a file with a
    column more, one less or another type would change what a new view's ``union_by_name`` gives)."""
    if before is None or before["sql"] != sql or name not in views or set(before["files"]) - set(files):
        return False
    for file, stamp in files.items():
        if before["files"].get(file) != stamp:
            path = str((target / file if target.is_dir() else target).resolve()).replace("'", "''")
            if _columns(con, f"read_parquet('{path}')") != before["columns"]:
                return False
    return True


def refresh_views(warehouse: Path, store: TableStore) -> dict[str, Path]:
    """(Re)create one view per stored table (``TableStore.tables``); every stored table's target, by name
    (:func:`refresh` also says which views were made again).

    The warehouse's only writer calls this: per-clip runs write Parquet files and never open the DuckDB
    file, so runs on any number of processes or machines never contend for its write lock."""
    return refresh(warehouse, store)[0]


def refresh(warehouse: Path, store: TableStore) -> tuple[dict[str, Path], list[str]]:
    """:func:`refresh_views`, and the names of the views it made again. A view over a folder sees files
    written since without being made again, so a view is only made again when a new one would read
    otherwise (:func:`_unchanged`): making a view with ``union_by_name`` reads every file's footer, which at
    thousands of clips per table costs seconds per view. Views of tables no longer stored are left as they
    are, as before."""
    tables = store.tables()
    made = []
    with connect(warehouse) as con:
        state = _recorded(con)
        views = {r[0] for r in con.execute(
            "SELECT view_name FROM duckdb_views() WHERE NOT internal AND schema_name = 'main'").fetchall()}
        current = {}
        for name, target in tables.items():
            sql, files = _view_sql(name, target), _files_of(target)
            before = state.get(name)
            if _unchanged(con, name, sql, target, files, before, views):
                current[name] = {**before, "files": files}
                continue
            con.execute(sql)
            made.append(name)
            current[name] = {"sql": sql, "columns": _columns(con, name), "files": files}
        _record(con, current)
    return tables, made


def _record(con: duckdb.DuckDBPyConnection, state: dict[str, dict]) -> None:
    views = pd.DataFrame([(name, s["sql"], json.dumps(s["columns"])) for name, s in state.items()],
                         columns=["view", "sql", "columns"])
    files = pd.DataFrame([(name, file, *stamp) for name, s in state.items() for file, stamp in s["files"].items()],
                         columns=["view", "file", "ino", "mtime_ns", "size"]).astype(
        {"view": object, "file": object, "ino": "int64", "mtime_ns": "int64", "size": "int64"})
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {_STATE}")
    con.register("_views", views)
    con.register("_files", files)
    con.execute(f"CREATE OR REPLACE TABLE {_STATE}.views AS SELECT * FROM _views")
    con.execute(f"CREATE OR REPLACE TABLE {_STATE}.files AS SELECT * FROM _files")
    con.unregister("_views")
    con.unregister("_files")


def table_digest(warehouse: Path, name: str, columns: list[str] | None = None) -> tuple[int, str]:
    """(rows, sha256) of a warehouse table's rows in a canonical order: equal for equal contents, whatever
    order the clips were written in or which process wrote them."""
    frame = query(warehouse, f'SELECT {", ".join(columns) if columns else "*"} FROM "{name}"')
    rows = sorted(json.dumps(r, default=str, sort_keys=True)
                  for r in frame.astype(object).where(frame.notna(), None).to_dict("records"))
    return len(rows), hashlib.sha256("\n".join(rows).encode()).hexdigest()


def write_table(warehouse: Path, name: str, frame: pd.DataFrame) -> None:
    with connect(warehouse) as con:
        con.register("_frame", frame)
        con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM _frame")
        con.unregister("_frame")


def query(warehouse: Path, sql: str) -> pd.DataFrame:
    with connect(warehouse, read_only=True) as con:
        return con.execute(sql).df()
