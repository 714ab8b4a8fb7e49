"""The tables a report is built from, read from a project's data folder (Parquet files, else the warehouse)."""

from __future__ import annotations

import pandas as pd

from ..settings import Paths

REPORT_TABLES = ("scores", "paired_comparisons", "over_marking", "shortcut_audit", "verdicts", "judge_audit",
                 "caption_scores", "caption_alignments")


def load_table(paths: Paths, name: str) -> pd.DataFrame | None:
    """A table from ``data/assets/<name>.parquet`` or the folder ``data/assets/<name>/`` (one file per clip),
    else the warehouse's table/view of that name; None when none exists (or the warehouse cannot be read)."""
    from ..warehouse import TableStore, query, read_parquet

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
