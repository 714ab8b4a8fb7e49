"""The options several commands share: the models, the annotations and media roots, the media settings of model
calls, and lists.

Every list option is one comma-separated value (``--clips A,B``, ``--models A,B``, ``--datasets A,B``). The former
space-separated ``--clips A B`` is still read, with a deprecation warning (:func:`legacy_space_lists`)."""

from __future__ import annotations

import argparse
import sys

# The list options that took space-separated values before every list became comma-separated.
SPACE_SEPARATED_BEFORE = ("--clips",)


def about(text: str) -> dict[str, str]:
    """A command's one-line help, shown in ``epic-levels --help`` and atop its own ``--help``."""
    return {"help": text, "description": text[0].upper() + text[1:] + "."}


def names(value: str | None) -> list[str] | None:
    """A comma-separated option as a list (None when empty)."""
    return [v.strip() for v in value.split(",") if v.strip()] or None if value else None


def comma_list(value: str) -> list[str]:
    """The ``type`` of a list option: ``"a,b"`` → ``["a", "b"]`` (empty: ``[]``)."""
    return [v.strip() for v in value.split(",") if v.strip()]


def legacy_space_lists(argv: list[str], err=None) -> list[str]:
    """``argv`` with the former space-separated form of a list option (``--clips A B``) joined into the comma form
    (``--clips A,B``), saying once on stderr that the old form is deprecated; ``--clips`` with no value still means
    every clip."""
    out, i = [], 0
    while i < len(argv):
        out.append(argv[i])
        if argv[i] in SPACE_SEPARATED_BEFORE:
            values, i = [], i + 1
            while i < len(argv) and not argv[i].startswith("-"):
                values.append(argv[i])
                i += 1
            if len(values) > 1:
                print(f"warning: {out[-1]} {' '.join(values)}: space-separated values are deprecated; write "
                      f"{out[-1]} {','.join(values)}", file=err or sys.stderr)
            out.append(",".join(values))
            continue
        i += 1
    return out


def location_flags(p: argparse.ArgumentParser, media: bool = False) -> None:
    """``--annotations DIR`` (and ``--media DIR``): this command's annotations and media roots (see settings.py)."""
    p.add_argument("--annotations", default=None, metavar="DIR",
                   help="annotations root: the upstream repositories as cloned, or the bundled layout "
                        "(default: $EPIC_LEVELS_ANNOTATIONS, else [data].annotations of epic-levels.toml, else data/annotations)")
    if media:
        p.add_argument("--media", default=None, metavar="DIR",
                       help="media root: source videos as the datasets' download tools lay them out, or <dataset>/<id>.mp4 "
                            "(default: $EPIC_LEVELS_MEDIA_ROOT, else [data].media of epic-levels.toml, else data/media)")


def media_flags(p: argparse.ArgumentParser) -> None:
    """``--media-resolution`` and ``--fps``: the same for the calls (``run``) and the estimate."""
    p.add_argument("--media-resolution", choices=["low", "medium", "high"], default=None,
                   help="video media resolution of model calls (default: the model's; low = 66 tokens a frame)")
    p.add_argument("--fps", type=float, default=None, help="video frames sampled per second (default 1)")


def models_flags(p: argparse.ArgumentParser, default: str = "", default_text: str = "none", what: str = "") -> None:
    """``--models``, ``--model-config`` and ``--endpoint``: the same for ``run``, ``estimate`` and ``probe``."""
    p.add_argument("--models", default=default, metavar="NAME,…",
                   help=what or "comma-separated model NAMEs of the models file, or inline PROVIDER/MODEL names "
                        "(gemini/…, openai/…, vllm/…, sglang/…) with their provider's defaults "
                        f"(default: {default_text})")
    p.add_argument("--model-config", default="", metavar="FILE",
                   help="the models file (default: models.toml at the project root, when there is one)")
    p.add_argument("--endpoint", default="", metavar="URL",
                   help="base URL of the inline models' server, e.g. http://127.0.0.1:8000/v1 (default: the "
                        "provider's *_BASE_URL variable, else its usual address)")


def clips_flag(p: argparse.ArgumentParser) -> None:
    """``--clips KEY,…``: the clips a command works on (default every clip of the manifest)."""
    p.add_argument("--clips", type=comma_list, default=[], metavar="KEY,…",
                   help="comma-separated clip keys, e.g. epic_sounds__P09_08__45-75 (default: every clip of the "
                        "manifest, data/clips.csv)")


def clip_flag(p: argparse.ArgumentParser) -> None:
    """``--clip KEY``: the one clip a command prints."""
    p.add_argument("--clip", required=True, metavar="KEY",
                   help="the clip's key, dataset__video__start-end, e.g. epic_sounds__P09_08__45-75")
