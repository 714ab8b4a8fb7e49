"""``epic-levels inspect-logs``: the materialized verdicts as Inspect eval logs, for ``inspect view``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..settings import Paths

from .options import about


def add_parser(sub) -> None:
    p = sub.add_parser("inspect-logs", **about("write the materialized verdicts as Inspect eval logs (inspect view)"))
    p.add_argument("--out", required=True, metavar="DIR", help="log folder (one .eval log per responder × model)")
    p.set_defaults(fn=cmd_inspect_logs)


def cmd_inspect_logs(args: argparse.Namespace) -> int:
    return main_inspect_logs(Path(args.out), args.project)


def main_inspect_logs(out: Path, paths: Paths | None = None) -> int:
    """``epic-levels inspect-logs --out DIR``: the materialized verdicts as Inspect eval logs (one per
    responder × model), for ``inspect view --log-dir DIR``."""
    from ..sharing.export import ExportError, materialized_items
    from ..sharing.inspect_logs import write_run_logs
    from ..storage.parquet import read_parquet
    from ..storage.table_store import TableStore

    paths = paths or Paths.default()
    store = TableStore(paths.assets)
    try:
        items = materialized_items(store)
    except ExportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    files = store.partition_files("verdicts")
    if not files:
        print(f"error: no materialized verdicts under {store.folder('verdicts')}; run `epic-levels run` first",
              file=sys.stderr)
        return 1
    verdicts = read_parquet(files)
    for path in write_run_logs(verdicts, items, out):
        print(f"wrote {path}")
    print(f"view with: inspect view --log-dir {out}")
    return 0
