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


def main_import_replies(file: Path | None, model: str, inspect_log: Path | None = None,
                        paths: Paths | None = None) -> int:
    """``epic-levels import-replies FILE --model NAME`` (or ``--inspect-log LOG``): check every line against the
    materialized items, then store the replies as model ``NAME`` of responder ``external``; prints each bad line
    as ``FILE:LINE: message`` and stores nothing when there is one."""
    from .export import ExportError, materialized_items
    from .replies import RepliesError, read_replies, store_replies

    paths = paths or Paths.default()
    try:
        items = materialized_items(TableStore(paths.assets))
        if inspect_log is not None:
            from .inspect_logs import replies_from_log

            replies = replies_from_log(inspect_log, items)
        else:
            replies = read_replies(file, items)
        stored = store_replies(paths.data, model, replies)
    except RepliesError as exc:
        for line in exc.problems:
            print(line, file=sys.stderr)
        print(f"{len(exc.problems)} problems; nothing imported", file=sys.stderr)
        return 1
    except (ExportError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    counts = replies.frame.groupby("condition").size().to_dict()
    print(f"imported {len(replies.frame)} replies as external/{model} into {stored} (sha256 {replies.sha256}): "
          + ", ".join(f"{c} {n}" for c, n in sorted(counts.items())))
    print("run `epic-levels run` to score them with the other responders (responder external, model "
          f"{model}); items without a reply are skipped rows")
    return 0


def main_inspect_logs(out: Path, paths: Paths | None = None) -> int:
    """``epic-levels inspect-logs --out DIR``: the materialized verdicts as Inspect eval logs (one per
    responder × model), for ``inspect view --log-dir DIR``."""
    from .export import ExportError, materialized_items
    from .inspect_logs import write_run_logs
    from ..warehouse import read_parquet

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
