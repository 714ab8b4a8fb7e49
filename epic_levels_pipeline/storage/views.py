"""The DuckDB warehouse: a view per stored table over its Parquet files, remade only when it would read otherwise."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import duckdb
import pandas as pd

from .parquet import file_stamp
from .table_store import TableStore


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



def _view_sql(name: str, target: Path) -> str:
    """``CREATE OR REPLACE VIEW`` over a table's Parquet file, or every file of a per-clip table's folder."""
    target = target.resolve()
    glob = str(target / "*.parquet" if target.is_dir() else target).replace("'", "''")
    return f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM read_parquet('{glob}', union_by_name = true)"


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
    are."""
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


def query(warehouse: Path, sql: str) -> pd.DataFrame:
    with connect(warehouse, read_only=True) as con:
        return con.execute(sql).df()
