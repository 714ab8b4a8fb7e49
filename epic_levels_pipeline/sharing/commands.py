"""The command-line entry points of the sharing commands (``export``, ``import-replies``), kept out of cli.py."""

from __future__ import annotations

import sys
from pathlib import Path

from ..settings import Paths
from ..warehouse import TableStore


def main_export(out: Path, paths: Paths | None = None) -> int:
    """``epic-levels export --out DIR``: the materialized bank as a dataset folder; prints what it wrote."""
    from .export import ExportError, export_from_store

    paths = paths or Paths.default()
    try:
        summary = export_from_store(TableStore(paths.assets), out)
    except ExportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {summary.rows} items to {summary.out} ({len(summary.files)} files)")
    for fmt, splits in summary.rows_by_config.items():
        print(f"  {fmt}: " + ", ".join(f"{d} {n}" for d, n in splits.items()))
    print(f"load with: datasets.load_dataset({str(summary.out)!r}, 'multiple_choice')")
    return 0
