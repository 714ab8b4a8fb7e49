"""The options several commands share: the models, the annotations and media roots, the media settings of model
calls, and comma-separated lists."""

from __future__ import annotations

import argparse


def names(value: str | None) -> list[str] | None:
    """A comma-separated option as a list (None when empty)."""
    return [v.strip() for v in value.split(",") if v.strip()] or None if value else None


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


def models_flags(p: argparse.ArgumentParser, default: str = "") -> None:
    """``--models`` and ``--model-config``: the same for ``run``, ``estimate`` and ``probe``."""
    p.add_argument("--models", default=default, help="comma-separated model NAMEs of the models file, or inline "
                   "PROVIDER/MODEL names (gemini/…, openai/…, vllm/…, sglang/…) with their provider's defaults")
    p.add_argument("--model-config", default="", metavar="FILE",
                   help="the models file (default: models.toml at the project root, when there is one)")
