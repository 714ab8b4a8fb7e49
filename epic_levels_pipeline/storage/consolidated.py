"""One consolidated copy of a per-clip table's files, so a cross-clip read opens a few files plus one."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa

from . import parquet
from .parquet import file_stamp, read_parquet

ALL_CLIPS_KEY = b"epic_levels.all_clips"  # the consolidated file's index, in its schema metadata


def _read_consolidated(path: Path) -> tuple[pa.Table, dict[str, tuple[list[int], int, int, dict]]] | None:
    """The consolidated table (without schema metadata) and its index, file name -> (stamp, first row, rows,
    that file's own schema metadata); None when there is none or it cannot be read (it is then rebuilt from
    the clip files)."""
    if not path.exists():
        return None
    try:
        table = parquet.read_file(path)
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
            pieces.append(parquet.read_file(path))
            fresh += 1
    schema = pieces[0].schema if pieces else None
    if not pieces or any(t.num_columns == 0 or not t.schema.equals(schema, check_metadata=False) for t in pieces):
        return read_parquet([p for p, _ in stamps])
    if fresh or len(index) != len(stamps):
        whole = pa.concat_tables([t.replace_schema_metadata(None) for t in pieces]).replace_schema_metadata(
            {ALL_CLIPS_KEY: _index_json([p.name for p, _ in stamps], [s for _, s in stamps], pieces)})
        consolidated.parent.mkdir(parents=True, exist_ok=True)
        parquet.write_file(whole, consolidated)
    return parquet.frame_of(pieces)
