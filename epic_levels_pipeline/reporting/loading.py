"""The tables a report is built from, read from a project's data folder (Parquet files, else the warehouse)."""

from __future__ import annotations

import pandas as pd

from ..settings import Paths

REPORT_TABLES = ("scores", "paired_comparisons", "over_marking", "shortcut_audit", "verdicts", "judge_audit",
                 "caption_scores", "caption_alignments", "vqa_official_scores",
                 "judge_agreement", "judge_swap", "media_integrity", "spend")


def load_table(paths: Paths, name: str) -> pd.DataFrame | None:
    """A table from ``data/assets/<name>.parquet`` or the folder ``data/assets/<name>/`` (one file per clip),
    else the warehouse's table/view of that name; None when none exists (or the warehouse cannot be read)."""
    from ..storage.parquet import read_parquet
    from ..storage.table_store import TableStore
    from ..storage.views import query

    store = TableStore(paths.assets)
    file, clip_files = store.path(name), store.partition_files(name)
    if file.exists():
        return read_parquet([file])
    if clip_files:
        return read_parquet(clip_files)
    if paths.warehouse.exists():
        try:
            found = query(paths.warehouse, "SELECT count(*) AS k FROM information_schema.tables "
                                           f"WHERE table_name = '{name}'")
            if int(found["k"].iloc[0]):
                return query(paths.warehouse, f'SELECT * FROM "{name}"')
        except Exception:  # noqa: BLE001 - a missing or unreadable warehouse means "no table", stated in the report
            return None
    return None


def caption_timeline_rows(paths: Paths, sample_responder: str) -> pd.DataFrame | None:
    """The ``caption_alignments`` rows the report's caption timelines are drawn from, without reading every
    clip's file: the first responder with a model under ``clip`` (greedy), else ``sample_responder``, and
    for each dataset the first clip (by key) with its captions — those clips' files whole. The section picks
    the same responder and clips from these rows as from the whole table. A table stored as one file (or
    only in the warehouse) is read whole, as :func:`load_table` reads it."""
    import duckdb

    from ..storage.parquet import read_parquet
    from ..storage.table_store import TableStore

    store = TableStore(paths.assets)
    if store.path("caption_alignments").exists() or not store.partition_files("caption_alignments"):
        return load_table(paths, "caption_alignments")
    glob = str(store.folder("caption_alignments").resolve() / "*.parquet").replace("'", "''")
    rows = f"read_parquet('{glob}', union_by_name = true) WHERE condition = 'clip' AND matcher = 'greedy'"
    with duckdb.connect() as con:
        models = con.execute(f"SELECT min(responder) FROM {rows} AND coalesce(model, '') <> ''").fetchone()[0]
        keys = con.execute(f"SELECT min(clip_key) FROM {rows} AND responder = ? GROUP BY dataset ORDER BY 1",
                           [models or sample_responder]).fetchall()
    return read_parquet([store.path("caption_alignments", key) for (key,) in keys])
