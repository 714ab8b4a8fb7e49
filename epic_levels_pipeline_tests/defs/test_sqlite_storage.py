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


def _materialize_batch(instance):
    """Three partitions of two assets in one run; returns what the UI reads back about them."""
    import dagster as dg

    parts = dg.StaticPartitionsDefinition(["a", "b", "c"])
    policy = dg.BackfillPolicy.single_run()

    @dg.asset(partitions_def=parts, backfill_policy=policy)
    def up(context) -> None:
        return None

    @dg.asset(partitions_def=parts, backfill_policy=policy, deps=[up])
    def down(context) -> None:
        return None

    result = dg.materialize([up, down], instance=instance,
                            tags={"dagster/asset_partition_range_start": "a", "dagster/asset_partition_range_end": "c"})
    assert result.success
    out = {}
    for key in (dg.AssetKey("up"), dg.AssetKey("down")):
        mats = instance.fetch_materializations(key, limit=10).records
        planned = instance.get_event_records(dg.EventRecordsFilter(
            dg.DagsterEventType.ASSET_MATERIALIZATION_PLANNED, asset_key=key))
        out[key.to_user_string()] = (sorted(instance.get_materialized_partitions(key)),
                                     sorted(r.partition_key for r in mats), len(planned),
                                     instance.get_latest_materialization_event(key) is not None)
    for record in instance.get_asset_records([dg.AssetKey("up"), dg.AssetKey("down")]):
        entry = record.asset_entry
        last = entry.last_materialization_record
        out[f"row {entry.asset_key.to_user_string()}"] = (last.storage_id, last.partition_key,
                                                          entry.last_run_id == result.run_id)
    out["run events"] = len(instance.all_logs(result.run_id))
    return out


def test_batched_event_log_stores_what_the_plain_one_does(tmp_path, monkeypatch):
    """The same run in Dagster's plain SQLite storage and in the batched one: same partitions, events, rows;
    the batched one stores each batch in one transaction (fewer connections)."""
    import dagster as dg

    monkeypatch.delenv("DAGSTER_EVENT_BATCH_SIZE", raising=False)
    with dg.instance_for_test() as plain:
        expected = _materialize_batch(plain)
    calls = []
    original = sqlite_storage.BatchedSqliteEventLogStorage._store_asset_events
    monkeypatch.setattr(sqlite_storage.BatchedSqliteEventLogStorage, "_store_asset_events",
                        lambda self, events: (calls.append(len(events)), original(self, events)))
    with dg.instance_for_test(overrides=sqlite_storage.instance_config(str(tmp_path / "storage"))) as batched:
        assert isinstance(batched.event_log_storage, sqlite_storage.BatchedSqliteEventLogStorage)
        assert _materialize_batch(batched) == expected
    assert expected["up"] == (["a", "b", "c"], ["a", "b", "c"], 3, True)
    assert expected["row up"][2] and expected["row down"][2]  # the last run is recorded on each asset row
    assert max(calls) >= 3  # the planned events and each step's materializations arrived as batches
    sqlite_storage.close_kept()


def test_batched_event_log_keeps_one_engine_per_database(tmp_path, monkeypatch):
    """Dagster's event log makes an engine and a connection per read or write; the project's keeps one engine
    (and its connection) per database file, bounded, and lets them go when the storage is wiped."""
    import dagster as dg

    made = []
    real = sqlite_storage.create_engine
    monkeypatch.setattr(sqlite_storage, "create_engine", lambda url, **kw: (made.append(url), real(url, **kw))[1])
    with dg.instance_for_test(overrides=sqlite_storage.instance_config(str(tmp_path / "storage"))) as instance:
        storage = instance.event_log_storage
        first = _materialize_batch(instance)
        assert len(made) == len(set(made)) <= 3  # the index and the run's database, each once
        assert len(storage._engines_by_shard()) <= sqlite_storage.MAX_KEPT
        instance.wipe()  # deletes the runs' databases: their engines go with them
        assert set(storage._engines_by_shard()) <= {"index"}
        assert not instance.get_latest_materialization_event(dg.AssetKey("up"))
        again = _materialize_batch(instance)  # the wiped files are made again, through new engines
        assert again["up"] == first["up"] and again["down"] == first["down"]
    assert not storage._engines_by_shard()  # disposed of with the instance
    sqlite_storage.close_kept()
