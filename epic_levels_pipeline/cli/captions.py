"""``epic-levels captions``: a clip's caption reference structure beside one responder's caption."""

from __future__ import annotations

import argparse
import sys

from ..settings import Paths
from .options import about, clip_flag, location_flags


def add_parser(sub) -> None:
    from ..captions.prompt import CONDITIONS

    p = sub.add_parser("captions", **about("print a clip's caption reference structure beside a responder's caption"))
    clip_flag(p)
    p.add_argument("--responder", default="oracle", metavar="NAME",
                   help="an offline caption responder (oracle, jitter_1s, presence, …) or a model's responder, as in "
                        "the caption_responses table (default oracle)")
    p.add_argument("--condition", default="clip", choices=CONDITIONS,
                   help="the condition the caption was made under (default clip)")
    location_flags(p)
    p.set_defaults(fn=cmd_captions)


def cmd_captions(args: argparse.Namespace) -> int:
    """The clip's reference structure beside one responder's caption, from the materialized tables."""
    from ..annotations.clips import Clip
    from ..captions.track import side_by_side
    from ..storage.parquet import read_parquet
    from ..storage.table_store import TableStore

    paths = args.project
    key = Clip.from_key(args.clip).key
    store = TableStore(paths.assets)
    files = {name: store.path(name, key) for name in ("caption_references", "caption_responses")}
    missing = [name for name, path in files.items() if not path.exists()]
    if missing:
        print(f"error: {', '.join(missing)} not materialized for clip {key} (looked for "
              f"{files[missing[0]]}); run `epic-levels run --clips {key}` first", file=sys.stderr)
        return 1
    references, responses = read_parquet([files["caption_references"]]), read_parquet([files["caption_responses"]])
    try:
        print(side_by_side(references, responses, key, args.responder, args.condition))
    except KeyError as exc:
        have = responses[["responder", "model", "condition"]].drop_duplicates()
        options = ", ".join(sorted({f"{r.responder}/{r.condition}" for r in have.itertuples()}))
        print(f"error: {exc.args[0]}; materialized: {options}", file=sys.stderr)
        return 1
    return 0
