"""Where materialized tables are stored: one Parquet file per table, or per clip of a per-clip table."""

from __future__ import annotations

import os
from pathlib import Path


class TableStore:
    """The one place that knows where materialized tables are stored.

    An unpartitioned table is ``<root>/<name>.parquet`` (``.json`` for the one output that is not a table,
    the entity catalogue); a per-clip table is ``<root>/<name>/<clip>.parquet``, one file per partition.
    The IO manager writes through it; the CLI, the report, the estimate and the sensor read through it, so
    a change of layout is one change here.
    """

    def __init__(self, root: Path):
        self.root = Path(root)

    def path(self, name: str, partition: str | None = None) -> Path:
        """The Parquet file of table ``name`` (of one clip when ``partition`` is given)."""
        base = self.root / name
        return base / f"{partition}.parquet" if partition else base.with_suffix(".parquet")

    def consolidated_path(self, name: str) -> Path:
        """The one-file copy of every clip file of a per-clip table that cross-clip reads keep up to date
        (``read_partitions``); under a dot folder, so it is no table of its own and in no warehouse view."""
        return self.root / ".all-clips" / f"{name}.parquet"

    def document_path(self, name: str) -> Path:
        """The JSON document of an unpartitioned output that is not a table (the entity catalogue)."""
        return self.path(name).with_suffix(".json")

    def folder(self, name: str) -> Path:
        """The folder of a per-clip table's files (what its warehouse view globs)."""
        return self.root / name

    def partition_files(self, name: str) -> list[Path]:
        """Every clip file of a per-clip table, sorted (none when it was never materialized)."""
        folder = self.folder(name)
        return sorted(folder.glob("*.parquet")) if folder.is_dir() else []

    def tables(self) -> dict[str, Path]:
        """Every stored table by name: an unpartitioned table's file, or a per-clip table's folder (with files).

        This is how a table reaches the warehouse: anything written through this store is found here, and
        the warehouse writer makes a view of it."""
        found: dict[str, Path] = {}
        if not self.root.is_dir():
            return found
        for entry in sorted(self.root.iterdir()):
            if entry.name.startswith("."):
                continue
            if entry.is_file() and entry.suffix == ".parquet":
                found[entry.stem] = entry
            elif entry.is_dir() and any(entry.glob("*.parquet")):
                found[entry.name] = entry
        return found

    def retire(self, name: str, partition: str) -> Path | None:
        """Move one clip's file aside into ``<name>/retired/`` (kept for audit); its new path, or None."""
        path = self.path(name, partition)
        if not path.exists():
            return None
        target = self.folder(name) / "retired" / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)
        return target
