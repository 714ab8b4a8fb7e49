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
  ``media_resolution`` (e.g. ``"MEDIA_RESOLUTION_LOW"``), ``fps`` (video sampling rate). Other keys
  are ignored here (they may exist only to separate cache keys).
* **Event loops**: the SDK's async HTTP client is bound to the loop it first ran on, so one SDK client
  is kept per event loop (weakly): the same caller works across successive ``asyncio.run`` calls.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import mimetypes
import os
import time
import weakref
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from google import genai
from google.genai import errors, types

from ..cache import CallCache
from ..calls import CallRequest, CallResult, RetryableError, parse_retry_after, run_blocking
from .base import DEFAULT_ENDPOINT as _DEFAULT_ENDPOINTS, api_key_from_env as _key_from_env, identity_of, with_identity
from .gemini_tokens import media_tokens, min_cache_tokens
from .structured import JudgeCalls, check_json_reply, choice_schema, parse_choice  # noqa: F401 (former home)

RETRYABLE_HTTP = frozenset({408, 429, 500, 502, 503, 504})
API_VERSION = "v1beta"
DEFAULT_ENDPOINT = _DEFAULT_ENDPOINTS["gemini"]

# Gemini's names where they differ from (or are missing in) the platform's mimetypes table.
_MIME_OVERRIDES = {
    ".mp4": "video/mp4", ".m4v": "video/mp4", ".webm": "video/webm", ".mov": "video/mov",
    ".avi": "video/avi", ".mpeg": "video/mpeg", ".mpg": "video/mpg", ".wmv": "video/wmv",
    ".3gp": "video/3gpp", ".flv": "video/x-flv", ".wav": "audio/wav", ".mp3": "audio/mp3",
    ".aac": "audio/aac", ".m4a": "audio/aac", ".ogg": "audio/ogg", ".flac": "audio/flac",
    ".aiff": "audio/aiff", ".aif": "audio/aiff",
}


def generation_settings(settings: "GeminiSettings") -> dict:
    """The settings that change what the model replies: part of every request (and so of its cache key)."""
    return {"temperature": settings.temperature, "max_output_tokens": settings.max_output_tokens,
            "thinking_budget": settings.thinking_budget}


def api_key_from_env() -> str | None:
    """``GEMINI_API_KEY``, else ``GOOGLE_API_KEY``, else None (blank values count as unset)."""
    return _key_from_env("gemini")


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


_SHA_MEMO: dict[tuple[str, int, int], str] = {}


def sha256_file(path: str | os.PathLike) -> str:
    """Hex sha256 of a file's bytes; memoised per (absolute path, mtime, size) for the process, so
    requests without ``media_sha256`` do not re-hash the same clip."""
    st = os.stat(path)
    memo_key = (os.path.abspath(path), st.st_mtime_ns, st.st_size)
    if memo_key in _SHA_MEMO:
        return _SHA_MEMO[memo_key]
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    _SHA_MEMO[memo_key] = h.hexdigest()
    return _SHA_MEMO[memo_key]


def guess_mime_type(path: str) -> str | None:
    ext = os.path.splitext(path)[1].lower()
    return _MIME_OVERRIDES.get(ext) or mimetypes.guess_type(path)[0]


def duration(seconds: float) -> str:
    """Protobuf Duration text for ``seconds``, millisecond precision: ``12.5 -> "12.5s"``."""
    text = f"{float(seconds):.3f}".rstrip("0").rstrip(".")
    return f"{text}s"


def retry_after_of(exc: errors.APIError) -> float | None:
    """The delay a server asked for in an SDK error: ``Retry-After`` header first, then a
    ``google.rpc.RetryInfo`` detail in the error body."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is not None:
        try:
            found = parse_retry_after(headers.get("retry-after"))
        except Exception:  # noqa: BLE001 - exotic header objects: fall through to the body
            found = None
        if found is not None:
            return found
    body = exc.details if isinstance(exc.details, dict) else {}
    details = (body.get("error") or {}).get("details") or body.get("details") or []
    for d in details if isinstance(details, list) else []:
        if isinstance(d, dict) and str(d.get("@type", "")).endswith("google.rpc.RetryInfo"):
            return parse_retry_after(d.get("retryDelay"))
    return None


def _classify(exc: BaseException) -> RetryableError | None:
    """A RetryableError for transient failures; None for permanent ones."""
    if isinstance(exc, errors.APIError):
        if exc.code in RETRYABLE_HTTP:
            return RetryableError(f"{exc.code} {exc.status}: {exc.message}", status=int(exc.code),
                                  retry_after=retry_after_of(exc))
        return None
    if is_transport_error(exc) or isinstance(exc, (ConnectionError, asyncio.TimeoutError)):
        return RetryableError(f"{type(exc).__name__}: {exc}", status=0)
    return None


_TRANSPORT_BASES = frozenset({"TransportError", "TimeoutException"})


def is_transport_error(exc: BaseException) -> bool:
    """Network-level failures (connection reset, read error, timeout) of whichever HTTP client the SDK
    uses (``httpx`` in older google-genai releases, its ``httpx2`` fork in 3.x; both name their bases
    ``TransportError`` and ``TimeoutException``). Recognised by those base classes' names in the
    exception's own class hierarchy, so the project imports neither client: which one the SDK brings is
    the SDK's business. Transient: retried like a 5xx."""
    return any(cls.__name__ in _TRANSPORT_BASES and cls.__module__.split(".")[0] in ("httpx", "httpx2")
               for cls in type(exc).__mro__)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, errors.APIError):
        return f"HTTP {exc.code} {exc.status}: {exc.message}"
    return f"{type(exc).__name__}: {exc}"


def _state(file: types.File) -> str:
    state = file.state
    if state is None:
        return "STATE_UNSPECIFIED"
    return state.value if hasattr(state, "value") else str(state)


class _MediaError(Exception):
    """The media file cannot be used; becomes an ``error`` result."""


@dataclass(frozen=True)
class _ContextCache:
    """A cached content in use: its name, expiry (None: unknown) and cached token count."""

    name: str
    expire_time: datetime | None
    token_count: int = 0

    def expired(self, margin_s: float = 5.0) -> bool:
        if self.expire_time is None:
            return False
        when = self.expire_time if self.expire_time.tzinfo else self.expire_time.replace(
            tzinfo=timezone.utc)
        return when <= datetime.now(timezone.utc) + timedelta(seconds=margin_s)


def _cache_gone(exc: BaseException) -> bool:
    """The service says the referenced cached content does not exist (expired or deleted)."""
    if not isinstance(exc, errors.APIError) or exc.code not in (400, 403, 404):
        return False
    return exc.code in (403, 404) or "cached" in str(exc.message or "").lower()


class _LoopState:
    def __init__(self, client: genai.Client):
        self.client = client
        self.locks: dict[str, asyncio.Lock] = {}


class GeminiCaller(JudgeCalls):
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

    async def aclose(self) -> None:
        """Close the SDK client of the running loop (clients of finished loops are dropped with
        them)."""
        state = self._loops.pop(asyncio.get_running_loop(), None)
        if state is not None:
            await state.client.aio.aclose()

    # -- media ------------------------------------------------------------------------------------

    async def _ensure_file(self, state: _LoopState, path: str, sha: str) -> tuple[str, str]:
        """(uri, mime type) of an ACTIVE provider file holding ``path``; raises _MediaError or
        RetryableError."""
        if sha in self._active:
            return self._active[sha]
        if sha in self._failed:
            raise _MediaError(self._failed[sha])
        lock = state.locks.setdefault(sha, asyncio.Lock())
        async with lock:
            if sha in self._active:
                return self._active[sha]
            if sha in self._failed:
                raise _MediaError(self._failed[sha])
            try:
                found = await self._upload_or_reuse(state.client, path, sha)
            except _MediaError as exc:
                self._failed[sha] = str(exc)
                raise
            self._active[sha] = found
            return found

    async def _upload_or_reuse(self, client: genai.Client, path: str, sha: str) -> tuple[str, str]:
        file: types.File | None = None
        row = self.cache.get_upload(sha) if self.cache is not None else None
        mime = row.mime_type if row is not None else None
        if row is not None and row.state != "FAILED":
            try:
                file = await client.aio.files.get(name=row.file_name)
            except errors.ClientError as exc:
                if exc.code not in (403, 404):
                    raise _MediaError(f"checking uploaded file {row.file_name}: {_describe(exc)}")
                file = None  # expired or deleted: upload again
            except Exception as exc:  # noqa: BLE001
                raise self._media_failure(exc, f"checking uploaded file {row.file_name}")
            if file is not None and _state(file) == "FAILED":
                file = None
        if file is None:
            if not os.path.isfile(path):
                raise _MediaError(f"media file not found: {path}")
            mime = guess_mime_type(path)
            if mime is None:
                raise _MediaError(f"unknown mime type for media file {path}")
            try:
                file = await client.aio.files.upload(
                    file=path, config=types.UploadFileConfig(mime_type=mime,
                                                             display_name=os.path.basename(path)))
            except Exception as exc:  # noqa: BLE001
                raise self._media_failure(exc, f"uploading {path}")
            if not file.name or not file.uri:
                raise _MediaError(f"upload of {path} returned no file name/uri")
            self._record(sha, file, mime)
        return await self._wait_active(client, file, sha, mime)

    def _media_failure(self, exc: Exception, doing: str) -> Exception:
        retry = _classify(exc)
        if retry is not None:
            return retry
        return _MediaError(f"{doing}: {_describe(exc)}")

    def _record(self, sha: str, file: types.File, mime: str | None) -> None:
        if self.cache is not None:
            self.cache.put_upload(sha, file.name or "", file.uri or "",
                                  file.mime_type or mime or "", _state(file))

    async def _wait_active(self, client: genai.Client, file: types.File, sha: str,
                           mime: str | None) -> tuple[str, str]:
        s = self.settings
        deadline = time.monotonic() + s.file_wait_timeout_s
        state = _state(file)
        while state not in ("ACTIVE", "FAILED"):
            if time.monotonic() >= deadline:
                raise _MediaError(f"file {file.name} still {state} after "
                                  f"{s.file_wait_timeout_s:g} s")
            await asyncio.sleep(s.file_poll_interval_s)
            try:
                file = await client.aio.files.get(name=file.name)
            except Exception as exc:  # noqa: BLE001
                raise self._media_failure(exc, f"polling file {file.name}")
            if _state(file) != state:
                state = _state(file)
                self._record(sha, file, mime)
        if state == "FAILED":
            why = file.error.message if file.error is not None and file.error.message else "no reason"
            raise _MediaError(f"file {file.name} processing FAILED: {why}")
        return file.uri or "", file.mime_type or mime or ""

    # -- calling ----------------------------------------------------------------------------------

    def _config(self, request: CallRequest, cached_content: str | None = None
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

    async def _media_part(self, state: _LoopState, request: CallRequest
                          ) -> tuple[types.Part | None, str | None, CallResult | None]:
        """(media part, media sha256, None), or (None, None, an error result); (None, None, None)
        for a text-only request."""
        if not request.media_path:
            return None, None, None
        start, end = request.start_offset_s, request.end_offset_s
        if (start is not None and start < 0) or (end is not None and end < 0) or (
                start is not None and end is not None and end <= start):
            return None, None, self._fail(request, f"invalid offsets start={start} end={end}")
        try:
            sha = request.media_sha256 or await asyncio.to_thread(sha256_file, request.media_path)
        except OSError as exc:
            return None, None, self._fail(request, f"media file unreadable: {exc}")
        try:
            uri, mime = await self._ensure_file(state, request.media_path, sha)
        except _MediaError as exc:
            return None, None, self._fail(request, str(exc))
        fps = (request.settings or {}).get("fps")
        meta = None
        if start is not None or end is not None or fps is not None:
            meta = types.VideoMetadata(
                start_offset=duration(start) if start is not None else None,
                end_offset=duration(end) if end is not None else None,
                fps=fps)
        return types.Part(file_data=types.FileData(file_uri=uri, mime_type=mime),
                          video_metadata=meta), sha, None

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
        if media is not None and self.settings.context_cache:
            cached, why = await self._context_cache(state, request, model, media, sha)
            route = f"video=cached_content({cached.name})" if cached else f"video=file;uncached({why})"

        for attempt in (1, 2):
            parts = [text] if cached else [p for p in (media, text) if p is not None]
            started = time.monotonic()
            try:
                response = await state.client.aio.models.generate_content(
                    model=model, contents=[types.Content(role="user", parts=parts)],
                    config=self._config(request, cached.name if cached else None))
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

    # -- context caching --------------------------------------------------------------------------

    def context_identity(self, request: CallRequest, model: str, sha: str) -> str:
        """What a cached content holds: model, media file, window, sampling rate, resolution and
        instruction. Every item of one clip file × model × condition shares it."""
        o = request.settings or {}
        payload = {"model": model, "media_sha256": sha, "start": request.start_offset_s,
                   "end": request.end_offset_s, "fps": o.get("fps"),
                   "media_resolution": o.get("media_resolution"),
                   "system_instruction": o.get("system_instruction")}
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    async def _context_cache(self, state: _LoopState, request: CallRequest, model: str,
                             media: types.Part, sha: str, stale: str | None = None
                             ) -> tuple["_ContextCache | None", str]:
        """The live cached content for this request's clip window (created when needed), or
        (None, why it is sent uncached). ``stale`` names a cache the service said is gone."""
        ident = self.context_identity(request, model, sha)
        lock = state.locks.setdefault("context:" + ident, asyncio.Lock())
        async with lock:
            known = self._contexts.get(ident)
            if stale is not None and known is not None and known.name == stale:
                self._contexts.pop(ident, None)
                if self.cache is not None:
                    self.cache.delete_context_cache(ident, stale)
                known = None
            if known is not None and not known.expired():
                return known, ""
            if ident in self._uncacheable:
                return None, self._uncacheable[ident]
            found = None if stale is not None else await self._recorded_context(state, ident)
            if found is None:
                found, why = await self._create_context(state, request, model, media, sha, ident)
                if found is None:
                    self._uncacheable[ident] = why
                    return None, why
                if stale is not None:
                    self.context_recreations += 1
            self._contexts[ident] = found
            return found, ""

    async def _recorded_context(self, state: _LoopState, ident: str) -> "_ContextCache | None":
        """A live cache recorded by an earlier (e.g. killed) run, confirmed with ``caches.get``."""
        row = self.cache.get_context_cache(ident) if self.cache is not None else None
        if row is None:
            return None
        try:
            got = await state.client.aio.caches.get(name=row.name)
        except Exception:  # noqa: BLE001 - gone, expired or unreachable: make a new one
            self.cache.delete_context_cache(ident, row.name)
            return None
        found = _ContextCache(got.name or row.name, got.expire_time, row.token_count)
        if found.expired():
            self.cache.delete_context_cache(ident, row.name)
            return None
        return found

    async def _create_context(self, state: _LoopState, request: CallRequest, model: str,
                              media: types.Part, sha: str, ident: str
                              ) -> tuple["_ContextCache | None", str]:
        s, o = self.settings, request.settings or {}
        minimum = min_cache_tokens(model)
        if request.start_offset_s is not None and request.end_offset_s is not None:
            expected = media_tokens(request.end_offset_s - request.start_offset_s,
                                    o.get("media_resolution"), o.get("fps"))
            if expected < minimum:
                return None, f"~{expected} tokens is below the {minimum}-token minimum of {model}"
        try:
            created = await state.client.aio.caches.create(
                model=model, config=types.CreateCachedContentConfig(
                    contents=[types.Content(role="user", parts=[media])],
                    system_instruction=o.get("system_instruction"),
                    ttl=duration(s.context_cache_ttl_s),
                    display_name=f"epic-levels {ident[:12]}"))
        except Exception as exc:  # noqa: BLE001 - any failure: send uncached, say why
            return None, f"cache creation failed: {_describe(exc)}"
        if not created.name:
            return None, "cache creation returned no name"
        usage = created.usage_metadata
        found = _ContextCache(created.name, created.expire_time,
                              (usage.total_token_count or 0) if usage else 0)
        self.context_creations += 1
        if self.cache is not None:
            expire = found.expire_time.isoformat() if found.expire_time else ""
            self.cache.put_context_cache(ident, found.name, model, sha, found.token_count, expire)
        return found, ""

    async def release_context_caches(self) -> int:
        """Delete the cached contents this caller used (the run is over); returns how many. A cache
        that is already gone counts as deleted. Their rows leave the call cache database."""
        state = self._loop_state()
        deleted = 0
        for ident, found in list(self._contexts.items()):
            try:
                await state.client.aio.caches.delete(name=found.name)
            except errors.ClientError as exc:
                if exc.code not in (403, 404):
                    continue  # keep the row: its TTL still ends it, a later run may reuse it
            except Exception:  # noqa: BLE001
                continue
            deleted += 1
            self._contexts.pop(ident, None)
            if self.cache is not None:
                self.cache.delete_context_cache(ident, found.name)
        return deleted

    def run_batch(self, requests, cache: CallCache | None, **kwargs):
        """Answer ``requests`` through the Batch API, blocking (:func:`.gemini_batch.run_batch`)."""
        from .gemini_batch import run_batch

        return run_blocking(run_batch(requests, self, cache, **kwargs))

    def end_run(self) -> None:
        """The call runner's end-of-run hook: :meth:`release_context_caches`, blocking."""
        if self._contexts:
            run_blocking(self.release_context_caches())


def _empty_reason(response: types.GenerateContentResponse) -> str:
    """Why a response carries no text, for the error column."""
    bits = []
    feedback = response.prompt_feedback
    if feedback is not None and feedback.block_reason is not None:
        bits.append(f"prompt blocked: {feedback.block_reason}")
    if not response.candidates:
        bits.append("no candidates")
    else:
        cand = response.candidates[0]
        if cand.finish_reason is not None:
            bits.append(f"finish_reason={getattr(cand.finish_reason, 'value', cand.finish_reason)}")
        if cand.content is None or not cand.content.parts:
            bits.append("no content parts")
    return "empty response: " + ("; ".join(bits) if bits else "no text")


def make(model: str, *, base_url: str | None = None, cache: CallCache | None = None,
         provider: str = "gemini") -> GeminiCaller:
    """The provider factory (:func:`.base.make_provider`): a caller for ``model`` at ``base_url``."""
    return GeminiCaller(GeminiSettings(model=model, base_url=base_url or None), cache)


def from_spec(spec, cache: CallCache | None = None, api_key: str | None = None) -> GeminiCaller:
    """The caller of a models-file entry (:func:`.base.provider_for`): its endpoint and timeout
    (``media_resolution`` / ``fps`` travel as request settings, :meth:`..models_config.ModelSpec.cache_config`)."""
    base_url = None if spec.endpoint == _DEFAULT_ENDPOINTS["gemini"] else spec.endpoint
    return GeminiCaller(GeminiSettings(model=spec.model, base_url=base_url, timeout_s=spec.timeout_s), cache, api_key)
