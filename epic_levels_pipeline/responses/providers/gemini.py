"""Gemini as a responder, on the official ``google-genai`` SDK (async client).

Pure core (no Dagster). :class:`GeminiCaller` is an ``async (CallRequest) -> CallResult`` callable for
:func:`.calls.run_calls`; the runner owns rate limiting, concurrency, retries and the answer cache,
this module owns the wire.

Decisions and edge cases:

* **API key** only from the environment (:func:`api_key_from_env`: ``GEMINI_API_KEY``, then
  ``GOOGLE_API_KEY``) or passed in by the caller; never read from files or settings, never logged.
* **API version** is pinned to ``v1beta`` (the SDK's default is ``v1``, which lacks parts of the
  Files API and structured-output fields this project uses).
* **Retries.** ``generate_content`` is sent with the SDK's own retries *off* (per-request
  ``HttpRetryOptions(attempts=1)``): every attempt then goes through the runner's rate limiter and
  is counted. HTTP 408/429/500/502/503/504, timeouts and connection errors become
  :class:`.calls.RetryableError` (``retry_after`` from a ``Retry-After`` header, else from a
  ``google.rpc.RetryInfo.retryDelay`` in the error body, else None). Other 4xx become an ``error``
  result. Files API calls (upload, get) keep the SDK's retries (``sdk_retry_attempts``).
* **Media** (``request.media_path``): uploaded once per ``media_sha256`` (computed from the file when
  the request gives none) — concurrent requests for the same file wait on one upload — and recorded
  in the cache's ``uploads`` table, so later runs reuse it. A recorded file is re-checked once per
  process with ``files.get``: gone (403/404, e.g. expired after 48 h) or FAILED → uploaded again. The
  caller then polls ``files.get`` every ``file_poll_interval_s`` until ACTIVE. FAILED, or still not
  ACTIVE after ``file_wait_timeout_s``, gives an ``error`` result (not an exception), and that
  failure is remembered for the rest of the process so other requests for the same file fail fast
  instead of uploading or waiting again; the next run tries afresh. ``media_sha256`` is trusted: the
  caller guarantees it is the hash of ``media_path``. A request with ``media_sha256`` but no
  ``media_path`` is sent as text only.
* **Parts**: the media part first (with ``VideoMetadata(start_offset, end_offset)`` — Duration strings
  such as ``"12.5s"`` — when offsets are given), then the prompt text. Offsets < 0 or end <= start
  give an ``error`` result.
* **Context caching** (``GeminiSettings.context_cache``, on by default): per clip window — model,
  media file, offsets, ``fps``, ``media_resolution``, ``system_instruction`` (:meth:`context_identity`)
  — one cached content holding the media part (and the instruction) is made with ``caches.create``
  (TTL ``context_cache_ttl_s``) and named by every request of that window, which then sends only its
  text (``GenerateContentConfig(cached_content=...)``). Concurrent requests wait on one creation. The
  name is recorded in the cache's ``context_caches`` table, so a later (e.g. resumed) run checks it
  with ``caches.get`` and reuses it while it lives. Below the model's minimum cacheable size
  (:mod:`.gemini_tokens`, estimated from the offsets when given) or when creation fails, the window is
  sent uncached for the rest of the process and ``route`` says why. A generate answered "cached
  content not found" (expired or deleted mid-run) recreates the cache once — one creation however
  many requests notice — and asks again. :meth:`end_run` (called by the runner after a clip's calls)
  deletes the caches used. ``route`` is ``video=cached_content(<name>)``, ``video=file[;uncached(why)]``
  or ``text``; ``cached_tokens`` is ``cached_content_token_count``.
* **Batch mode**: :meth:`run_batch` (:mod:`.gemini_batch`).
* **Reply**: ``response.text`` (text parts of the first candidate, thoughts excluded). No text (no
  candidates, safety block, token budget spent) → ``error`` with the finish/block reason. When
  ``response_mime_type`` is ``application/json`` the text must parse as JSON, carry the schema's
  required top-level keys and respect top-level ``enum`` values, else ``error`` (the text is kept in
  ``reply`` for audit). Tokens: ``prompt_token_count`` (cached tokens included) and ``candidates_token_count``
  (thinking tokens are not counted as output). ``latency_s`` times ``generate_content`` only (not uploads).
* **Thinking**: ``thinking_budget=0`` by default, because on 2.5-flash thinking tokens share
  ``max_output_tokens`` and a small budget can otherwise end with no visible text. Set it to None for
  models that refuse a zero budget (2.5-pro) or do not take one.
* **Per-request settings** (``request.settings``, also part of the cache key) override the defaults:
  ``temperature``, ``max_output_tokens``, ``thinking_budget``, ``response_mime_type``,
  ``response_schema`` (a Gemini Schema as a dict), ``system_instruction``, ``seed``,
  ``media_resolution`` (e.g. ``"MEDIA_RESOLUTION_LOW"``), ``fps`` (video sampling rate), ``context_cache``
  (False: this request names no cached content). Other keys
  are ignored here (they may exist only to separate cache keys).
* **Event loops**: the SDK's async HTTP client is bound to the loop it first ran on, so one SDK client
  is kept per event loop (weakly): the same caller works across successive ``asyncio.run`` calls.
"""
from __future__ import annotations

import asyncio
import time
import weakref
from dataclasses import dataclass, replace
from pathlib import Path

from google import genai
from google.genai import errors, types

from ..cache import CallCache
from ..calls import CallRequest, CallResult, run_blocking
from . import gemini_pricing, registry
from .base import identity_of, with_identity
from .gemini_batch import run_batch
from .gemini_context import GeminiContextCaching, _ContextCache, _cache_gone
from .gemini_files import GeminiFiles
from .gemini_tokens import resolution_name
from .gemini_wire import _classify, _describe, _empty_reason, _LoopState
from .structured import JudgeCalls, check_json_reply

API_VERSION = "v1beta"
DEFAULT_ENDPOINT = "https://generativelanguage.googleapis.com"

def generation_settings(settings: "GeminiSettings") -> dict:
    """The settings that change what the model replies: part of every request (and so of its cache key)."""
    return {"temperature": settings.temperature, "max_output_tokens": settings.max_output_tokens,
            "thinking_budget": settings.thinking_budget}


def api_key_from_env() -> str | None:
    """``GEMINI_API_KEY``, else ``GOOGLE_API_KEY``, else None (blank values count as unset)."""
    return registry.api_key_from_env("gemini")


@dataclass(frozen=True)
class GeminiSettings:
    """Defaults for every call of a :class:`GeminiCaller`. ``base_url`` None means Google's
    endpoint; tests point it at a local server. ``timeout_s`` bounds each HTTP request."""

    model: str = "gemini-2.5-flash"
    base_url: str | None = None
    temperature: float = 0.0
    max_output_tokens: int = 256
    timeout_s: float = 120
    sdk_retry_attempts: int = 3
    file_poll_interval_s: float = 1.0
    file_wait_timeout_s: float = 300
    thinking_budget: int | None = 0
    context_cache: bool = True
    context_cache_ttl_s: float = 3600


class GeminiCaller(GeminiFiles, GeminiContextCaching, JudgeCalls):
    """``await caller(request) -> CallResult`` against Gemini (see the module docstring); a
    :class:`.base.Provider` (``provider``, ``model``, ``endpoint``).

    ``cache`` holds the uploads table (pass the same :class:`CallCache` given to ``run_calls``); None
    disables upload reuse across runs (within a process uploads are still shared). ``api_key``
    defaults to :func:`api_key_from_env`; ValueError when there is none.
    """

    provider = "gemini"

    @property
    def model(self) -> str:
        return self.settings.model

    @property
    def endpoint(self) -> str:
        return self.settings.base_url or DEFAULT_ENDPOINT

    def generation_settings(self) -> dict:
        """:func:`generation_settings` plus the caller's identity (provider, model, endpoint): the
        requests' ``settings``, and so part of their cache key."""
        return with_identity(generation_settings(self.settings), identity_of(self))

    def __init__(self, settings: GeminiSettings | None = None, cache: CallCache | None = None,
                 api_key: str | None = None):
        self.settings = settings or GeminiSettings()
        self.cache = cache
        self._api_key = api_key or api_key_from_env()
        if not self._api_key:
            raise ValueError("no Gemini API key: set GEMINI_API_KEY (or GOOGLE_API_KEY)")
        self._loops: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState]" = (
            weakref.WeakKeyDictionary())
        self._active: dict[str, tuple[str, str]] = {}  # sha -> (uri, mime), confirmed this process
        self._failed: dict[str, str] = {}  # sha -> why, for this process
        self._contexts: dict[str, _ContextCache] = {}  # context identity -> live cache
        self._uncacheable: dict[str, str] = {}  # context identity -> why sent uncached
        self.context_creations = 0  # cached contents created by this caller
        self.context_recreations = 0  # of which: replacing one that expired mid-run

    # -- client -----------------------------------------------------------------------------------

    def _new_client(self) -> genai.Client:
        s = self.settings
        http_options = types.HttpOptions(
            base_url=s.base_url,
            api_version=API_VERSION,
            timeout=int(s.timeout_s * 1000),
            retry_options=types.HttpRetryOptions(attempts=max(1, int(s.sdk_retry_attempts))),
        )
        return genai.Client(api_key=self._api_key, http_options=http_options)

    def _loop_state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        state = self._loops.get(loop)
        if state is None:
            state = _LoopState(self._new_client())
            self._loops[loop] = state
        return state

    def loop_client(self) -> genai.Client:
        """The SDK client of the running event loop."""
        return self._loop_state().client

    async def batch_contents(self, request: CallRequest) -> tuple[list[types.Content], CallResult | None]:
        """``request`` as a batch item's contents (the media part first, the item text last), or the
        ``error`` result when its media cannot be used."""
        media, _sha, failed = await self._media_part(self._loop_state(), request)
        if failed is not None:
            return [], failed
        parts = [p for p in (media, types.Part(text=request.prompt)) if p is not None]
        return [types.Content(role="user", parts=parts)], None

    def without_audio(self, request: CallRequest) -> tuple[dict, str, str | None] | None:
        """``(settings, media path, its sha256)`` of the same request sent without audio: Gemini reads the video's
        own track, so the window's video without its audio track (cut beside it once), sent without a context cache
        (one request: a cache would cost more than it saves)."""
        from ..media import sha256_file, strip_audio

        if not request.media_path:
            return None
        path = Path(request.media_path)
        stripped = strip_audio(path, path.with_name(path.stem + ".noaudio" + path.suffix))
        return {"context_cache": False}, str(stripped), sha256_file(stripped)

    async def reachable(self) -> str | None:
        """None when the service answers for the model (``models.get``), else why not (a pre-flight check)."""
        try:
            await self._loop_state().client.aio.models.get(model=self.model)
        except Exception as exc:  # noqa: BLE001 - any failure is the answer
            return f"{type(exc).__name__}: {str(exc)[:200]}"
        return None

    async def aclose(self) -> None:
        """Close the SDK client of the running loop (clients of finished loops are dropped with
        them)."""
        state = self._loops.pop(asyncio.get_running_loop(), None)
        if state is not None:
            await state.client.aio.aclose()

    # -- calling ----------------------------------------------------------------------------------

    def generate_config(self, request: CallRequest, cached_content: str | None = None
                        ) -> types.GenerateContentConfig:
        s, o = self.settings, request.settings or {}
        budget = o.get("thinking_budget", s.thinking_budget)
        schema = o.get("response_schema")
        return types.GenerateContentConfig(
            temperature=o.get("temperature", s.temperature),
            max_output_tokens=o.get("max_output_tokens", s.max_output_tokens),
            thinking_config=types.ThinkingConfig(thinking_budget=budget) if budget is not None
            else None,
            response_mime_type=o.get("response_mime_type"),
            response_schema=types.Schema.model_validate(schema) if schema else None,
            # With a cached content the instruction lives in the cache (the API refuses both).
            system_instruction=None if cached_content else o.get("system_instruction"),
            seed=o.get("seed"),
            media_resolution=o.get("media_resolution"),
            cached_content=cached_content,
            http_options=types.HttpOptions(
                timeout=int(s.timeout_s * 1000),
                retry_options=types.HttpRetryOptions(attempts=1),
            ),
        )

    def _fail(self, request: CallRequest, message: str, reply: str = "", **extra) -> CallResult:
        return CallResult(request.cache_key, reply, "error", error=message, **extra)

    async def __call__(self, request: CallRequest) -> CallResult:
        """Answer one request. Raises only RetryableError (for the runner to retry) and truly
        unexpected exceptions (which the runner turns into ``error`` results)."""
        state = self._loop_state()
        media, sha, failed = await self._media_part(state, request)
        if failed is not None:
            return failed
        text = types.Part(text=request.prompt)
        model = request.model or self.settings.model
        cached: _ContextCache | None = None
        route = "video=file" if media is not None else "text"
        if media is not None and request.settings.get("context_cache", self.settings.context_cache):
            cached, why = await self._context_cache(state, request, model, media, sha)
            route = f"video=cached_content({cached.name})" if cached else f"video=file;uncached({why})"

        for attempt in (1, 2):
            parts = [text] if cached else [p for p in (media, text) if p is not None]
            started = time.monotonic()
            try:
                response = await state.client.aio.models.generate_content(
                    model=model, contents=[types.Content(role="user", parts=parts)],
                    config=self.generate_config(request, cached.name if cached else None))
            except Exception as exc:  # noqa: BLE001
                if cached is not None and attempt == 1 and _cache_gone(exc):
                    # Expired (TTL) or deleted mid-run: recreate once (one creation however many
                    # requests notice together), then ask again.
                    cached, why = await self._context_cache(state, request, model, media, sha,
                                                            stale=cached.name)
                    route = (f"video=cached_content({cached.name});recreated" if cached
                             else f"video=file;uncached({why})")
                    continue
                retry = _classify(exc)
                if retry is not None:
                    raise retry from exc
                if isinstance(exc, (errors.APIError, errors.UnknownApiResponseError)):
                    return self._fail(request, _describe(exc), latency_s=time.monotonic() - started,
                                      route=route)
                raise
            break
        return self.result_of(request, response, time.monotonic() - started, route)

    def result_of(self, request: CallRequest, response: types.GenerateContentResponse,
                  latency_s: float = 0.0, route: str = "") -> CallResult:
        """The :class:`CallResult` of a generate response (direct or from a batch job): text,
        tokens (``prompt_token_count`` includes the cached ones; ``cached_content_token_count`` is
        ``cached_tokens``), and the structured-output check."""
        usage = response.usage_metadata
        tokens = dict(prompt_tokens=(usage.prompt_token_count or 0) if usage else 0,
                      output_tokens=(usage.candidates_token_count or 0) if usage else 0,
                      cached_tokens=(usage.cached_content_token_count or 0) if usage else 0,
                      latency_s=latency_s, route=route)
        text = response.text
        if not text:
            return self._fail(request, _empty_reason(response), **tokens)
        if (request.settings or {}).get("response_mime_type") == "application/json":
            why = check_json_reply(text, (request.settings or {}).get("response_schema"))
            if why is not None:
                return self._fail(request, why, reply=text, **tokens)
        return CallResult(request.cache_key, text, "ok", **tokens)

    def run_batch(self, requests, cache: CallCache | None, **kwargs):
        """Answer ``requests`` through the Batch API, blocking (:func:`.gemini_batch.run_batch`)."""
        return run_blocking(run_batch(requests, self, cache, **kwargs))

    def end_run(self) -> None:
        """The call runner's end-of-run hook: :meth:`release_context_caches`, blocking."""
        if self._contexts:
            run_blocking(self.release_context_caches())


def make(model: str, *, base_url: str | None = None, cache: CallCache | None = None,
         provider: str = "gemini") -> GeminiCaller:
    """A caller for ``model`` at ``base_url`` (:func:`.registry.make_provider`)."""
    return GeminiCaller(GeminiSettings(model=model, base_url=base_url or None), cache)


def from_spec(spec, cache: CallCache | None = None, api_key: str | None = None) -> GeminiCaller:
    """The caller of a models-file entry (:func:`.registry.provider_for`): its endpoint and timeout
    (``media_resolution`` / ``fps`` travel as request settings, :meth:`GeminiFacts.request_settings`)."""
    base_url = None if spec.endpoint == DEFAULT_ENDPOINT else spec.endpoint
    return GeminiCaller(GeminiSettings(model=spec.model, base_url=base_url, timeout_s=spec.timeout_s), cache, api_key)


def response_schema_of(schema: dict) -> dict:
    """A JSON Schema (refs inlined) as a Gemini ``Schema`` dict: upper-case types, descriptions kept, properties
    required and ordered as listed; titles and ``additionalProperties`` dropped (Gemini's Schema does not take
    them). JSON-serialisable, so it travels in a request's settings and so in its cache key."""
    out: dict = {"type": str(schema["type"]).upper()}
    if "description" in schema:
        out["description"] = schema["description"]
    if "properties" in schema:
        out["properties"] = {k: response_schema_of(v) for k, v in schema["properties"].items()}
        out["required"] = list(schema.get("required") or [])
        out["property_ordering"] = list(schema["properties"])
    if "items" in schema:
        out["items"] = response_schema_of(schema["items"])
    return out


class GeminiFacts(registry.ProviderFacts):
    """Google's Gemini API: the clip itself is sent with its own audio track (no routes to choose), ``fps`` and
    ``media_resolution`` are its own request settings, structured output is its ``response_schema``; hosted
    (never a local server's limits), tier-1 limits and published prices as assumptions."""

    name = "gemini"
    endpoint_env = "GEMINI_BASE_URL"
    default_endpoint = DEFAULT_ENDPOINT
    key_env = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    local = False
    default_routes = ("native", "in_video")
    takes = frozenset({"audio", "fps", "media_resolution"})
    declines = {"video": "the clip itself is sent, with its own audio track",
                "max_frames": "fps and media_resolution set its sampling",
                "extra_body": "its requests are no chat-completions body",
                "structured_output": "it takes its own response_schema"}
    hosted_rpm = {"gemini-2.5-flash": 1000, "gemini-2.5-flash-lite": 4000, "gemini-2.5-pro": 150, "*": 150}
    prices = gemini_pricing.PRICES
    bare_prefix = "gemini"

    def caller(self, spec, cache, api_key):
        return from_spec(spec, cache, api_key)

    def make(self, model, *, base_url=None, cache=None):
        return make(model, base_url=base_url, cache=cache)

    def check_entry(self, entry) -> list[tuple[str, str]]:
        if entry.audio not in (None, "in_video"):
            return [("audio", "gemini reads the video's own audio track: only \"in_video\" applies")]
        return []

    def route_notes(self, video, audio):
        return []  # nothing to choose: the clip is sent with its own track

    def request_settings(self, spec) -> dict:
        """Gemini's own ``media_resolution`` (the API's name) and ``fps``, when the model sets them."""
        out = {}
        if spec.media_resolution:
            out["media_resolution"] = resolution_name(spec.media_resolution)
        if spec.fps:
            out["fps"] = float(spec.fps)
        return out

    def structured_settings(self, schema: dict, name: str) -> dict:
        return {"response_schema": response_schema_of(schema)}

    def media_rates(self, spec):
        return gemini_pricing.media_rates(spec)

    def for_probe(self, caller):
        """Without context caching: one request per route, so a cache would be a wasted call."""
        caller.settings = replace(caller.settings, context_cache=False)
        return caller


registry.register(GeminiFacts())
