"""``epic-levels estimate``: the calls, tokens and cost a run with models would spend, before spending them."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ..settings import Paths
from .options import about, clips_flag, location_flags, media_flags, models_flags

if TYPE_CHECKING:
    from ..annotations.clips import Clip


def add_parser(sub) -> None:
    p = sub.add_parser("estimate", **about(
        "print the calls, tokens and cost a run with models would spend, before spending them"))
    models_flags(p, "", "the models the models file declares (evaluate = [...]), else gemini/gemini-2.5-flash")
    p.add_argument("--assume-media", action="store_true",
                   help="count the clip and silenced calls of clips whose source video is not there yet (default: "
                        "counted as the run makes them, which skips those)")
    p.add_argument("--price", action="append", metavar="MODEL=IN,OUT[,AUDIO_IN]",
                   help="dollars per 1M input / output (/ audio input) tokens (repeatable; default: the documented "
                        "prices, as assumptions; self-hosted models have none)")
    clips_flag(p)
    media_flags(p)
    location_flags(p)
    p.set_defaults(fn=cmd_estimate)


def cmd_estimate(args: argparse.Namespace) -> int:
    from ..annotations.clips import Clip

    models = [m.strip() for m in args.models.split(",") if m.strip()] or declared_models(args.project,
                                                                                            args.model_config or None)
    return main_estimate(models, args.price or [], media_resolution=args.media_resolution, fps=args.fps,
                         model_config=args.model_config or None, endpoint=args.endpoint or None,
                         clips=[Clip.from_key(key) for key in args.clips] or None, assume_media=args.assume_media,
                         paths=args.project)


def declared_models(paths: Paths, model_config: str | None) -> list[str]:
    """The models the project declares (the models file's ``evaluate``), else the one the estimate shows by default."""
    import os

    from ..plan import PlanError, RunFlags, load_models

    try:
        found = load_models(paths.root, RunFlags(model_config=model_config), os.environ)
    except PlanError:
        found = None  # the estimate reports the file's problems itself
    return list(found.evaluate) if found is not None and found.evaluate else ["gemini/gemini-2.5-flash"]


def main_estimate(argv_models: list[str], price_overrides: list[str] | dict | None = None, *,
                  paths: Paths | None = None, clips: list[Clip] | None = None, out=None,
                  media_resolution: str | None = None, fps: float | None = None,
                  model_config: str | None = None, endpoint: str | None = None, assume_media: bool = False) -> int:
    """Print the estimate for the given models (names may also be comma-separated); 0 ok, 2 on bad input."""
    from ..estimate import (
        DEFAULT_PRICES,
        caching_and_batch,
        estimate,
        price_table_with,
        render_caching_and_batch,
        render_estimate,
    )

    out = out or sys.stdout
    models = [m.strip() for arg in (argv_models or []) for m in str(arg).split(",") if m.strip()]
    if not models:
        print("estimate: name at least one model, e.g. gemini/gemini-2.5-flash or vllm/Qwen/Qwen2.5-Omni-7B "
              f"(priced by default: {', '.join(DEFAULT_PRICES)})", file=sys.stderr)
        return 2
    try:
        prices = price_table_with(price_overrides)
    except ValueError as exc:
        print(f"estimate: {exc}", file=sys.stderr)
        return 2
    if fps is not None and fps <= 0:
        print(f"estimate: --fps must be positive, got {fps:g}", file=sys.stderr)
        return 2
    try:
        frame = estimate(paths or Paths.default(), models, clips=clips, price_table=prices,
                         media_resolution=media_resolution, fps=fps, model_config=model_config, endpoint=endpoint,
                         assume_media=assume_media)
    except ValueError as exc:  # a model name without its provider, an unknown media resolution
        print(f"estimate: {exc}", file=sys.stderr)
        return 2
    print(render_estimate(frame), file=out)
    print("", file=out)
    print(render_caching_and_batch(caching_and_batch(frame, prices)), file=out)
    return 0
