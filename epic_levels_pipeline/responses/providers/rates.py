"""What a provider's pricing says about one model's calls: its price per token and the media tokens a clip
costs by its route (plain values; each provider's pricing module fills them, :mod:`..pricing` gathers them)."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    """USD per 1M tokens. ``audio_input`` None = audio input billed as other input."""

    input: float
    output: float
    audio_input: float | None = None


@dataclass(frozen=True)
class MediaRates:
    """How one model's calls are billed for a clip: the route and tokens for ``duration_s`` seconds."""

    route: str
    video_per_s: float = 0.0      # tokens per second of video (continuous routes)
    frame_tokens: int = 0         # tokens per sampled frame (frames route)
    frames_fps: float = 0.0
    max_frames: int = 0
    audio_per_s: float = 0.0

    def video_tokens(self, duration_s: float) -> int:
        if self.frame_tokens:
            return self.frame_tokens * min(self.max_frames, max(1, math.ceil(duration_s * self.frames_fps - 1e-9)))
        return round(self.video_per_s * duration_s)

    def audio_tokens(self, duration_s: float) -> int:
        return round(self.audio_per_s * duration_s)


def price_of(prices: dict[str, Price], name: str, model: str) -> Price | None:
    """The price under the full name (``openai/gpt-4o``) or the model alone (``gpt-4o``)."""
    return prices.get(name) or prices.get(model)
