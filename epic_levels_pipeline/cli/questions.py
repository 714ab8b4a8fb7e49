"""``epic-levels questions``: a clip's questions (and format variants) as a person reads them."""

from __future__ import annotations

import argparse
import json
import sys

from ..settings import Paths
from .options import about, clip_flag, location_flags


def add_parser(sub) -> None:
    from ..formats.registry import item_formats

    p = sub.add_parser("questions", **about("print a clip's questions (and format variants) as a person reads them"))
    clip_flag(p)
    p.add_argument("--format", choices=item_formats(),
                   help="print the clip's items in this format, as they are sent (default: the base questions with "
                        "level, subtype, options, key and provenance)")
    location_flags(p)
    p.set_defaults(fn=cmd_questions)


def _bank_for_clip(paths: Paths, key: str):
    """The clip's questions (and items) from the warehouse if materialized, else computed now."""
    from ..storage.parquet import read_parquet
    from ..storage.table_store import TableStore

    store = TableStore(paths.assets)
    qfile, ifile = store.path("questions", key), store.path("items", key)
    if qfile.exists():
        return read_parquet([qfile]), read_parquet([ifile]) if ifile.exists() else None, "warehouse"
    from ..annotations.catalogue import build_catalogue
    from ..annotations.clips import Clip
    from ..annotations.clip_rows import clip_annotations
    from ..annotations.readers import load_annotations
    from ..pipeline import clip_chain

    clip = Clip.from_key(key)
    ann = load_annotations(paths.annotations)
    cat = build_catalogue(ann)
    chain = clip_chain(clip, clip_annotations(ann, clip), cat)
    return chain.bank.questions, chain.items, "computed now (not materialized yet)"


def cmd_questions(args: argparse.Namespace) -> int:
    from ..bank.build import render_question

    paths = args.project
    questions, items, source = _bank_for_clip(paths, args.clip)
    print(f"# {args.clip}: {len(questions)} questions ({source})\n")
    if args.format:
        if items is None:
            print("items are not materialized yet; run `epic-levels run` first", file=sys.stderr)
            return 1
        chosen = items[items["format"] == args.format]
        for item in chosen.itertuples():
            print(f"## {item.item_id}  [{item.level} · {item.subtype} · expected: {item.expected} · chance {item.chance:.3f}]")
            print(item.prompt)
            if args.format == "statements":
                for s in json.loads(item.statements):
                    print(f"    {s['letter']}: {'true ' if s['truth'] else 'false'}  (from {s['source']})")
            print()
        return 0
    for _, q in questions.iterrows():
        print(render_question(q))
        print()
    return 0
