"""One warehouse writer: per-clip runs write only Parquet files; the ``warehouse`` asset (pool
``warehouse_writer``) makes one view per stored table, and every table-producing asset is upstream of it."""

import pandas as pd
import pytest

from epic_levels_pipeline.defs.warehouse.assets import WAREHOUSE_POOL, WAREHOUSE_TABLES
from epic_levels_pipeline.storage.parquet import write_parquet
from epic_levels_pipeline.storage.table_store import TableStore
from epic_levels_pipeline.storage.views import query, refresh_views, table_digest

from ..conftest import SEED_CLIPS
from .conftest import definitions, materialize


def test_every_table_asset_feeds_the_warehouse_writer():
    """A new table (e.g. a caption table) must be added to WAREHOUSE_TABLES, so the writer runs after it."""
    defs = definitions()
    graph = defs.resolve_asset_graph()
    writer = graph.get(next(k for k in graph.get_all_asset_keys() if k.to_user_string() == "warehouse"))
    produced = {k.to_user_string() for k in graph.get_all_asset_keys()} - {"warehouse", "report"}
    assert produced == set(WAREHOUSE_TABLES)
    assert {k.to_user_string() for k in writer.parent_keys} == set(WAREHOUSE_TABLES)
    pools = {k.to_user_string(): a.op.pool for a in defs.assets for k in a.keys}
    assert pools["warehouse"] == WAREHOUSE_POOL == "warehouse_writer"


def test_refresh_views_makes_one_view_per_stored_table(tmp_path):
    store = TableStore(tmp_path / "assets")
    write_parquet(pd.DataFrame({"a": [1, 2]}), store.path("scores"))
    write_parquet(pd.DataFrame({"k": ["x"], "v": [1]}), store.path("questions", "clip_b"))
    write_parquet(pd.DataFrame({"k": ["y"], "v": [2]}), store.path("questions", "clip_a"))
    store.retire("questions", "clip_b")  # retired files are not part of the view
    warehouse = tmp_path / "warehouse.duckdb"
    views = refresh_views(warehouse, store)
    assert set(views) == {"scores", "questions"}
    assert query(warehouse, "select * from questions")["k"].tolist() == ["y"]
    assert len(query(warehouse, "select * from scores")) == 2
    # a clip written later is visible without another refresh (the view globs the folder)
    write_parquet(pd.DataFrame({"k": ["z"], "v": [3]}), store.path("questions", "clip_c"))
    assert table_digest(warehouse, "questions")[0] == 2


def test_per_clip_runs_do_not_open_the_warehouse(graph_copy):
    project, instance = graph_copy.project, graph_copy.instance  # the tables are materialized there
    project.warehouse.unlink()  # the session's run made one: see that the per-clip run makes none
    (project.assets / "questions" / f"{SEED_CLIPS[0]}.parquet").unlink()
    assert materialize(instance, ["clip_annotations", "questions", "distractor_pools"], SEED_CLIPS[0]).success
    assert (project.assets / "questions" / f"{SEED_CLIPS[0]}.parquet").exists()
    assert not project.warehouse.exists()
    assert materialize(instance, ["warehouse"]).success
    assert len(query(project.warehouse, "select * from questions")) > 0
