"""How Gemini calls are priced: Google's published prices (assumptions), the media tokens a clip costs
(:mod:`.gemini_tokens`: 258 tokens a frame at 1 fps by default, 66 at low media resolution, + 32 audio tokens a
second), and what context caching and the Batch API save (:func:`caching_and_batch`).
"""

from __future__ import annotations

import math

import pandas as pd

from ...annotations.clips import Clip
from ..conditions import conditions_for
from .gemini_tokens import AUDIO_TOKENS_PER_S, min_cache_tokens, resolution_name, video_tokens_per_s
from .rates import MediaRates, Price, price_of

VIDEO_TOKENS_PER_S = round(video_tokens_per_s())
MEDIA_CONDITIONS = ("clip", "silenced")

# Assumptions (Google's Gemini API pricing page at the time of writing: standard paid tier, prompts <= 200k
# tokens; override with --price MODEL=IN,OUT[,AUDIO_IN]).
PRICES: dict[str, Price] = {
    "gemini-2.5-flash": Price(0.30, 2.50, audio_input=1.00),
    "gemini-2.5-flash-lite": Price(0.10, 0.40, audio_input=0.30),
    "gemini-2.5-pro": Price(1.25, 10.00),
    "gemini-3.1-pro-preview": Price(2.00, 12.00),
    "gemini-3.5-flash": Price(1.50, 9.00),
}


def media_rates(spec) -> MediaRates:
    """The media tokens of a resolved Gemini model's calls (its ``fps`` and ``media_resolution``)."""
    resolution = resolution_name(spec.media_resolution)
    route = f"video+audio ({float(spec.fps) if spec.fps else 1.0:g} fps" + (
        f", {resolution.removeprefix('MEDIA_RESOLUTION_').lower()} resolution)" if resolution else ")")
    return MediaRates(route, video_per_s=video_tokens_per_s(spec.media_resolution, spec.fps),
                      audio_per_s=AUDIO_TOKENS_PER_S)


def media_groups(items: pd.DataFrame, video_per_s: float) -> list[dict]:
    """One dict per clip × media condition its items are asked under: calls, and the video/audio tokens a cache of
    it holds."""
    groups = []
    if not len(items):
        return groups
    asked = items.groupby(["clip_key", "audio_annotated"], sort=True).size()
    for (clip_key, audio_annotated), n in asked.items():
        clip = Clip.from_key(clip_key)
        for condition in conditions_for(audio_annotated):
            if condition in MEDIA_CONDITIONS:
                groups.append({"clip_key": clip_key, "condition": condition, "calls": int(n),
                               "video_tokens": round(video_per_s * clip.duration_s),
                               "audio_tokens": round(AUDIO_TOKENS_PER_S * clip.duration_s)})
    return groups


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


def caching_and_batch(frame: pd.DataFrame, prices: dict[str, Price]) -> pd.DataFrame:
    """Per Gemini model (other providers have no such modes here): ``direct``, ``caching``, ``batch`` and ``batch+caching`` — billed input tokens (cached
    tokens count at :data:`CACHED_INPUT_SHARE`), their share of direct, the cost and its share of direct.

    Caching holds each clip × media condition's video and audio once (its first use billed in full), every
    call then bills them at the cached rate plus storage for :data:`CACHE_HOURS`; a clip window below the
    model's minimum cacheable size stays uncached. Judge and ``no_clip`` calls are text only and unchanged.
    Batch bills :data:`BATCH_SHARE` of everything; batch + caching halves the uncached part, bills cached
    tokens at the cached rate and storage for :data:`BATCH_CACHE_HOURS`.
    """
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




def _cost(value: float) -> str:
    return "unknown" if value is None or (isinstance(value, float) and math.isnan(value)) else f"${value:,.2f}"


def _int(value) -> str:
    return f"{int(value):,}"
