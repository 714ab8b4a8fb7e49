"""Collecting responses for one clip: every item × condition × responder (or model).

Offline responders are computed directly (deterministic, instant, no cache needed). Model calls go
through :func:`epic_levels_pipeline.responses.calls.run_calls_sync`: cached by content key (responder, model,
prompt, media hash, condition, settings) in ``data/cache/calls.sqlite``, persisted as they arrive,
concurrent under a rate limit, retried on 429/5xx; what still fails is an ``error`` row. With
``ModelRun.batch`` the uncached requests go through the provider's batch mode instead (``run_batch``:
Gemini's Batch API, half price, answered within a day). After a clip's calls the provider's ``end_run``
hook (when it has one) releases what the run held, e.g. Gemini's per-clip context caches. A condition that
needs media a clip does not have is a ``skipped`` row with the reason, for every responder that needs media.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import pandas as pd

from .cache import CallCache, cache_key
from .calls import CallRequest, CallStats, run_calls_sync
from .providers.base import Provider, identity_of
from ..annotations.catalogue import Catalogue
from ..bank.clip_view import ClipView
from ..records import records
from ..seeding import DEFAULT_SEED
from ..annotations.clips import Clip
from .conditions import items_by_condition, perceived_streams
from ..formats.answers import Context
from .offline import OFFLINE_MODEL, offline_reply
from .calls import CallResult, observe, serve_cached
from .conditions import CONDITIONS

RESPONSE_COLUMNS = [
    "item_id", "question_id", "clip_key", "dataset", "level", "subtype", "distractor_strategy", "format",
    "base_format", "condition", "responder", "model", "reply", "status", "prompt_tokens", "output_tokens",
    "latency_s", "cache_key", "cached", "error", "media_sha256", "provider", "endpoint", "route", "cached_tokens",
    "model_config", "served_model", "model_digest", "audio_ignored", "video_ignored",
]
NOT_ASKED = "not asked in this run (--models narrowed it) and not in the call cache"
OFFLINE_PROVIDER = "offline"  # the provider column of the offline reference responders' rows
OFFLINE_SETTINGS = {"seed": "per item and condition"}


@dataclass
class ModelRun:
    """What a model responder needs: its provider (e.g. GeminiCaller), the cache, and throughput limits.

    ``model`` is the model's identity in every table (its configured NAME); ``served_model`` the name its server
    answers to (sent, and part of the cache key, so two NAMEs with the same settings share answers). ``settings``
    are every request's settings (and so part of its cache key): the provider's ``generation_settings()``, which
    carry its identity (provider, model, endpoint). A run that does not ask the model (``asked`` False) serves
    what the call cache holds and calls nothing.
    """

    name: str            # responder name: the provider, e.g. "gemini", "vllm"
    model: str
    caller: Provider     # async callable CallRequest -> CallResult, with its identity
    cache: CallCache
    rpm: float = 60
    concurrency: int = 4
    settings: dict = field(default_factory=dict)
    batch: bool = False  # through the provider's batch mode (``caller.run_batch``) instead of direct calls
    model_config: str = ""  # the resolved models-file settings (JSON), each row's ``model_config``
    served_model: str = ""  # the name the server answers to ("": ``model``)
    digest: str = ""        # ``model_digest``: the route-changing settings' digest
    asked: bool = True
    conditions: tuple[str, ...] = CONDITIONS

    @property
    def served(self) -> str:
        return self.served_model or self.model

    @classmethod
    def of(cls, caller: Provider, cache: CallCache, rpm: float = 60, concurrency: int = 4,
           settings: dict | None = None, *, batch: bool = False, model_config: str = "") -> "ModelRun":
        """The run of one provider's model, named by its provider, with its generation settings (plus
        ``settings``, e.g. the model config and Gemini's media settings), through its batch mode when ``batch``."""
        return cls(caller.provider, caller.model, caller, cache, rpm, concurrency,
                   {**caller.generation_settings(), **(settings or {})}, batch=batch, model_config=model_config)


@dataclass
class ClipMediaInfo:
    status: str = "skipped"
    reason: str = "no media prepared"
    clip_path: str | None = None
    silenced_path: str | None = None
    clip_sha256: str | None = None
    silenced_sha256: str | None = None

    @classmethod
    def from_table(cls, clip_media: pd.DataFrame) -> "ClipMediaInfo":
        """The first row of a ``clip_media`` table (no media prepared when it has none)."""
        if not len(clip_media):
            return cls()
        return cls(**{k: v for k, v in clip_media.iloc[0].to_dict().items() if k in cls.__dataclass_fields__})


def _base(item, condition: str, responder: str, model: str) -> dict:
    return {"item_id": item.item_id, "question_id": item.question_id, "clip_key": item.clip_key,
            "dataset": item.dataset, "level": item.level, "subtype": item.subtype,
            "distractor_strategy": item.distractor_strategy, "format": item.format, "base_format": item.base_format,
            "condition": condition, "responder": responder, "model": model}


def offline_responses(clip: Clip, items: pd.DataFrame, questions: pd.DataFrame, rows: pd.DataFrame,
                      catalogue: Catalogue, responders: list[str], seed: int = DEFAULT_SEED) -> pd.DataFrame:
    out: list[dict] = []
    if not len(items) or not responders:
        return pd.DataFrame(out, columns=RESPONSE_COLUMNS)
    question_rows = {q.question_id: q for q in records(questions)}
    for condition, asked in items_by_condition(records(items)):
        view = ClipView(clip, rows, catalogue, streams=perceived_streams(condition))
        for item in asked:
            ctx = Context(item, question_rows[item.question_id], view, catalogue, condition, question_rows, seed=seed)
            for name in responders:
                started = time.perf_counter()
                reply = offline_reply(name, ctx)
                out.append(offline_row(item, condition, name, reply, time.perf_counter() - started))
    return pd.DataFrame(out, columns=RESPONSE_COLUMNS)


def offline_row(item, condition: str, responder: str, reply: str, latency_s: float = 0.0,
                skipped: str = "") -> dict:
    """One ``responses`` row of an offline reference responder (``skipped``: the reason it could not answer)."""
    return {**_base(item, condition, responder, OFFLINE_MODEL), "reply": reply,
            "status": "skipped" if skipped else "ok", "prompt_tokens": 0, "output_tokens": 0, "latency_s": latency_s,
            "cache_key": "" if skipped else cache_key(responder, OFFLINE_MODEL, item.prompt, None, condition,
                                                      OFFLINE_SETTINGS),
            "cached": False, "error": skipped, "media_sha256": None, "provider": OFFLINE_PROVIDER,
            "endpoint": "", "route": "", "cached_tokens": 0, "model_config": "", "served_model": OFFLINE_MODEL,
            "model_digest": "", "audio_ignored": None, "video_ignored": None}


def condition_media(condition: str, media: ClipMediaInfo) -> tuple[str | None, str | None] | None:
    """The media file sent under ``condition`` as ``(path, sha256)``: none for ``no_clip``, the silenced copy
    for ``silenced``, the clip for ``clip``; None when the condition needs media the clip does not have
    (its rows are ``skipped`` with ``media.reason``)."""
    if condition == "no_clip":
        return None, None
    if media.status != "ready":
        return None
    if condition == "silenced":
        return media.silenced_path, media.silenced_sha256
    return media.clip_path, media.clip_sha256


def model_responses(clip: Clip, items: pd.DataFrame, media: ClipMediaInfo, run: ModelRun,
                    progress: Callable[[str], None] | None = None) -> tuple[pd.DataFrame, CallStats | None]:
    """One model over every item × condition it is asked under (:func:`.conditions.conditions_for`); media conditions
    skipped (with reason) when media is missing.

    Requests are made condition by condition, clip file first and item text last in each, so the items of
    one clip file × condition go together (what context caching, explicit or implicit, needs).
    ``progress`` receives the batch mode's progress lines."""
    requests: list[CallRequest] = []
    meta: list[tuple] = []
    skipped: list[dict] = []
    who = {"provider": run.name, "endpoint": "", "served_model": run.served, "model_digest": run.digest}
    if isinstance(run.caller, Provider):  # a bare callable (a test's fake) has no identity to record
        identity = identity_of(run.caller)
        who.update(provider=identity.provider, endpoint=identity.endpoint)
    for condition, asked in items_by_condition(records(items)):
        if condition not in run.conditions:
            continue
        sent = condition_media(condition, media)
        for item in asked:
            if sent is None:
                skipped.append({**_base(item, condition, run.name, run.model), "reply": "", "status": "skipped",
                                "prompt_tokens": 0, "output_tokens": 0, "latency_s": 0.0, "cache_key": "",
                                "cached": False, "error": media.reason, "media_sha256": None, **who,
                                "route": "", "cached_tokens": 0, "model_config": run.model_config})
                continue
            path, sha = sent
            key = cache_key(run.name, run.served, item.prompt, sha, condition, run.settings)
            requests.append(CallRequest(key, run.name, run.served, condition, item.prompt, media_path=path,
                                        media_sha256=sha, settings=dict(run.settings)))
            meta.append((item, condition, sha))
    stats = None
    rows = list(skipped)
    if requests:
        if not run.asked:
            results, stats = cached_only(requests, run.cache), None
            observe(run.caller, results)
        elif run.batch:
            if not hasattr(run.caller, "run_batch"):
                raise ValueError(f"provider {run.name} has no batch mode")
            results, stats = run.caller.run_batch(requests, run.cache, progress=progress or print)
        else:
            results, stats = run_calls_sync(requests, run.caller, run.cache, rpm=run.rpm,
                                            concurrency=run.concurrency)
        end_run = getattr(run.caller, "end_run", None) if run.asked else None
        if end_run is not None:
            end_run()
        for (item, condition, sha), result in zip(meta, results):
            rows.append({**_base(item, condition, run.name, run.model), "reply": result.reply, "status": result.status,
                         "prompt_tokens": result.prompt_tokens, "output_tokens": result.output_tokens,
                         "latency_s": result.latency_s, "cache_key": result.cache_key, "cached": result.cached,
                         "error": result.error, "media_sha256": sha, **who, "route": result.route,
                         "cached_tokens": result.cached_tokens, "model_config": run.model_config})
        check = media_integrity(run, requests, results, [m[0].item_id for m in meta])
        for row in rows:
            row["audio_ignored"], row["video_ignored"] = check.audio_ignored, check.video_ignored
    return pd.DataFrame(rows, columns=RESPONSE_COLUMNS), stats


@dataclass(frozen=True)
class MediaIntegrity:
    """Whether a model × clip's server used the audio and the video it was sent, read from the prompt tokens it
    reported for one item: with and without the audio (one extra request, the audio left out), and with and without
    the video (the item's ``clip`` and ``no_clip`` answers). None where it cannot be told (no such pair, a server
    that reports no prompt tokens, a route that sends no audio). Silencing cannot tell it: a silent track of the same
    length costs the same tokens as the real one."""

    audio_ignored: bool | None = None
    video_ignored: bool | None = None
    audio_tokens: tuple[int, int] = (0, 0)   # prompt tokens with and without the audio
    video_tokens: tuple[int, int] = (0, 0)   # with and without the video


def media_integrity(run: ModelRun, requests: list[CallRequest], results: list[CallResult],
                    item_ids: list[str]) -> MediaIntegrity:
    """:class:`MediaIntegrity` of one model on one clip's requests and results (in the same order)."""
    ok = {(i, q.condition): (q, r) for i, q, r in zip(item_ids, requests, results)
          if r.status == "ok" and r.prompt_tokens > 0}
    video, video_tokens = None, (0, 0)
    for (item, condition), (_, r) in ok.items():
        if condition == "clip" and (item, "no_clip") in ok and not r.route.startswith("video=none"):
            video_tokens = (r.prompt_tokens, ok[(item, "no_clip")][1].prompt_tokens)
            video = video_tokens[0] == video_tokens[1]
            break
    audio, audio_tokens = None, (0, 0)
    first = next(((q, r) for (_, c), (q, r) in ok.items() if c == "clip"), None)
    without = getattr(run.caller, "without_audio", None)
    plan = without(first[0]) if first is not None and without is not None else None
    if plan is not None:
        settings, path, sha = plan
        q, r = first
        sent = {**q.settings, **settings}
        key = cache_key(run.name, run.served, q.prompt, sha, "clip", {**sent, "integrity": "no_audio"})
        request = CallRequest(key, run.name, run.served, "clip", q.prompt, media_path=path, media_sha256=sha,
                              settings=sent)
        if run.asked:
            (answer,), _ = run_calls_sync([request], run.caller, run.cache, rpm=run.rpm, concurrency=1)
        else:
            (answer,) = cached_only([request], run.cache)
        if answer.status == "ok" and answer.prompt_tokens > 0:
            audio_tokens = (r.prompt_tokens, answer.prompt_tokens)
            audio = audio_tokens[0] == audio_tokens[1]
    return MediaIntegrity(audio, video, audio_tokens, video_tokens)


def cached_only(requests: list[CallRequest], cache: CallCache | None) -> list[CallResult]:
    """Every request answered from the call cache alone: an ``ok`` answer where it holds one, else a ``skipped``
    result saying the model was not asked in this run (nothing is called, nothing written)."""
    results: list[CallResult | None] = [None] * len(requests)
    serve_cached(requests, cache, results)
    return [r if r is not None else CallResult(q.cache_key, "", "skipped", error=NOT_ASKED)
            for q, r in zip(requests, results)]


INTEGRITY_COLUMNS = ["responder", "model", "served_model", "clip_key", "audio_ignored", "video_ignored"]


def integrity_table(files: list) -> pd.DataFrame:
    """One row per model × clip of the ``responses`` files given: whether its server ignored the audio or the video
    (:class:`MediaIntegrity`; empty where not told). Offline and imported responders are left out."""
    import duckdb

    if not files:
        return pd.DataFrame(columns=INTEGRITY_COLUMNS)
    con = duckdb.connect()
    try:
        rel = con.read_parquet([str(f) for f in files], union_by_name=True)
        names = set(rel.columns)
        if not {"audio_ignored", "video_ignored"} <= names:
            return pd.DataFrame(columns=INTEGRITY_COLUMNS)
        served = "served_model" if "served_model" in names else "model"
        return con.execute(f"""
            SELECT responder, model, any_value({served}) AS served_model, clip_key,
                   bool_or(audio_ignored) AS audio_ignored, bool_or(video_ignored) AS video_ignored
            FROM rel WHERE provider NOT IN ('{OFFLINE_PROVIDER}', 'external')
            GROUP BY responder, model, clip_key ORDER BY responder, model, clip_key""").df()[INTEGRITY_COLUMNS]
    finally:
        con.close()
