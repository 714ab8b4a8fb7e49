"""Dagster's SQLite instance storage at the cost of its writes, not of its connections (Dagster layer).

Dagster's SQLite storage (the project's ``dagster.yaml``, and temporary instances) opens a new connection
for every event it stores, commits it and closes it again. Its databases are in WAL mode, where closing
the last connection to a file checkpoints the log into the database and deletes it, and every commit
waits for the disk (``synchronous=FULL``): about 20 ms per event on the machines this is built on, for
events a batch run stores by the thousand (a materialization and a planned event per clip per asset).
So in each process that loads the definitions (the run worker, ``epic-levels run``, the benchmark):

- every SQLite connection in WAL mode uses ``synchronous=NORMAL``, SQLite's recommended setting for WAL:
  a commit is still atomic and the database never corrupts; an operating-system crash or power loss
  may lose the last commits, an application crash loses nothing;
- one idle connection stays open to each of the last ``MAX_KEPT`` database files written, so a closing
  connection is never the last one and does not checkpoint; checkpoints happen as SQLite's automatic
  ones (every 1,000 pages of log) and when the process exits.

Nothing about what is stored changes: the same rows, in the same files, read the same way by the UI.
Postgres storage (``deploy/distributed/``) is untouched.
"""

from __future__ import annotations

import atexit
import sqlite3
import threading
from collections import OrderedDict
from pathlib import Path

from sqlalchemy import event
from sqlalchemy.engine import Engine

MAX_KEPT = 16  # database files held open per process (the run storage, the index shard, recent runs)

_kept: OrderedDict[str, sqlite3.Connection] = OrderedDict()
_lock = threading.Lock()
_installed = False


def _main_file(connection: sqlite3.Connection) -> str:
    """The file of the connection's main database ('' for an in-memory or temporary one)."""
    for _seq, name, file in connection.execute("PRAGMA database_list").fetchall():
        if name == "main":
            return file or ""
    return ""


def _keep_open(file: str) -> None:
    """Hold one idle connection to ``file`` (most recently used last; the oldest is closed past MAX_KEPT)."""
    with _lock:
        if file in _kept:
            _kept.move_to_end(file)
            return
        keeper = sqlite3.connect(file, check_same_thread=False)
        keeper.execute("SELECT count(*) FROM sqlite_master").fetchall()  # maps the WAL index: a live reader
        _kept[file] = keeper
        while len(_kept) > MAX_KEPT:
            _kept.popitem(last=False)[1].close()
        for gone in [f for f in _kept if not Path(f).exists()]:  # a temporary instance's deleted files
            _kept.pop(gone).close()


def _on_connect(dbapi_connection, _record) -> None:
    if not isinstance(dbapi_connection, sqlite3.Connection):
        return
    mode = dbapi_connection.execute("PRAGMA journal_mode").fetchone()
    if not mode or str(mode[0]).lower() != "wal":
        return  # rollback-journal databases keep SQLite's defaults
    dbapi_connection.execute("PRAGMA synchronous=NORMAL")
    file = _main_file(dbapi_connection)
    if file:
        _keep_open(file)


def close_kept() -> None:
    """Close the idle connections (each last close checkpoints its file's log)."""
    with _lock:
        while _kept:
            _kept.popitem(last=False)[1].close()


def install() -> None:
    """Apply the settings above to every SQLite engine this process creates from now on (idempotent)."""
    global _installed
    with _lock:
        if _installed:
            return
        event.listen(Engine, "connect", _on_connect)
        atexit.register(close_kept)
        _installed = True
