"""What a run with models of any provider would spend (calls, tokens, cost, wall time) before spending it.

Pure core. Calls are counted as a run makes them (:func:`requests_of`: distinct requests per condition, none for
media a clip lacks unless ``assume_media``, captions and the media-integrity request), so for an empty call cache
the count equals the run's ``spend`` rows; judge calls are :data:`JUDGE_SHARE` of the open replies. Tokens are
estimates (:data:`CHARS_PER_TOKEN`, each provider's media rates, each format's ``output_tokens``), prices
configurable assumptions, wall time the models' limits at :data:`ASSUMED_LATENCY_S` a call. The constants and
their sources: docs/design/model-calls.md."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pandas as pd

from .annotations.clips import Clip
from .annotations.clip_keys import read_manifest
from .responses.models_config import ModelSpec, find_models_file, resolve
from .formats.registry import format_of, judge_question, reply_tokens
from .responses.conditions import conditions_for
from .responses.pricing import DEFAULT_PRICES, MediaRates, Price, media_rates, parse_price, price_of, price_table_with
from .responses.providers.gemini_pricing import (BATCH_SHARE, CACHED_INPUT_SHARE, MEDIA_CONDITIONS,
                                                 VIDEO_TOKENS_PER_S, media_groups, render_caching_and_batch)
from .responses.providers.gemini_pricing import caching_and_batch as _gemini_caching_and_batch
from .responses.providers.gemini_tokens import AUDIO_TOKENS_PER_S, resolution_name, video_tokens_per_s
from .responses.providers.openai_pricing import (FRAME_TOKENS, LOCAL_AUDIO_TOKENS_PER_S, LOCAL_VIDEO_TOKENS_PER_S,
                                                 OPENAI_AUDIO_TOKENS_PER_S)
from .settings import Paths

CHARS_PER_TOKEN = 4
MEDIA_TOKENS_PER_S = VIDEO_TOKENS_PER_S + AUDIO_TOKENS_PER_S  # ~290
JUDGE_SHARE = 0.30
JUDGE_REPLY = "a short answer"  # stands for the model's reply inside an estimated judge prompt
JUDGE_OUTPUT_TOKENS = 8         # {"choice": "B"}
ASSUMED_LATENCY_S = 2.0         # seconds a call takes (an assumption: the server's speed decides it)

__all__ = ["BATCH_SHARE", "CACHED_INPUT_SHARE", "DEFAULT_PRICES", "FRAME_TOKENS", "LOCAL_AUDIO_TOKENS_PER_S",
           "LOCAL_VIDEO_TOKENS_PER_S", "MediaRates", "OPENAI_AUDIO_TOKENS_PER_S", "Price", "caching_and_batch",
           "estimate", "load_items", "parse_price", "price_of", "price_table_with",
           "render_caching_and_batch", "render_estimate", "wall_time"]


def caching_and_batch(frame: pd.DataFrame, price_table: dict[str, Price | tuple] | list[str] | None = None
                      ) -> pd.DataFrame:
    """Gemini's context caching and batch modes per Gemini model of an estimate
    (:func:`.responses.providers.gemini_pricing.caching_and_batch`)."""
    return _gemini_caching_and_batch(frame, price_table_with(price_table))


ESTIMATE_COLUMNS = [
    "model", "condition", "format", "calls", "media", "prompt_tokens", "video_tokens", "audio_tokens",
    "input_tokens", "output_tokens", "price_input", "price_output", "price_audio", "cost_usd", "provider", "route",
]


def text_tokens(text: str) -> int:
    """Estimated tokens of a text: ceil(characters / 4)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


def output_tokens(fmt: str, base_format: str | None = None) -> int:
    return reply_tokens(fmt, base_format)


def load_items(paths: Paths, clips: list[Clip] | None = None) -> tuple[pd.DataFrame, dict[str, int]]:
    """The items of ``clips`` (default: the manifest's): materialized where present, else computed. A file
    written before items said their conditions (no ``audio_annotated`` column) counts as not materialized.

    Returns (items, {"materialized": n_clips, "computed": n_clips})."""
    import pyarrow.parquet as pq

    from .storage.parquet import read_parquet
    from .storage.table_store import TableStore

    store = TableStore(paths.assets)
    clips = list(read_manifest(paths.manifest)) if clips is None else list(clips)
    found, missing = [], []
    for clip in clips:
        path = store.path("items", clip.key)
        current = path.exists() and "audio_annotated" in pq.read_schema(path).names
        (found if current else missing).append((clip, path))
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
    from .scoring.verdicts import judge_prompt

    return text_tokens(judge_prompt(judge_question(item), JUDGE_REPLY, list(item.options)))


def estimate(paths: Paths, models: list[str], *, clips: list[Clip] | None = None,
             price_table: dict[str, Price | tuple] | list[str] | None = None,
             items: pd.DataFrame | None = None, judge_share: float = JUDGE_SHARE,
             judge_model: str | None = None, thinking_tokens: int = 0,
             media_resolution: str | None = None, fps: float | None = None, model_config: str | Path | None = None,
             latency_s: float = ASSUMED_LATENCY_S, endpoint: str | None = None,
             media_available: dict[str, bool] | None = None, assume_media: bool = False) -> pd.DataFrame:
    """Calls, tokens and cost per model × condition × format (plus ``condition == "judge"`` rows).

    ``price_table`` overrides/extends :data:`DEFAULT_PRICES`; ``items`` skips loading them;
    ``judge_model`` bills judge calls to another model (default: each model judges its own replies);
    ``thinking_tokens`` are added to every call's output; ``media_resolution`` / ``fps`` set the video
    tokens per second as for the calls (:mod:`.responses.providers.gemini_tokens`). Models are NAMEs of the
    models file (``model_config``, else ``models.toml`` at the project root) or inline ``PROVIDER/MODEL``
    names (served at ``endpoint``, else their provider's address), resolved as a run resolves them.
    ``frame.attrs`` records the item source, the constants used, the items (for :func:`caching_and_batch`) and
    the wall time at each model's limits (``wall``). Calls are counted as the run makes them (:func:`requests_of`);
    ``assume_media`` counts every clip's media calls whether or not its source video is there yet.
    """
    if not models:
        raise ValueError("no models to estimate")
    specs = model_specs(paths, models, model_config, media_resolution=media_resolution, fps=fps, endpoint=endpoint)
    judge_spec = model_specs(paths, [judge_model], model_config, endpoint=endpoint)[0] if judge_model else None
    prices = price_table_with(price_table)
    source = {"given": 1}
    if items is None:
        items, source = load_items(paths, clips)
    video_per_s = video_tokens_per_s(media_resolution, fps)
    if assume_media:
        media_available = {key: True for key in items["clip_key"].unique()}
    per_call, judged, integrity, media_ok = requests_of(paths, items, thinking_tokens, media_available)
    calls = pd.DataFrame(per_call, columns=["condition", "format", "media", "prompt_tokens", "duration_s",
                                            "output_tokens"])
    checks = pd.DataFrame(integrity, columns=["condition", "format", "media", "prompt_tokens", "duration_s",
                                              "output_tokens"])

    def grouped_for(rates: MediaRates, spec: ModelSpec) -> pd.DataFrame:
        asked = calls[calls["condition"].isin(spec.conditions)]
        if "clip" in spec.conditions and spec.audio != "none":
            asked = pd.concat([asked, checks], ignore_index=True)  # the media-integrity request, one per clip
        c = asked.assign(video_tokens=[rates.video_tokens(d) if d else 0 for d in asked["duration_s"]],
                         audio_tokens=[rates.audio_tokens(d) if d else 0 for d in asked["duration_s"]])
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
    for spec in specs:
        model, rates = spec.name, media_rates(spec)
        judge = judge_spec or spec
        for frame, billed in ((grouped_for(rates, spec), spec), (judge_rows, judge)):
            if not len(frame):
                continue
            f = frame.copy()
            f.insert(0, "model", model if billed is spec else f"{billed.name} (judge for {model})")
            f["provider"] = billed.provider
            f["route"] = rates.route if billed is spec else "text"
            price = price_of(prices, billed.name, billed.model) or price_of(prices, billed.qualified, billed.model)
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
                      "media_groups": media_groups(items, video_per_s),
                      "clips_without_media": sum(1 for ok in media_ok.values() if not ok),
                      "media_root": str(paths.source_media)})
    out.attrs["wall"] = wall_time(out, specs, judge_spec, latency_s)
    return out


CAPTION_OUTPUT_TOKENS = 600  # a structured caption of a 30 s window (an assumption)


def requests_of(paths: Paths, items: pd.DataFrame, thinking_tokens: int = 0,
                media_available: dict[str, bool] | None = None
                ) -> tuple[list[dict], list[dict], list[dict], dict[str, bool]]:
    """The requests a run sends for ``items``, counted as the run counts them: one per distinct (condition, media,
    prompt) — identical prompts under ``no_clip`` are one call across clips —, none under ``clip`` / ``silenced`` for
    a clip without its source video (the run skips them); the caption track's one per clip × condition; and the
    media-integrity request of each clip with media. Returns (calls, open replies for the judge, integrity calls,
    whether each clip has its media); ``media_available`` (clip key -> bool) replaces looking for source videos."""
    from .captions.prompt import caption_prompt, conditions_for as caption_conditions
    from .responses.media_sources import find_source_video

    media_ok: dict[str, bool] = dict(media_available or {})
    per_call, judged, integrity, seen, clips = [], [], [], set(), {}
    for item in items.itertuples(index=False):
        clip = clips.setdefault(item.clip_key, Clip.from_key(item.clip_key))
        if item.clip_key not in media_ok:
            media_ok[item.clip_key] = find_source_video(paths.source_media, clip.dataset, clip.video_id) is not None
        prompt = text_tokens(item.prompt)
        out = output_tokens(item.format, getattr(item, "base_format", None)) + thinking_tokens
        is_open = format_of(getattr(item, "base_format", None) or item.format).free_text  # only free answers are judged
        judge_tokens = _judge_prompt_tokens(item) if is_open else 0
        for condition in conditions_for(item.audio_annotated):
            media = condition in MEDIA_CONDITIONS
            if media and not media_ok[item.clip_key]:
                continue
            key = (condition, item.clip_key if media else None, item.prompt)
            if key in seen:
                continue
            seen.add(key)
            per_call.append({"condition": condition, "format": item.format, "media": media, "prompt_tokens": prompt,
                             "duration_s": clip.duration_s if media else 0.0, "output_tokens": out})
            if is_open:
                judged.append({"format": item.format, "prompt_tokens": judge_tokens})
        if media_ok[item.clip_key] and ("integrity", item.clip_key) not in seen:
            seen.add(("integrity", item.clip_key))
            integrity.append({"condition": "clip", "format": "integrity", "media": True, "prompt_tokens": prompt,
                              "duration_s": clip.duration_s, "output_tokens": out})
    flags = items.drop_duplicates("clip_key").set_index("clip_key")["audio_annotated"] if len(items) else {}
    for key, clip in clips.items():
        for condition in caption_conditions(bool(flags[key])):
            media = condition in MEDIA_CONDITIONS
            prompt = caption_prompt(clip, condition)
            if media and not media_ok[key] or ("caption", condition, key if media else None, prompt) in seen:
                continue
            seen.add(("caption", condition, key if media else None, prompt))
            per_call.append({"condition": condition, "format": "caption", "media": media,
                             "prompt_tokens": text_tokens(prompt),
                             "duration_s": clip.duration_s if condition in MEDIA_CONDITIONS else 0.0,
                             "output_tokens": CAPTION_OUTPUT_TOKENS + thinking_tokens})
    return per_call, judged, integrity, media_ok


def model_specs(paths: Paths, names: list[str], model_config: str | Path | None = None, *,
                media_resolution: str | None = None, fps: float | None = None,
                endpoint: str | None = None) -> list[ModelSpec]:
    """The models as a run resolves them: the models file's entries or inline names, the flags applied where
    they mean something (ModelConfigError where they do not), the environment's limits overriding."""
    models_file = find_models_file(paths.root, model_config)
    rpm = os.environ.get("EPIC_LEVELS_RPM") or None
    concurrency = os.environ.get("EPIC_LEVELS_CONCURRENCY") or None
    return [spec.with_limits(float(rpm) if rpm else None, int(concurrency) if concurrency else None)
            .with_flags(fps=fps, media_resolution=media_resolution) for spec in resolve(names, models_file, endpoint)]


def call_seconds(calls: int, concurrency: int, rpm: float, latency_s: float) -> float:
    """Wall seconds of ``calls`` calls at ``concurrency`` in flight and ``rpm`` (0 = no rate limit), each
    taking ``latency_s``: the slower of the two limits."""
    per_call = max(60.0 / rpm if rpm else 0.0, latency_s / max(1, concurrency))
    return calls * per_call


def wall_time(frame: pd.DataFrame, specs: list[ModelSpec], judge_spec: ModelSpec | None,
              latency_s: float) -> list[dict]:
    """Per model: its calls and the judge's, and the wall time of each at its limits (docs/design/model-calls.md)."""
    out = []
    for spec in specs:
        own = int(frame.loc[frame["model"] == spec.name, "calls"].sum())
        judged = int(frame.loc[frame["model"].str.endswith(f"(judge for {spec.name})"), "calls"].sum())
        judge = judge_spec or spec
        seconds = (call_seconds(own, spec.max_concurrency, spec.rpm, latency_s)
                   + call_seconds(judged, judge.max_concurrency, judge.rpm, latency_s))
        out.append({"model": spec.name, "calls": own, "judge_calls": judged, "max_concurrency": spec.max_concurrency,
                    "rpm": spec.rpm, "latency_s": latency_s, "wall_s": seconds})
    return out


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    if seconds < 3 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


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
    if attrs.get("clips_without_media"):
        lines.append(f"{attrs['clips_without_media']} of these clips have no source video under {attrs.get('media_root')}: "
                     "their clip and silenced calls are not counted, as the run skips them (--assume-media counts "
                     "them).")
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
        for w in attrs.get("wall", []):
            if w["model"] == model:
                limit = f"{w['rpm']:g} requests/min" if w["rpm"] else "no request-rate limit"
                lines.append(f"wall time: {_duration(w['wall_s'])} for {_int(w['calls'] + w['judge_calls'])} calls at "
                             f"{w['max_concurrency']} in flight, {limit}, ~{w['latency_s']:g} s a call (assumed)")
    known = frame[frame["cost_usd"].notna()]
    unknown = sorted(set(frame.loc[frame["cost_usd"].isna(), "model"]))
    lines.append("")
    walls = attrs.get("wall", [])
    wall = f"; wall time {_duration(sum(w['wall_s'] for w in walls))} one model after another" if walls else ""
    lines.append(f"All models: {_int(frame['calls'].sum())} calls, {_int(frame['input_tokens'].sum())} input tokens, "
                 f"{_int(frame['output_tokens'].sum())} output tokens; cost {_cost(known['cost_usd'].sum()) if len(known) else 'unknown'}"
                 + (f" (plus unknown for {', '.join(unknown)})" if unknown and len(known) else "") + wall)
    return "\n".join(lines)
