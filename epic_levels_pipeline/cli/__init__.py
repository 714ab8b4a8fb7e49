"""``epic-levels``: the command line. Errors are caught here once and printed as lines a person can act on."""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import contextmanager
from pathlib import Path

from ..errors import AnnotationError, ClipKeyError, ManifestError
from ..settings import ANNOTATIONS_ENV, MEDIA_ENV, ConfigError
from . import (captions, estimate, export, import_mcq, import_replies, inspect_logs, media, probe, questions, report,
               run, validate, windows)

# In the order `epic-levels --help` lists them; each module adds its parser and holds its command's body.
COMMANDS = (run, validate, windows, media, questions, captions, report, estimate, probe, import_mcq, export,
            import_replies, inspect_logs)


@contextmanager
def locations(annotations: str | Path | None = None, media: str | Path | None = None):
    """For the duration of one command (the driver's own process): the annotations and media roots given on
    its command line, each through its environment variable, so the Dagster runs it starts read the same.
    Only the command line sets them; library code never writes the environment."""
    saved = {name: os.environ.get(name) for name in (ANNOTATIONS_ENV, MEDIA_ENV)}
    try:
        if annotations:
            os.environ[ANNOTATIONS_ENV] = str(Path(annotations).expanduser().resolve())
        if media:
            os.environ[MEDIA_ENV] = str(Path(media).expanduser().resolve())
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def build_parser() -> argparse.ArgumentParser:
    """The whole command line: every command's parser (the reference page is generated from it)."""
    parser = argparse.ArgumentParser(prog="epic-levels", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        with locations(getattr(args, "annotations", None), getattr(args, "media", None)):
            return args.fn(args)
    except (AnnotationError, ManifestError, ClipKeyError, ConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
