"""``epic-levels``: the command line. Errors are caught here once and printed as lines a person can act on, with
the exit codes :data:`EPILOG` states; everything a command prints goes through ``terminal.escaped_output`` (a value
read from a file cannot drive the terminal)."""

from __future__ import annotations

import argparse
import sys

from ..errors import AnnotationError, ClipKeyError, ManifestError
from ..settings import ConfigError, Paths
from ..terminal import escaped_output
from .options import legacy_space_lists
from . import (captions, estimate, export, import_mcq, import_replies, inspect_logs, media, probe, questions, report,
               run, validate, windows)

DESCRIPTION = ("epic-levels builds an evidence-levelled video-and-audio question-answering benchmark from "
               "egocentric-kitchen annotations (EPIC-SOUNDS, EPIC-KITCHENS-100, HD-EPIC), asks it of models and of "
               "offline reference responders, and scores the replies corrected for chance. Start with "
               "`epic-levels run`; `epic-levels COMMAND --help` describes each command.")
EPILOG = ("List options take comma-separated values (--clips A,B; --models A,B). Exit codes: 0 done; 1 findings "
          "(problems in the data, a failed run, a model that refused a route); 2 usage or configuration (a bad "
          "option, a models file or settings problem). Documentation: docs/ in the repository "
          "(docs/getting-started.md).")

# In the order `epic-levels --help` lists them; each module adds its parser and holds its command's body.
COMMANDS = (run, validate, windows, media, questions, captions, report, estimate, probe, import_mcq, export,
            import_replies, inspect_logs)


def build_parser() -> argparse.ArgumentParser:
    """The whole command line: every command's parser (the reference page is generated from it)."""
    parser = argparse.ArgumentParser(prog="epic-levels", description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("epic-levels")
    except PackageNotFoundError:  # run from a source tree that is not installed
        return "(not installed)"


def main(argv: list[str] | None = None) -> int:
    """Run one command; its exit code (0 done, 1 findings, 2 usage or configuration)."""
    parser = build_parser()
    try:
        args = parser.parse_args(legacy_space_lists(sys.argv[1:] if argv is None else list(argv)))
    except SystemExit as exc:  # argparse: --help and --version exit 0, a usage error 2
        return int(exc.code or 0)
    with escaped_output():
        try:
            # the roots a command was given travel in its Paths (and a run's config), never through the environment
            args.project = Paths.default(getattr(args, "annotations", None), getattr(args, "media", None))
            return args.fn(args)
        except AnnotationError as exc:  # a problem in the data: a finding
            print(f"error: {exc}", file=sys.stderr)
            return 1
        except (ManifestError, ClipKeyError, ConfigError) as exc:  # the project's settings or the command's options
            print(f"error: {exc}", file=sys.stderr)
            return 2


if __name__ == "__main__":
    sys.exit(main())
