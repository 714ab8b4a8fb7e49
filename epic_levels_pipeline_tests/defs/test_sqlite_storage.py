"""Dagster's SQLite storage connections: WAL databases commit with synchronous=NORMAL and stay open once."""

import sqlite3

from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from epic_levels_pipeline.defs import sqlite_storage


def _engine(path):
    return create_engine(f"sqlite:///{path}", poolclass=NullPool)


def test_wal_database_is_kept_open_and_commits_normal(tmp_path):
    sqlite_storage.install()
    path = tmp_path / "events.db"
    with sqlite3.connect(path) as setup:
        setup.execute("PRAGMA journal_mode=WAL")
        setup.execute("CREATE TABLE t (x)")
    engine = _engine(path)
    for i in range(3):
        with engine.connect() as conn, conn.begin():
            assert conn.execute(text("PRAGMA synchronous")).scalar() == 1  # NORMAL
            conn.execute(text("INSERT INTO t VALUES (:x)"), {"x": i})
    engine.dispose()
    assert str(path) in sqlite_storage._kept
    # the kept connection keeps the log: no checkpoint on each close, and nothing is lost
    assert (tmp_path / "events.db-wal").exists()
    with sqlite3.connect(path) as check:
        assert check.execute("SELECT count(*) FROM t").fetchone()[0] == 3
    sqlite_storage.close_kept()
    assert not sqlite_storage._kept


def test_rollback_journal_database_keeps_defaults(tmp_path):
    sqlite_storage.install()
    path = tmp_path / "plain.db"
    engine = _engine(path)
    with engine.connect() as conn:
        assert conn.execute(text("PRAGMA synchronous")).scalar() == 2  # FULL, SQLite's default
    engine.dispose()
    assert str(path) not in sqlite_storage._kept


def test_kept_connections_are_bounded(tmp_path, monkeypatch):
    sqlite_storage.install()
    monkeypatch.setattr(sqlite_storage, "MAX_KEPT", 2)
    for i in range(4):
        path = tmp_path / f"run{i}.db"
        with sqlite3.connect(path) as setup:
            setup.execute("PRAGMA journal_mode=WAL")
        engine = _engine(path)
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        engine.dispose()
    assert list(sqlite_storage._kept) == [str(tmp_path / "run2.db"), str(tmp_path / "run3.db")]
    sqlite_storage.close_kept()
