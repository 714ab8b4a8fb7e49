"""``epic-levels import-replies``: score replies made elsewhere (a JSONL/CSV file or an Inspect eval log) as a
model of responder ``external``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..settings import Paths

from .options import about


def add_parser(sub) -> None:
    p = sub.add_parser("import-replies", **about(
        "score replies made elsewhere (JSONL/CSV of item_id, condition, reply, or an Inspect eval log) as"
        " a model of responder external"))
    p.add_argument("file", nargs="?", default="", help="JSONL or CSV with item_id, condition, reply")
    p.add_argument("--model", required=True, metavar="NAME", help="the model name the replies are scored under")
    p.add_argument("--inspect-log", default="", metavar="LOG",
                   help="an Inspect eval log of the export's task, instead of FILE")
    p.set_defaults(fn=cmd_import_replies)


def cmd_import_replies(args: argparse.Namespace) -> int:
    if bool(args.file) == bool(args.inspect_log):
        print("error: give a replies FILE or --inspect-log LOG (one of them)", file=sys.stderr)
        return 2
    return main_import_replies(Path(args.file) if args.file else None, args.model,
                               Path(args.inspect_log) if args.inspect_log else None, paths=args.project)


def main_import_replies(file: Path | None, model: str, inspect_log: Path | None = None,
                        paths: Paths | None = None) -> int:
    """``epic-levels import-replies FILE --model NAME`` (or ``--inspect-log LOG``): check every line against the
    materialized items, then store the replies as model ``NAME`` of responder ``external``; prints each bad line
    as ``FILE:LINE: message`` and stores nothing when there is one."""
    from ..sharing.export import ExportError, materialized_items
    from ..sharing.replies import RepliesError, read_replies, store_replies
    from ..storage.table_store import TableStore

    paths = paths or Paths.default()
    try:
        items = materialized_items(TableStore(paths.assets))
        if inspect_log is not None:
            from ..sharing.inspect_logs import replies_from_log

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
