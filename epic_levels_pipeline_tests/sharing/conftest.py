"""A run's materialized items (the bundled bank's, written through the table store) and their export."""

import pytest

from epic_levels_pipeline.settings import Paths
from epic_levels_pipeline.sharing.export import export_from_store
from epic_levels_pipeline.storage.parquet import write_parquet
from epic_levels_pipeline.storage.table_store import TableStore


def write_store(paths: Paths, tables: dict) -> TableStore:
    """``items`` (and ``questions``) per clip, in the layout the IO manager writes."""
    store = TableStore(paths.assets)
    for name in ("items", "questions"):
        for clip, frame in tables[name].groupby("clip_key", sort=True):
            write_parquet(frame.reset_index(drop=True), store.path(name, clip))
    return store


@pytest.fixture(scope="session")
def exported(offline_bank, tmp_path_factory):
    """(project paths with the materialized items, the export folder) of the bundled bank."""
    paths = Paths(tmp_path_factory.mktemp("sharing") / "project")
    store = write_store(paths, offline_bank)
    out = paths.root / "export"
    export_from_store(store, out)
    return paths, out
