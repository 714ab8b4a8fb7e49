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

``SqliteStorage`` (the project's ``dagster.yaml`` storage, and the benchmark's temporary instances) is Dagster's
SQLite storage, same folders and tables, whose event log also stores a batch of asset events in one
transaction per database instead of two connections per event. Dagster hands a storage such batches when
``DAGSTER_EVENT_BATCH_SIZE`` is set (which this storage does, unless it is already set): the planned events
of a run's partitions and assets, and the materializations of a step's partitions. Each event is stored as
``store_event`` stores it (a row in the run's database, its copy and tags in the index database), in the same
order; only the connections and commits are shared, and each asset's row in the index (its last
materialization, last run) is written once per batch with the values the last of its events leaves.
"""

from __future__ import annotations

import atexit
import os
import sqlite3
import threading
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path

from dagster._core.errors import DagsterInvariantViolationError
from dagster._core.events import ASSET_EVENTS, EVENT_TYPE_TO_PIPELINE_RUN_STATUS
from dagster._core.storage.event_log import SqliteEventLogStorage
from dagster._core.storage.event_log.schema import AssetKeyTable
from dagster._core.storage.sqlalchemy_compat import db_result
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS
from dagster._core.storage.sqlite_storage import DagsterSqliteStorage, _event_logs_directory
from sqlalchemy import create_engine, event
from sqlalchemy import exc as db_exc
from sqlalchemy.engine import Engine
from sqlalchemy.pool import QueuePool

EVENT_BATCH_SIZE = "1000"  # events Dagster buffers per batch before it hands them to the storage
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


def _batchable(entry) -> bool:
    """An asset event (planned, materialization, observation, failure): one row in the run's database, one in
    the index database with its tags and asset row; nothing else to store."""
    kind = entry.dagster_event_type if entry.is_dagster_event else None
    return kind in ASSET_EVENTS and kind not in EVENT_TYPE_TO_PIPELINE_RUN_STATUS


class BatchedSqliteEventLogStorage(SqliteEventLogStorage):
    """Dagster's SQLite event log, storing a batch of asset events in one transaction per database, through
    one engine per database file that keeps its connection (Dagster's creates an engine and a connection for
    every read and write, and disposes of them). As in Dagster's, every use of a connection holds the
    storage's lock, so one connection per file serves every thread; the engines of the last ``MAX_KEPT``
    files are kept (Dagster's first set-up of a file opens a second one for a moment), and all are disposed
    of when the storage is wiped or disposed of."""

    @contextmanager
    def _connect(self, shard: str):
        with self._db_lock:
            engine = self._engines_by_shard().get(shard)
            if engine is None:
                engine = self._new_engine(shard)
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
            with engine.connect() as conn:
                with conn.begin():
                    yield conn

    def _engines_by_shard(self) -> OrderedDict:
        engines = self.__dict__.get("_engines")
        if engines is None:
            engines = self.__dict__["_engines"] = OrderedDict()
        return engines

    def _new_engine(self, shard: str) -> Engine:
        engines = self._engines_by_shard()
        engine = engines[shard] = create_engine(
            self.conn_string_for_shard(shard), poolclass=QueuePool, pool_size=1, max_overflow=4,
            connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS, "check_same_thread": False})
        while len(engines) > MAX_KEPT:
            engines.popitem(last=False)[1].dispose()
        return engine

    def _dispose_engines(self) -> None:
        engines = self._engines_by_shard()
        while engines:
            engines.popitem(last=False)[1].dispose()

    def wipe(self) -> None:
        with self._db_lock:
            self._dispose_engines()
        super().wipe()

    def dispose(self) -> None:
        with self._db_lock:
            self._dispose_engines()
        super().dispose()

    def store_event_batch(self, events) -> None:
        chunk: list = []
        for entry in events:
            if _batchable(entry):
                chunk.append(entry)
                continue
            self._store_asset_events(chunk)
            chunk = []
            self.store_event(entry)
        self._store_asset_events(chunk)

    def _store_asset_events(self, events: list) -> None:
        if len(events) < 2:
            for entry in events:
                self.store_event(entry)
            return
        statements = [self.prepare_insert_event(entry) for entry in events]
        for run_id in dict.fromkeys(entry.run_id for entry in events):
            with self.run_connection(run_id) as conn:
                for entry, statement in zip(events, statements):
                    if entry.run_id == run_id:
                        conn.execute(statement)
        with self.index_transaction() as conn:
            event_ids = []
            for statement in statements:
                with db_result(conn, statement) as result:
                    event_ids.append(result.inserted_primary_key[0])
            if any(event_id is None for event_id in event_ids):
                raise DagsterInvariantViolationError("Cannot store asset event tags for null event id.")
            self._store_asset_event_tags(conn, events, event_ids)
            self._store_asset_rows(conn, events, event_ids)

    def _store_asset_rows(self, conn, events: list, event_ids: list) -> None:
        """Each asset's row as storing the events one by one leaves it: per column, the value of the last
        event that sets it (which columns an event sets depends only on its type, so only the last event of
        each type per asset is looked at); one insert or update per asset instead of one per event."""
        with_index_cols = self._has_asset_key_index_cols_on_connection(conn)
        last: dict = {}
        for i, entry in enumerate(events):
            if entry.dagster_event.asset_key:
                last[(entry.dagster_event.asset_key.to_string(), entry.dagster_event_type)] = i
        rows: dict = {}
        for (asset_key, _kind), i in sorted(last.items(), key=lambda item: item[1]):
            rows.setdefault(asset_key, {}).update(self._get_asset_entry_values(events[i], event_ids[i], with_index_cols))
        for asset_key, values in rows.items():
            if not values:
                continue
            try:
                conn.execute(AssetKeyTable.insert().values(asset_key=asset_key, **values))
            except db_exc.IntegrityError:
                conn.execute(AssetKeyTable.update().values(**values).where(AssetKeyTable.c.asset_key == asset_key))


class SqliteStorage(DagsterSqliteStorage):
    """Dagster's SQLite storage (``storage: sqlite:`` in ``dagster.yaml``, same ``base_dir`` layout) with the
    batched event log. Turns Dagster's event batching on in the process that uses it."""

    def __init__(self, base_dir: str, inst_data=None):
        super().__init__(base_dir, inst_data=inst_data)
        self._event_log_storage = BatchedSqliteEventLogStorage(_event_logs_directory(base_dir))
        os.environ.setdefault("DAGSTER_EVENT_BATCH_SIZE", EVENT_BATCH_SIZE)

    @classmethod
    def from_config_value(cls, inst_data, config_value) -> "SqliteStorage":
        return cls.from_local(inst_data=inst_data, **config_value)


def instance_config(base_dir: str) -> dict:
    """The ``storage`` entry of an instance config (``dagster.yaml``, ``instance_for_test(overrides=...)``)
    for ``SqliteStorage`` under ``base_dir``."""
    return {"storage": {"custom": {"module": __name__, "class": "SqliteStorage", "config": {"base_dir": base_dir}}}}
