"""What a run with models of any provider would spend — calls, tokens, cost — before spending it (pure core).

For each model × condition × format the estimate counts one call per item and condition, as
:func:`responses.model_responses` would send them: ``clip`` and ``silenced`` (``epic_sounds`` only) carry
the clip's video, ``no_clip`` is text only. Judge calls are added for a share of the open replies.

**Every number here is an estimate.** The constants:

- **Prompt tokens** ≈ characters / :data:`CHARS_PER_TOKEN` (4): Google's rule of thumb for English text
  ("a token is about 4 characters"). The real count comes from the tokenizer (``count_tokens``).
- **Media tokens per route** (:func:`media_rates`; models are ``PROVIDER/MODEL`` names, bare Gemini names
  still accepted). Media tokens are sent again with *every* media call (an upload is reused, its tokens are
  not); ``silenced`` sends the same video with a silent audio track, so it costs the same tokens.

  - ``gemini``: :data:`VIDEO_TOKENS_PER_S` (258: one frame per second at the default media resolution, 258
    tokens per frame) + :data:`AUDIO_TOKENS_PER_S` (32 tokens per second of audio) = ~290 tokens per second
    of clip, i.e. ~8,700 for a 30-second clip (Google's documented rates). A lower ``media_resolution``
    (66 tokens per frame) or another ``fps`` would change this.
  - ``frames`` route (OpenAI's API by default): frames × :data:`FRAME_TOKENS` — the route's frame count
    (``frames_fps``, at most ``max_frames`` per window: 30 for a 30-second clip at 1 fps) times 255 tokens
    per frame (OpenAI's high-detail image rule: 85 + 170 per 512-pixel tile; a 448-pixel-wide frame is one
    tile) — plus ``input_audio`` at :data:`OPENAI_AUDIO_TOKENS_PER_S` (10 per second: one audio token per
    100 ms, OpenAI's figure for its audio models). Assumption: the ``-audio`` models take ``input_audio``;
    others reject it.
  - ``video_url`` route (vLLM, SGLang; Qwen2.5-VL / Qwen2.5-Omni style processors):
    :data:`LOCAL_VIDEO_TOKENS_PER_S` (2 frames per second merged in pairs into one temporal patch, ~144
    tokens for a frame resized to 448×252 in 28-pixel patches ≈ 144 per second) — an assumption that the
    server's processor settings (``max_pixels``, ``fps``) change — and audio (``input_audio`` or
    ``use_audio_in_video``) at :data:`LOCAL_AUDIO_TOKENS_PER_S` (25 per second: one audio-encoder frame per
    40 ms, as Qwen2-Audio's encoder documents).
- **Output tokens** per reply by format (:data:`OUTPUT_TOKENS`): ``yes_no`` / ``multiple_choice`` /
  ``statements`` ~5, ``open`` ~10, ``option_judgement`` (4b) ~20; ``open_with_reason`` adds
  :data:`REASON_TOKENS` (~30) to its base format (so ~40 for an open base). Thinking tokens are *not*
  included: the project sends ``thinking_budget=0`` by default, but models that cannot turn thinking off
  (e.g. 2.5-pro) bill their thinking as output; pass ``thinking_tokens`` per call to include a guess.
- **Judge calls** = :data:`JUDGE_SHARE` (30 %) of the open replies (``open`` and ``open_with_reason`` on an
  open base, every condition), because the rules decide most replies and only the rest reach the judge.
  Each judge prompt is the real :func:`scoring.judge_prompt` text (question, a ~3-word reply, the four
  candidates) at 4 characters per token; its output ~:data:`JUDGE_OUTPUT_TOKENS` tokens of JSON. The judge
  model defaults to the model being estimated.
- **Media settings**: ``media_resolution`` / ``fps`` (``--media-resolution``, ``--fps``) change the video
  tokens per second as they change the calls (:mod:`.responses.providers.gemini_tokens`).
- **Caching and batch** (:func:`caching_and_batch`, printed after the main table): per model the billed input
  tokens and cost direct, with context caching (one cache per clip × media condition, first use in full,
  then :data:`CACHED_INPUT_SHARE` of the input price, plus storage), in batch mode (:data:`BATCH_SHARE`),
  and both — the discounts and storage prices are assumptions from Google's pricing page.
- **Prices** (:data:`DEFAULT_PRICES`, USD per 1M tokens, standard paid tier, prompts ≤ 200k tokens, no
  batch discount or context caching) are *configurable assumptions* as published on Google's Gemini API
  and OpenAI's API pricing pages at the time of writing — check them before relying on a figure, and
  override with ``price_table`` (``--price MODEL=IN,OUT[,AUDIO_IN]``, MODEL with or without its provider).
  Where a model bills audio input at its own rate (2.5-flash: $1.00 / 1M; OpenAI's audio models) the audio
  tokens use it. A model not in the table — every self-hosted ``vllm/`` and ``sglang/`` model, whose cost
  is the server's time, not tokens — shows tokens but cost ``unknown`` (NaN in the frame).

Items come from the materialized items table (``data/assets/items/<clip>.parquet``) where a clip has one,
else they are computed with the core (annotations → questions → items) for the clips asked for (default:
the manifest's clips).
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .annotations.clips import Clip, read_manifest
from .responses.offline import conditions_for
from .responses.providers.gemini_tokens import AUDIO_TOKENS_PER_S, min_cache_tokens, resolution_name, video_tokens_per_s
from .settings import Paths

CHARS_PER_TOKEN = 4
VIDEO_TOKENS_PER_S = round(video_tokens_per_s())   # 1 frame per second × 258 tokens per frame (default media resolution)
MEDIA_TOKENS_PER_S = VIDEO_TOKENS_PER_S + AUDIO_TOKENS_PER_S  # ~290
MEDIA_CONDITIONS = ("clip", "silenced")
FRAME_TOKENS = 255                 # OpenAI high detail: 85 + 170 per 512-px tile; a 448-px frame is one tile
OPENAI_AUDIO_TOKENS_PER_S = 10     # one audio token per 100 ms
LOCAL_VIDEO_TOKENS_PER_S = 144     # 2 fps, pairs merged per temporal patch, 448x252 in 28-px patches
LOCAL_AUDIO_TOKENS_PER_S = 25      # one audio-encoder frame per 40 ms
OUTPUT_TOKENS = {"yes_no": 5, "multiple_choice": 5, "statements": 5, "open": 10, "option_judgement": 20}
REASON_TOKENS = 30
JUDGE_SHARE = 0.30
JUDGE_REPLY = "a short answer"  # stands for the model's reply inside an estimated judge prompt
JUDGE_OUTPUT_TOKENS = 8         # {"choice": "B"}


@dataclass(frozen=True)
class Price:
    """USD per 1M tokens. ``audio_input`` None = audio input billed as other input."""

    input: float
    output: float
    audio_input: float | None = None


# Assumptions (verify against the pricing page; override with --price MODEL=IN,OUT[,AUDIO_IN]).
DEFAULT_PRICES: dict[str, Price] = {
    "gemini-2.5-flash": Price(0.30, 2.50, audio_input=1.00),
    "gemini-2.5-flash-lite": Price(0.10, 0.40, audio_input=0.30),
    "gemini-2.5-pro": Price(1.25, 10.00),
    "gemini-3.1-pro-preview": Price(2.00, 12.00),
    "gemini-3.5-flash": Price(1.50, 9.00),
    "gpt-4o-mini": Price(0.15, 0.60),
    "gpt-4o": Price(2.50, 10.00),
    "gpt-4o-mini-audio-preview": Price(0.15, 0.60, audio_input=10.00),
    "gpt-4o-audio-preview": Price(2.50, 10.00, audio_input=40.00),
}


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


def media_rates(name: str, media_resolution: str | None = None, fps: float | None = None
                ) -> tuple[str, str, MediaRates]:
    """``(provider, model, rates)`` of a model name: the route its calls take by default (see the module
    docstring for every figure); ``media_resolution`` / ``fps`` set Gemini's video tokens per second."""
    from .responses.providers.base import ProviderIdentity, parse_model_name

    provider, model = parse_model_name(name)
    if provider == "gemini":
        resolution = resolution_name(media_resolution)
        route = f"video+audio ({float(fps) if fps else 1.0:g} fps" + (f", {resolution.removeprefix('MEDIA_RESOLUTION_').lower()} resolution)" if resolution else ")")
        return provider, model, MediaRates(route, video_per_s=video_tokens_per_s(media_resolution, fps),
                                           audio_per_s=AUDIO_TOKENS_PER_S)
    from .responses.providers.openai_compat import default_settings

    s = default_settings(ProviderIdentity(provider, model, ""))
    audio = {"input_audio": OPENAI_AUDIO_TOKENS_PER_S if provider == "openai" else LOCAL_AUDIO_TOKENS_PER_S,
             "use_audio_in_video": LOCAL_AUDIO_TOKENS_PER_S, "none": 0}[s.audio_route]
    route = f"{s.video_route}+{s.audio_route}"
    if s.video_route == "frames":
        return provider, model, MediaRates(f"frames({s.frames_fps:g} fps)+{s.audio_route}", frame_tokens=FRAME_TOKENS,
                                           frames_fps=s.frames_fps, max_frames=s.max_frames, audio_per_s=audio)
    video = LOCAL_VIDEO_TOKENS_PER_S if s.video_route in ("video_url", "file_url") else 0
    return provider, model, MediaRates(route, video_per_s=video, audio_per_s=audio)


def price_of(prices: dict[str, Price], name: str, model: str) -> Price | None:
    """The price under the full name (``openai/gpt-4o``) or the model alone (``gpt-4o``)."""
    return prices.get(name) or prices.get(model)

ESTIMATE_COLUMNS = [
    "model", "condition", "format", "calls", "media", "prompt_tokens", "video_tokens", "audio_tokens",
    "input_tokens", "output_tokens", "price_input", "price_output", "price_audio", "cost_usd", "provider", "route",
]


def text_tokens(text: str) -> int:
    """Estimated tokens of a text: ceil(characters / 4)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


def output_tokens(fmt: str, base_format: str | None = None) -> int:
    if fmt == "open_with_reason":
        return OUTPUT_TOKENS.get(base_format or "open", OUTPUT_TOKENS["open"]) + REASON_TOKENS
    return OUTPUT_TOKENS[fmt]


def parse_price(text: str) -> tuple[str, Price]:
    """``MODEL=IN,OUT[,AUDIO_IN]`` (USD per 1M tokens) → (model, Price); ValueError with the reason."""
    model, sep, values = text.partition("=")
    parts = [p.strip() for p in values.split(",")] if sep else []
    if not model.strip() or len(parts) not in (2, 3):
        raise ValueError(f"--price {text!r}: expected MODEL=IN,OUT or MODEL=IN,OUT,AUDIO_IN (USD per 1M tokens)")
    try:
        numbers = [float(p) for p in parts]
    except ValueError:
        raise ValueError(f"--price {text!r}: prices must be numbers") from None
    if any(n < 0 or not math.isfinite(n) for n in numbers):
        raise ValueError(f"--price {text!r}: prices must be finite and non-negative")
    return model.strip(), Price(*numbers)


def price_table_with(overrides: dict[str, Price | tuple] | list[str] | None) -> dict[str, Price]:
    """The default table updated by overrides (a dict, or ``MODEL=IN,OUT`` strings)."""
    table = dict(DEFAULT_PRICES)
    if not overrides:
        return table
    if isinstance(overrides, dict):
        for model, price in overrides.items():
            table[model] = price if isinstance(price, Price) else Price(*price)
    else:
        for text in overrides:
            model, price = parse_price(text)
            table[model] = price
    return table


def load_items(paths: Paths, clips: list[Clip] | None = None) -> tuple[pd.DataFrame, dict[str, int]]:
    """The items of ``clips`` (default: the manifest's): materialized where present, else computed.

    Returns (items, {"materialized": n_clips, "computed": n_clips})."""
    from .warehouse import TableStore, read_parquet

    store = TableStore(paths.assets)
    clips = list(read_manifest(paths.manifest)) if clips is None else list(clips)
    found, missing = [], []
    for clip in clips:
        path = store.path("items", clip.key)
        (found if path.exists() else missing).append((clip, path))
    frames = []
    if found:
        frames.append(read_parquet([p for _, p in found]))
    if missing:
        from .pipeline import questions_and_items

        _, computed = questions_and_items(paths, [c for c, _ in missing])
        frames.append(computed)
    frames = [f for f in frames if len(f)]
    items = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["clip_key", "format", "prompt"])
    return items, {"materialized": len(found), "computed": len(missing)}


def _judge_prompt_tokens(item) -> int:
    from .scoring.verdicts import _question_text, judge_prompt

    return text_tokens(judge_prompt(_question_text(item), JUDGE_REPLY, list(item.options)))


def estimate(paths: Paths, models: list[str], *, clips: list[Clip] | None = None,
             price_table: dict[str, Price | tuple] | list[str] | None = None,
             items: pd.DataFrame | None = None, judge_share: float = JUDGE_SHARE,
             judge_model: str | None = None, thinking_tokens: int = 0,
             media_resolution: str | None = None, fps: float | None = None) -> pd.DataFrame:
    """Calls, tokens and cost per model × condition × format (plus ``condition == "judge"`` rows).

    ``price_table`` overrides/extends :data:`DEFAULT_PRICES`; ``items`` skips loading them;
    ``judge_model`` bills judge calls to another model (default: each model judges its own replies);
    ``thinking_tokens`` are added to every call's output; ``media_resolution`` / ``fps`` set the video
    tokens per second as for the calls (:mod:`.responses.providers.gemini_tokens`). ``frame.attrs`` records
    the item source, the constants used and the items (for :func:`caching_and_batch`).
    """
    if not models:
        raise ValueError("no models to estimate")
    prices = price_table_with(price_table)
    source = {"given": 1}
    if items is None:
        items, source = load_items(paths, clips)
    video_per_s = video_tokens_per_s(media_resolution, fps)
    per_call: list[dict] = []  # one per item × condition (model-independent)
    judged: list[dict] = []
    for item in items.itertuples(index=False):
        dataset = item.dataset
        duration = Clip.from_key(item.clip_key).duration_s
        prompt = text_tokens(item.prompt)
        out = output_tokens(item.format, getattr(item, "base_format", None)) + thinking_tokens
        is_open = item.format == "open" or (item.format == "open_with_reason" and item.base_format == "open")
        judge_tokens = _judge_prompt_tokens(item) if is_open else 0
        for condition in conditions_for(dataset):
            media = condition in MEDIA_CONDITIONS
            per_call.append({"condition": condition, "format": item.format, "media": media, "prompt_tokens": prompt,
                             "duration_s": duration if media else 0.0, "output_tokens": out})
            if is_open:
                judged.append({"format": item.format, "prompt_tokens": judge_tokens})
    calls = pd.DataFrame(per_call, columns=["condition", "format", "media", "prompt_tokens", "duration_s",
                                            "output_tokens"])

    def grouped_for(rates: MediaRates) -> pd.DataFrame:
        c = calls.assign(video_tokens=[rates.video_tokens(d) if d else 0 for d in calls["duration_s"]],
                         audio_tokens=[rates.audio_tokens(d) if d else 0 for d in calls["duration_s"]])
        return c.groupby(["condition", "format", "media"], sort=True).agg(
            calls=("prompt_tokens", "size"), prompt_tokens=("prompt_tokens", "sum"), video_tokens=("video_tokens", "sum"),
            audio_tokens=("audio_tokens", "sum"), output_tokens=("output_tokens", "sum")).reset_index()

    judge_rows = pd.DataFrame(columns=["condition", "format", "media", "calls", "prompt_tokens", "video_tokens",
                                       "audio_tokens", "output_tokens"])
    if judged and judge_share > 0:
        j = pd.DataFrame(judged).groupby("format").agg(replies=("prompt_tokens", "size"),
                                                        mean_prompt=("prompt_tokens", "mean")).reset_index()
        j["calls"] = (j["replies"] * judge_share).round().astype(int)
        judge_rows = pd.DataFrame({
            "condition": "judge", "format": j["format"], "media": False, "calls": j["calls"],
            "prompt_tokens": (j["calls"] * j["mean_prompt"]).round().astype(int), "video_tokens": 0, "audio_tokens": 0,
            "output_tokens": j["calls"] * JUDGE_OUTPUT_TOKENS})
        judge_rows = judge_rows[judge_rows["calls"] > 0]
    rows = []
    for model in models:
        provider, bare, rates = media_rates(model, media_resolution, fps)
        for frame, billed_to in ((grouped_for(rates), model), (judge_rows, judge_model or model)):
            if not len(frame):
                continue
            f = frame.copy()
            f.insert(0, "model", model if billed_to == model else f"{billed_to} (judge for {model})")
            billed_provider, billed_model, _ = media_rates(billed_to)
            f["provider"] = billed_provider
            f["route"] = rates.route if billed_to == model else "text"
            price = price_of(prices, billed_to, billed_model)
            f["price_input"] = price.input if price else math.nan
            f["price_output"] = price.output if price else math.nan
            f["price_audio"] = (price.audio_input if price.audio_input is not None else price.input) if price else math.nan
            rows.append(f)
    out = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=ESTIMATE_COLUMNS)
    for column in ("calls", "prompt_tokens", "video_tokens", "audio_tokens", "output_tokens"):
        out[column] = out[column].astype("int64")
    out["media"] = out["media"].astype(bool)
    out["input_tokens"] = out["prompt_tokens"] + out["video_tokens"] + out["audio_tokens"]
    out["cost_usd"] = ((out["prompt_tokens"] + out["video_tokens"]) * out["price_input"]
                       + out["audio_tokens"] * out["price_audio"] + out["output_tokens"] * out["price_output"]) / 1e6
    out = out[ESTIMATE_COLUMNS]
    out.attrs.update({"items": len(items), "clips": int(items["clip_key"].nunique()) if len(items) else 0,
                      "item_source": source, "chars_per_token": CHARS_PER_TOKEN,
                      "media_tokens_per_s": video_per_s + AUDIO_TOKENS_PER_S, "judge_share": judge_share,
                      "thinking_tokens": thinking_tokens, "video_tokens_per_s": video_per_s,
                      "media_resolution": resolution_name(media_resolution) or "default",
                      "fps": float(fps) if fps else 1.0,
                      "media_groups": _media_groups(items, video_per_s)})
    return out


# ----------------------------------------------------------------------------------------------------
# Context caching and batch mode
# ----------------------------------------------------------------------------------------------------

# Assumptions from Google's Gemini API pricing and caching pages (check them before relying on a figure):
# explicitly cached input tokens are billed at 10 % of the input price (text/image/video and audio alike:
# 2.5-flash $0.03 vs $0.30, audio $0.10 vs $1.00 per 1M); storage is billed per 1M cached tokens per hour;
# the Batch API bills 50 % of the standard price.
CACHED_INPUT_SHARE = 0.10
BATCH_SHARE = 0.50
CACHE_STORAGE_PER_M_HOUR = {"gemini-2.5-flash": 1.00, "gemini-2.5-flash-lite": 1.00, "gemini-2.5-pro": 4.50}
DEFAULT_CACHE_STORAGE_PER_M_HOUR = 4.50
CACHE_HOURS = 1.0         # a cache lives for its clip's calls; billed here for the whole 1-hour TTL (an upper bound)
BATCH_CACHE_HOURS = 24.0  # a cache kept for a batch job's turnaround target (batch + caching)

CACHING_COLUMNS = ["model", "mode", "billed_input_tokens", "input_share", "cost_usd", "cost_share"]


def _media_groups(items: pd.DataFrame, video_per_s: float) -> list[dict]:
    """One dict per clip × media condition: calls, and the video/audio tokens a cache of it holds."""
    groups = []
    if not len(items):
        return groups
    for clip_key, n in items.groupby("clip_key").size().items():
        clip = Clip.from_key(clip_key)
        for condition in conditions_for(clip.dataset):
            if condition in MEDIA_CONDITIONS:
                groups.append({"clip_key": clip_key, "condition": condition, "calls": int(n),
                               "video_tokens": round(video_per_s * clip.duration_s),
                               "audio_tokens": round(AUDIO_TOKENS_PER_S * clip.duration_s)})
    return groups


def caching_and_batch(frame: pd.DataFrame, price_table: dict[str, Price | tuple] | list[str] | None = None
                      ) -> pd.DataFrame:
    """Per Gemini model (other providers have no such modes here): ``direct``, ``caching``, ``batch`` and ``batch+caching`` — billed input tokens (cached
    tokens count at :data:`CACHED_INPUT_SHARE`), their share of direct, the cost and its share of direct.

    Caching holds each clip × media condition's video and audio once (its first use billed in full), every
    call then bills them at the cached rate plus storage for :data:`CACHE_HOURS`; a clip window below the
    model's minimum cacheable size stays uncached. Judge and ``no_clip`` calls are text only and unchanged.
    Batch bills :data:`BATCH_SHARE` of everything; batch + caching halves the uncached part, bills cached
    tokens at the cached rate and storage for :data:`BATCH_CACHE_HOURS`.
    """
    prices = price_table_with(price_table)
    groups = frame.attrs.get("media_groups", [])
    rows = []
    for model, g in frame.groupby("model", sort=False):
        billed_model = model.split(" (judge for ")[0]
        if billed_model != model:
            continue  # judge rows are folded into the model they judge for
        if g["provider"].iloc[0] != "gemini":
            continue  # context caching and the Batch API priced here are Gemini's
        bare = model.split("/", 1)[1] if model.startswith("gemini/") else model
        block = frame[(frame["model"] == model) | frame["model"].str.endswith(f"(judge for {model})")]
        price = price_of(prices, model, bare)
        direct_tokens = int(block["input_tokens"].sum())
        direct_cost = block["cost_usd"].sum() if block["cost_usd"].notna().all() else math.nan
        minimum = min_cache_tokens(bare)
        saved_tokens = 0.0
        saved_cost = 0.0   # media cost no longer paid in full
        cached_cost = 0.0  # what the cached media costs instead (first use, cached rate), storage apart
        storage_tokens = 0
        for grp in groups:
            media = grp["video_tokens"] + grp["audio_tokens"]
            if media < minimum or grp["calls"] < 2:
                continue
            n = grp["calls"]
            saved_tokens += n * media - (media + CACHED_INPUT_SHARE * (n - 1) * media)
            if price is not None:
                full = (grp["video_tokens"] * price.input
                        + grp["audio_tokens"] * (price.audio_input if price.audio_input is not None else price.input)) / 1e6
                saved_cost += n * full
                cached_cost += full + CACHED_INPUT_SHARE * (n - 1) * full
            storage_tokens += media
        storage_rate = CACHE_STORAGE_PER_M_HOUR.get(bare, DEFAULT_CACHE_STORAGE_PER_M_HOUR)
        storage = storage_tokens * storage_rate / 1e6
        caching_tokens = direct_tokens - saved_tokens
        caching_cost = direct_cost - saved_cost + cached_cost + storage * CACHE_HOURS
        both_cost = BATCH_SHARE * (direct_cost - saved_cost) + cached_cost + storage * BATCH_CACHE_HOURS
        for mode, tokens, cost in (("direct", direct_tokens, direct_cost), ("caching", caching_tokens, caching_cost),
                                   ("batch", direct_tokens, BATCH_SHARE * direct_cost),
                                   ("batch+caching", caching_tokens, both_cost)):
            rows.append({"model": model, "mode": mode, "billed_input_tokens": round(tokens),
                         "input_share": tokens / direct_tokens if direct_tokens else math.nan,
                         "cost_usd": cost, "cost_share": cost / direct_cost if direct_cost else math.nan})
    out = pd.DataFrame(rows, columns=CACHING_COLUMNS)
    out.attrs.update({"cached_input_share": CACHED_INPUT_SHARE, "batch_share": BATCH_SHARE,
                      "cache_hours": CACHE_HOURS, "batch_cache_hours": BATCH_CACHE_HOURS,
                      "media_groups": len(groups), "video_tokens_per_s": frame.attrs.get("video_tokens_per_s"),
                      "media_resolution": frame.attrs.get("media_resolution"), "fps": frame.attrs.get("fps")})
    return out


def render_caching_and_batch(table: pd.DataFrame) -> str:
    a = table.attrs
    lines = [f"Context caching and batch mode ({a.get('media_groups', 0)} clip × media-condition caches; "
             f"video {a.get('video_tokens_per_s', VIDEO_TOKENS_PER_S):g} + audio {AUDIO_TOKENS_PER_S} tokens per second, "
             f"media resolution {a.get('media_resolution', 'default')}, {a.get('fps', 1.0):g} fps):",
             f"Assumptions: cached input billed at {a.get('cached_input_share', CACHED_INPUT_SHARE):.0%} of the input price "
             f"(first use in full), storage for {a.get('cache_hours', CACHE_HOURS):g} h per cache "
             f"({a.get('batch_cache_hours', BATCH_CACHE_HOURS):g} h with batch); batch at "
             f"{a.get('batch_share', BATCH_SHARE):.0%} of the standard price. `epic-levels run --batch` sends the clip "
             "itself (no cache), so it spends the `batch` line.",
             f"{'model':<24} {'mode':<14} {'billed input tok':>17} {'share':>7} {'cost':>11} {'share':>7}"]
    for r in table.itertuples(index=False):
        share = "" if math.isnan(r.input_share) else f"{r.input_share:.3f}"
        cshare = "" if isinstance(r.cost_share, float) and math.isnan(r.cost_share) else f"{r.cost_share:.3f}"
        lines.append(f"{r.model:<24} {r.mode:<14} {_int(r.billed_input_tokens):>17} {share:>7} {_cost(r.cost_usd):>11} {cshare:>7}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------------
# Printing
# ----------------------------------------------------------------------------------------------------


def _cost(value: float) -> str:
    return "unknown" if value is None or (isinstance(value, float) and math.isnan(value)) else f"${value:,.2f}"


def _int(value) -> str:
    return f"{int(value):,}"


def render_estimate(frame: pd.DataFrame) -> str:
    """A readable table per model, with a total per model and overall."""
    attrs = frame.attrs
    lines = []
    source = attrs.get("item_source", {})
    lines.append(f"Estimate for {attrs.get('items', '?')} items of {attrs.get('clips', '?')} clips "
                 f"(items materialized for {source.get('materialized', 0)} clips, computed now for "
                 f"{source.get('computed', 0)}).")
    video_per_s = attrs.get("video_tokens_per_s", VIDEO_TOKENS_PER_S)
    lines.append(f"Assumptions: ~{CHARS_PER_TOKEN} characters per text token; media tokens on every clip/silenced call "
                 f"per route: Gemini ~{video_per_s + AUDIO_TOKENS_PER_S:g}/s ({video_per_s:g} video at {attrs.get('fps', 1.0):g} fps, "
                 f"media resolution {attrs.get('media_resolution', 'default')}, + {AUDIO_TOKENS_PER_S} audio); "
                 f"frames {FRAME_TOKENS} per frame + input_audio {OPENAI_AUDIO_TOKENS_PER_S}/s (OpenAI); video_url "
                 f"~{LOCAL_VIDEO_TOKENS_PER_S}/s + audio {LOCAL_AUDIO_TOKENS_PER_S}/s (vLLM/SGLang, Qwen-style processors); "
                 f"judge on {attrs.get('judge_share', JUDGE_SHARE):.0%} of open replies; prices USD per 1M tokens, "
                 "standard tier (configurable; self-hosted models have none). Estimates, not quotes.")
    header = f"{'condition':<10} {'format':<18} {'calls':>8} {'input tok':>13} {'(media)':>13} {'output tok':>11} {'cost':>11}"
    for model, g in frame.groupby("model", sort=False):
        lines.append("")
        price = g.iloc[0]
        price_text = ("price unknown: cost not estimated" if math.isnan(price["price_input"]) else
                      f"in ${price['price_input']:g} / out ${price['price_output']:g}"
                      + (f" / audio in ${price['price_audio']:g}" if price["price_audio"] != price["price_input"] else "")
                      + " per 1M tokens")
        lines.append(f"{model}  [route {price['route']}]  ({price_text})")
        lines.append(header)
        lines.append("-" * len(header))
        for r in g.itertuples(index=False):
            lines.append(f"{r.condition:<10} {r.format:<18} {_int(r.calls):>8} {_int(r.input_tokens):>13} "
                         f"{_int(r.video_tokens + r.audio_tokens):>13} {_int(r.output_tokens):>11} {_cost(r.cost_usd):>11}")
        cost = g["cost_usd"].sum(min_count=1) if g["cost_usd"].notna().all() else math.nan
        lines.append(f"{'total':<29} {_int(g['calls'].sum()):>8} {_int(g['input_tokens'].sum()):>13} "
                     f"{_int((g['video_tokens'] + g['audio_tokens']).sum()):>13} {_int(g['output_tokens'].sum()):>11} "
                     f"{_cost(cost):>11}")
    known = frame[frame["cost_usd"].notna()]
    unknown = sorted(set(frame.loc[frame["cost_usd"].isna(), "model"]))
    lines.append("")
    lines.append(f"All models: {_int(frame['calls'].sum())} calls, {_int(frame['input_tokens'].sum())} input tokens, "
                 f"{_int(frame['output_tokens'].sum())} output tokens; cost {_cost(known['cost_usd'].sum()) if len(known) else 'unknown'}"
                 + (f" (plus unknown for {', '.join(unknown)})" if unknown and len(known) else ""))
    return "\n".join(lines)


def main_estimate(argv_models: list[str], price_overrides: list[str] | dict | None = None, *,
                  paths: Paths | None = None, clips: list[Clip] | None = None, out=None,
                  media_resolution: str | None = None, fps: float | None = None) -> int:
    """Print the estimate for the given models (names may also be comma-separated); 0 ok, 2 on bad input."""
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
                         media_resolution=media_resolution, fps=fps)
    except ValueError as exc:  # a model name without its provider, an unknown media resolution
        print(f"estimate: {exc}", file=sys.stderr)
        return 2
    print(render_estimate(frame), file=out)
    print("", file=out)
    print(render_caching_and_batch(caching_and_batch(frame, prices)), file=out)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m epic_levels_pipeline.estimate MODEL [MODEL ...] [--price MODEL=IN,OUT] [--clip KEY ...]``."""
    ap = argparse.ArgumentParser(prog="python -m epic_levels_pipeline.estimate",
                                 description="Calls, tokens and cost a run with models would spend.")
    ap.add_argument("models", nargs="+")
    ap.add_argument("--price", action="append", default=[], metavar="MODEL=IN,OUT[,AUDIO_IN]",
                    help="USD per 1M tokens; overrides the default table")
    ap.add_argument("--clip", action="append", default=[], metavar="KEY", help="only these clips (default: manifest)")
    args = ap.parse_args(argv)
    clips = [Clip.from_key(k) for k in args.clip] or None
    return main_estimate(args.models, args.price, clips=clips)


if __name__ == "__main__":
    raise SystemExit(main())
