"""``epic-levels validate``: check annotation files; each problem printed as ``FILE:ROW:COLUMN: message``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..settings import Paths
from .options import about, location_flags


def add_parser(sub) -> None:
    p = sub.add_parser("validate", **about("validate annotation files; prints FILE:ROW:COLUMN: message"))
    p.add_argument("paths", nargs="*", help="files or folders (default: the annotations root)")
    location_flags(p)
    p.set_defaults(fn=cmd_validate)


def cmd_validate(args: argparse.Namespace) -> int:
    from ..annotations.readers import validate_paths

    paths = [Path(p) for p in args.paths] or [args.project.annotations]
    missing = [p for p in paths if not p.exists()]
    for p in missing:
        print(f"{p}:0:-: no such file or folder")
    problems, files, skipped = validate_paths([p for p in paths if p.exists()])
    errors = [p for p in problems if p.severity == "error"]
    for p in errors:
        print(p)
    dropped = [p for p in problems if p.severity != "error"]
    for p in dropped:
        print(p, file=sys.stderr)
    from ..annotations.layout import locate

    test = sum(len(locate(p).test) for p in paths if p.is_dir())
    print(f"{len(files)} files checked, {len(errors)} problems, {len(dropped)} rows dropped with a reason"
          f"{f', {len(skipped)} other files skipped' if skipped else ''}"
          f"{f' ({test} of the test split, without labels)' if test else ''}", file=sys.stderr)
    return 1 if errors or missing else 0
