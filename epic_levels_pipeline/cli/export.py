"""``epic-levels export``: the materialized benchmark as a Hugging Face dataset folder."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..settings import Paths
from .options import about, location_flags


def add_parser(sub) -> None:
    p = sub.add_parser("export", **about("write the materialized benchmark as a Hugging Face dataset folder"))
    p.add_argument("--out", required=True, metavar="DIR",
                   help="output folder (Parquet per format and dataset, JSONL, clips.csv, card)")
    location_flags(p)
    p.set_defaults(fn=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    return main_export(Path(args.out), args.project)


def main_export(out: Path, paths: Paths | None = None) -> int:
    """``epic-levels export --out DIR``: the materialized bank as a dataset folder; prints what it wrote."""
    from ..sharing.export import ExportError, export_from_store
    from ..storage.table_store import TableStore

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
