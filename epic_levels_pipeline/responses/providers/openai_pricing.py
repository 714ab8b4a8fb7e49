"""How OpenAI-compatible calls are priced: OpenAI's published prices (assumptions) and the media tokens a clip
costs by route (OpenAI's API: frames + ``input_audio``; vLLM / SGLang: ``video_url`` with audio in the video or
separate). Self-hosted models have no price: their cost is the server's time.

* ``frames``: frames × :data:`FRAME_TOKENS` (255: OpenAI's high-detail image rule, 85 + 170 per 512-pixel
  tile; a 448-pixel-wide frame is one tile), the route's frame count (``fps``, at most ``max_frames`` a
  window); ``input_audio`` at :data:`OPENAI_AUDIO_TOKENS_PER_S` (10 a second: one audio token per 100 ms)
  on OpenAI's API. Assumption: the ``-audio`` models take ``input_audio``; others reject it.
* ``video_url`` / ``file_url`` (Qwen2.5-VL / Omni style processors): :data:`LOCAL_VIDEO_TOKENS_PER_S` (2
  frames a second merged in pairs into one temporal patch, a 448×252 frame in 28-pixel patches ≈ 144 a
  second; scaled by ``fps / 2`` when the models file sets ``fps``) and audio (``in_video`` or ``separate``)
  at :data:`LOCAL_AUDIO_TOKENS_PER_S` (25 a second: one audio-encoder frame per 40 ms, as Qwen2-Audio's
  encoder documents).
"""

from __future__ import annotations

from .rates import MediaRates, Price

FRAME_TOKENS = 255
OPENAI_AUDIO_TOKENS_PER_S = 10
LOCAL_VIDEO_TOKENS_PER_S = 144
LOCAL_VIDEO_FPS = 2.0
LOCAL_AUDIO_TOKENS_PER_S = 25

# Assumptions (OpenAI's API pricing page at the time of writing; override with --price MODEL=IN,OUT[,AUDIO_IN]).
PRICES: dict[str, Price] = {
    "gpt-4o-mini": Price(0.15, 0.60),
    "gpt-4o": Price(2.50, 10.00),
    "gpt-4o-mini-audio-preview": Price(0.15, 0.60, audio_input=10.00),
    "gpt-4o-audio-preview": Price(2.50, 10.00, audio_input=40.00),
}


def media_rates(spec) -> MediaRates:
    """The media tokens of a resolved model's calls (:class:`..models_config.ModelSpec`)."""
    hosted = not spec.local  # OpenAI's API (a vLLM / SGLang server is always local)
    audio = {"separate": OPENAI_AUDIO_TOKENS_PER_S if hosted else LOCAL_AUDIO_TOKENS_PER_S,
             "in_video": LOCAL_AUDIO_TOKENS_PER_S, "none": 0}[spec.audio]
    audio_route = {"separate": "input_audio", "in_video": "use_audio_in_video", "none": "none"}[spec.audio]
    if spec.video == "frames":
        fps = spec.fps or 1.0
        return MediaRates(f"frames({fps:g} fps)+{audio_route}", frame_tokens=FRAME_TOKENS, frames_fps=fps,
                          max_frames=spec.max_frames or 32, audio_per_s=audio)
    video = 0.0
    if spec.video in ("video_url", "file_url"):
        video = LOCAL_VIDEO_TOKENS_PER_S * ((spec.fps / LOCAL_VIDEO_FPS) if spec.fps else 1.0)
    return MediaRates(f"{spec.video}+{audio_route}", video_per_s=video, audio_per_s=audio)
