"""How many input tokens Gemini bills for a stretch of video, and the smallest context cache it accepts.

Pure (no SDK import): shared by the Gemini provider (is a clip window big enough to cache?) and by the
estimate (what a run costs). The figures are Google's documented ones, as assumptions:

* **Video**: :data:`FRAME_TOKENS` per sampled frame — 258 at the default (and medium/high) media
  resolution, 66 at ``MEDIA_RESOLUTION_LOW`` — at ``fps`` frames per second (default 1).
* **Audio**: :data:`AUDIO_TOKENS_PER_S` (32) per second.
* **Context caching** refuses contents below a per-model minimum (:data:`MIN_CACHE_TOKENS`: the
  values the API enforces in its "Cached content is too small" answer: 1,024 for 2.5-flash, 2,048 for
  2.5-flash-lite, 4,096 for 2.5-pro and newer models); unknown models are assumed to need
  :data:`DEFAULT_MIN_CACHE_TOKENS`.
"""

from __future__ import annotations

DEFAULT_FPS = 1.0
AUDIO_TOKENS_PER_S = 32
FRAME_TOKENS = {"MEDIA_RESOLUTION_LOW": 66, "MEDIA_RESOLUTION_MEDIUM": 258, "MEDIA_RESOLUTION_HIGH": 258}
DEFAULT_FRAME_TOKENS = 258
RESOLUTION_NAMES = {"low": "MEDIA_RESOLUTION_LOW", "medium": "MEDIA_RESOLUTION_MEDIUM",
                    "high": "MEDIA_RESOLUTION_HIGH"}

MIN_CACHE_TOKENS = {"gemini-2.5-flash-lite": 2048, "gemini-2.5-flash": 1024, "gemini-2.5-pro": 4096}
DEFAULT_MIN_CACHE_TOKENS = 4096


def resolution_name(value: str | None) -> str | None:
    """``low``/``medium``/``high`` (any case) or the API's ``MEDIA_RESOLUTION_*`` name → the API
    name; None/empty → None (the model's default); ValueError naming the choices otherwise."""
    if not value:
        return None
    text = str(value).strip()
    if text.upper() in FRAME_TOKENS:
        return text.upper()
    if text.lower() in RESOLUTION_NAMES:
        return RESOLUTION_NAMES[text.lower()]
    raise ValueError(f"media resolution {value!r}: expected one of low, medium, high")


def video_tokens_per_s(media_resolution: str | None = None, fps: float | None = None) -> float:
    """Video tokens per second of clip at that resolution and sampling rate."""
    frame = FRAME_TOKENS.get(resolution_name(media_resolution) or "", DEFAULT_FRAME_TOKENS)
    return frame * (float(fps) if fps else DEFAULT_FPS)


def media_tokens(seconds: float, media_resolution: str | None = None, fps: float | None = None) -> int:
    """Video + audio tokens of ``seconds`` of clip (rounded)."""
    return round(seconds * (video_tokens_per_s(media_resolution, fps) + AUDIO_TOKENS_PER_S))


def min_cache_tokens(model: str) -> int:
    """The smallest content ``model`` caches (the longest known name ``model`` starts with)."""
    name = model.removeprefix("models/")
    for known in sorted(MIN_CACHE_TOKENS, key=len, reverse=True):
        if name.startswith(known):
            return MIN_CACHE_TOKENS[known]
    return DEFAULT_MIN_CACHE_TOKENS
