"""OpenAI-compatible servers (vLLM, SGLang, OpenAI) as responders and judges, on the official ``openai`` SDK.

Pure core (no Dagster). :class:`OpenAICompatCaller` is an ``async (CallRequest) -> CallResult``
callable for :func:`.calls.run_calls`, like :class:`.gemini.GeminiCaller`: the runner owns rate
limiting, concurrency, retries and the answer cache; this module owns the wire.

Routes — how a clip reaches a model that speaks ``/v1/chat/completions`` (per model, from
:class:`OpenAICompatSettings`, overridable per request through ``request.settings``; the route
settings are part of :meth:`OpenAICompatCaller.generation_settings` and so of the cache key):

* **video** (``video_route``):
  ``video_url`` — the window as an mp4 in a ``video_url`` part with a base64 ``data:video/mp4`` URL
  (vLLM, SGLang); ``file_url`` — a ``file://`` URL of the file on this machine, for a server on the
  same filesystem started with ``--allowed-local-media-path`` covering it (no base64 upload);
  ``frames`` — ``N`` JPEG frames sampled with ffmpeg at ``frames_fps`` within the window (lowered so
  that at most ``max_frames`` cover the whole window), each an ``image_url`` part preceded by a text
  part ``"Frame at 12.0 s:"`` (seconds from the start of the media file), for servers without video
  input (OpenAI's API); ``none`` — no picture.
* **audio** (``audio_route``):
  ``input_audio`` — the same window's first audio track as 16 kHz mono 16-bit wav in an
  ``input_audio`` part (the ``silenced`` condition's media is the silenced clip, so this wav is
  silent); ``use_audio_in_video`` — for Omni models that read the video's own track:
  ``extra_body={"mm_processor_kwargs": {"use_audio_in_video": True}}`` (needs a video part, so not
  with ``frames``); ``none`` — no sound. A clip without an audio track sends no audio part and
  says so in the route.
* ``no_clip`` (or a request without ``media_path``) → the prompt as the only part.

Media parts come first, then the prompt (as for Gemini). The window is the request's
``start_offset_s``/``end_offset_s`` (the whole file when both are None). The route actually used
is returned in :attr:`CallResult.route`, e.g. ``"video=frames(30@1fps);audio=input_audio"``
or ``"text"``; :meth:`OpenAICompatCaller.route_for` gives the same string without calling (for
rows served from the cache). Media prepared for a window (base64 video, frames, wav) is memoised
per file, window and route parameters for the process, so the items of one clip share one ffmpeg
run.

Decisions and edge cases:

* **Retries.** The SDK's own retries are off (``max_retries=0``) so every attempt goes through the
  runner's rate limiter and is counted. HTTP 408, 429 and 5xx, timeouts and connection errors
  become :class:`.calls.RetryableError` (``retry_after`` from ``retry-after-ms`` or ``Retry-After``,
  else None). Other HTTP errors (400, 401, 404, 422 …) are ``error`` results carrying the server's
  message. A 200 whose body has no choices, no text, or does not parse is an ``error`` result
  (not retried: a server that answers nonsense will likely do it again).
* **Structured output.** When ``request.settings`` carries ``response_schema`` (the Gemini-style
  schema that :meth:`judge_request` and the Gemini caller use, upper-case types) it is converted
  to JSON Schema (:func:`json_schema_of`); ``json_schema`` is taken as JSON Schema already. Either
  goes out as ``response_format={"type": "json_schema", ...}`` (``strict`` when every object lists
  all its properties as required); ``response_mime_type="application/json"`` alone asks for
  ``json_object``. The reply must then pass :func:`.gemini.check_json_reply` (the text is kept in
  ``reply`` for audit when it does not).
* **Tokens and latency.** ``usage.prompt_tokens``, ``usage.completion_tokens`` and
  ``usage.prompt_tokens_details.cached_tokens`` (0 when the server omits them); ``latency_s`` times
  the chat call only, not media preparation.
* **Keys.** From :func:`.providers.resolve_api_key` (environment only) or the caller; kept in the
  SDK client, never in a result, route, identity or error text (server messages are scrubbed of
  it). The endpoint comes from the :class:`.providers.ProviderIdentity`.
* **Model.** ``request.model`` is sent, with a ``provider/`` prefix removed; empty → the
  identity's model.
* **Event loops.** One SDK client per event loop (weakly held), so the same caller works across
  successive ``asyncio.run`` calls (``run_calls_sync``).
"""

from __future__ import annotations

import asyncio
import base64
import json
import math
import os
import re
import tempfile
import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import openai
from openai import AsyncOpenAI

from ..cache import CallCache
from ..calls import CallRequest, CallResult, RetryableError, parse_retry_after
from ..media import MediaError, cut_clip, probe, run_ffmpeg
from .base import OPENAI_COMPATIBLE, ProviderIdentity, identify, resolve_api_key, with_identity
from .structured import JudgeCalls, check_json_reply

VIDEO_ROUTES = ("video_url", "file_url", "frames", "none")
AUDIO_ROUTES = ("input_audio", "use_audio_in_video", "none")
RETRYABLE_HTTP = frozenset({408, 429})


@dataclass(frozen=True)
class OpenAICompatSettings:
    """Defaults for every call of an :class:`OpenAICompatCaller` (see the module docstring for the
    routes). ``max_tokens_field`` is the request field that bounds the reply: ``max_tokens`` (vLLM,
    SGLang) or ``max_completion_tokens`` (OpenAI's newer models). ``work_dir`` holds windows cut
    for the ``file_url`` route (default: a temporary directory of the process); a ``file_url``
    server must be allowed to read it. ``timeout_s`` bounds each HTTP request.
    ``media_memo_entries`` bounds the media prepared and kept for reuse (one entry is one file's
    base64 video, frames or wav; a clip and its silenced copy under two routes take four)."""

    temperature: float = 0.0
    max_output_tokens: int = 256
    max_tokens_field: str = "max_tokens"
    seed: int | None = None
    video_route: str = "video_url"
    audio_route: str = "input_audio"
    frames_fps: float = 1.0
    max_frames: int = 32
    frame_width: int = 448
    audio_sample_rate: int = 16000
    timeout_s: float = 120
    work_dir: str | None = None
    media_memo_entries: int = 16

    def __post_init__(self) -> None:
        check_routes(self.video_route, self.audio_route, self.frames_fps, self.max_frames)


def check_routes(video_route: str, audio_route: str, fps: float = 1.0, max_frames: int = 1) -> None:
    """ValueError naming the allowed values when a route combination cannot be sent."""
    if video_route not in VIDEO_ROUTES:
        raise ValueError(f"video_route {video_route!r} is not one of {', '.join(VIDEO_ROUTES)}")
    if audio_route not in AUDIO_ROUTES:
        raise ValueError(f"audio_route {audio_route!r} is not one of {', '.join(AUDIO_ROUTES)}")
    if audio_route == "use_audio_in_video" and video_route not in ("video_url", "file_url"):
        raise ValueError("audio_route use_audio_in_video reads the video's own track, so it needs "
                         "video_route video_url or file_url (not frames or none); use input_audio")
    if video_route == "frames" and not (fps > 0 and max_frames >= 1):
        raise ValueError(f"frame sampling needs frames_fps > 0 and max_frames >= 1, "
                         f"got {fps} and {max_frames}")


def default_settings(identity: ProviderIdentity, **overrides) -> OpenAICompatSettings:
    """The routes that suit a model when nothing else is said: Omni models (``*omni*``) on a
    local server read the video's own track (``video_url`` + ``use_audio_in_video``); OpenAI's
    API gets frames and ``input_audio`` with ``max_completion_tokens``; other models get
    ``video_url`` + ``input_audio``. ``overrides`` win."""
    base: dict = {}
    if identity.provider == "openai":
        base = {"video_route": "frames", "audio_route": "input_audio",
                "max_tokens_field": "max_completion_tokens"}
    elif "omni" in identity.model.lower():
        base = {"video_route": "video_url", "audio_route": "use_audio_in_video"}
    return OpenAICompatSettings(**{**base, **overrides})


# -- structured output ----------------------------------------------------------------------------

def json_schema_of(schema: dict) -> dict:
    """A Gemini-style schema (``{"type": "OBJECT", "properties": ..., "required": ...}``) as JSON
    Schema: types lower-cased, ``nullable`` folded into the type, objects closed
    (``additionalProperties: false``, which strict mode requires). Other keys pass through."""
    if not isinstance(schema, dict):
        return schema
    out: dict = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            out["type"] = value.lower()
        elif key == "properties" and isinstance(value, dict):
            out["properties"] = {k: json_schema_of(v) for k, v in value.items()}
        elif key == "items":
            out["items"] = json_schema_of(value)
        elif key == "nullable":
            continue
        else:
            out[key] = value
    if schema.get("nullable") and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    if out.get("type") == "object":
        out.setdefault("additionalProperties", False)
    return out


def _strict_ok(schema) -> bool:
    """Strict mode needs every object to list all its properties as required."""
    if not isinstance(schema, dict):
        return True
    props = schema.get("properties") or {}
    if props and set(schema.get("required") or []) != set(props):
        return False
    return all(_strict_ok(v) for v in props.values()) and _strict_ok(schema.get("items"))


def response_format_of(settings: dict) -> tuple[dict | None, dict | None]:
    """``(response_format, schema to check the reply against)`` for a request's settings."""
    if settings.get("json_schema"):
        schema = settings["json_schema"]
    elif settings.get("response_schema"):
        schema = json_schema_of(settings["response_schema"])
    elif settings.get("response_mime_type") == "application/json":
        return {"type": "json_object"}, None
    else:
        return None, None
    name = re.sub(r"[^A-Za-z0-9_-]", "_", str(settings.get("response_schema_name") or "reply"))[:64]
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema,
                                                   "strict": _strict_ok(schema)}}, schema


# -- errors ---------------------------------------------------------------------------------------

def retry_after_seconds(headers) -> float | None:
    """The wait a server asked for: ``retry-after-ms`` (OpenAI), else ``Retry-After`` (seconds or
    an HTTP date); None when absent or unreadable."""
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms:
            return max(0.0, float(ms) / 1000)
    except (TypeError, ValueError):
        pass
    return parse_retry_after(headers.get("retry-after"))


def _status_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(body.get("message"), str):
            return body["message"]
    return exc.message or type(exc).__name__


# -- media preparation (blocking; run in a worker thread) ----------------------------------------

def _window(path: str, start: float | None, end: float | None) -> tuple[float, float]:
    """``(start, end)`` in seconds within the file, the file's duration filling what is None."""
    if start is not None and end is not None:
        return float(start), float(end)
    duration = probe(path).duration_s
    return float(start or 0.0), float(end if end is not None else duration)


def sample_frames(path: str, start: float, end: float, fps: float, max_frames: int,
                  width: int) -> tuple[float, list[tuple[float, bytes]]]:
    """JPEG frames of ``[start, end)`` at ``fps`` (lowered to ``max_frames / duration`` when more
    would be needed), scaled to at most ``width`` pixels wide: ``(fps used, [(seconds from the
    file's start, jpeg bytes), ...])``. The fps filter emits frame ``k`` at ``k / fps`` after the
    window's start, so that is its timestamp."""
    span = end - start
    if span <= 0:
        raise MediaError(f"{path}: empty window {start:g}-{end:g} s")
    used = min(float(fps), max_frames / span)
    with tempfile.TemporaryDirectory(prefix="frames-") as tmp:
        run_ffmpeg(["-v", "error", "-y", "-ss", f"{start:.3f}", "-t", f"{span:.3f}", "-i", path, "-map", "0:v:0",
                 "-vf", f"fps={used:.6f},scale='min({int(width)},iw)':-2", "-frames:v",
                 str(int(max_frames)), "-q:v", "4", os.path.join(tmp, "f_%05d.jpg")],
                "sampling frames", path)
        files = sorted(Path(tmp).glob("f_*.jpg"))
        if not files:
            raise MediaError(f"{path}: no frames in {start:g}-{end:g} s")
        return used, [(start + k / used, f.read_bytes()) for k, f in enumerate(files)]


def extract_wav(path: str, start: float, end: float, rate: int) -> bytes | None:
    """The window's first audio track as mono 16-bit PCM wav at ``rate`` Hz; None when the file has
    no audio track."""
    if not probe(path).has_audio:
        return None
    with tempfile.TemporaryDirectory(prefix="wav-") as tmp:
        out = os.path.join(tmp, "a.wav")
        run_ffmpeg(["-v", "error", "-y", "-ss", f"{start:.3f}", "-t", f"{end - start:.3f}", "-i", path, "-map", "0:a:0",
                 "-ac", "1", "-ar", str(int(rate)), "-c:a", "pcm_s16le", "-f", "wav", out],
                "extracting audio", path)
        return Path(out).read_bytes()


class _LoopState:
    def __init__(self, client: AsyncOpenAI):
        self.client = client


class OpenAICompatCaller(JudgeCalls):
    """``await caller(request) -> CallResult`` against an OpenAI-compatible server (see the
    module docstring).

    ``identity`` names the provider, model and endpoint (the SDK's ``base_url``); ``settings``
    default to :func:`default_settings` of the identity. ``cache`` is used by :meth:`judge_choice`
    only. ``api_key`` defaults to :func:`.providers.resolve_api_key` (ValueError when the provider
    needs one and none is set).
    """

    def __init__(self, identity: ProviderIdentity, settings: OpenAICompatSettings | None = None,
                 cache: CallCache | None = None, api_key: str | None = None):
        if identity.provider not in OPENAI_COMPATIBLE:
            raise ValueError(f"{identity.name} is not an OpenAI-compatible provider "
                             "(openai/, vllm/, sglang/)")
        self.identity = identity
        self.settings = settings or default_settings(identity)
        self.cache = cache
        self._api_key = api_key or resolve_api_key(identity.provider)
        self._loops: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState]" = (
            weakref.WeakKeyDictionary())
        self._memo: OrderedDict[tuple, object] = OrderedDict()
        self._memo_lock = threading.Lock()
        self._key_locks: dict[tuple, threading.Lock] = {}
        self._work_dir: str | None = self.settings.work_dir

    @classmethod
    def for_model(cls, name: str, endpoint: str | None = None, cache: CallCache | None = None,
                  api_key: str | None = None, **settings) -> "OpenAICompatCaller":
        """A caller for a provider-qualified name such as ``vllm/Qwen/Qwen2.5-Omni-7B``, at
        ``endpoint`` (else the provider's environment variable or default)."""
        identity = identify(name, endpoint)
        return cls(identity, default_settings(identity, **settings), cache, api_key)

    @property
    def provider(self) -> str:
        return self.identity.provider

    @property
    def model(self) -> str:
        return self.identity.model

    @property
    def endpoint(self) -> str:
        return self.identity.endpoint

    def __repr__(self) -> str:
        return f"OpenAICompatCaller({self.identity.name} @ {self.identity.endpoint})"

    # -- settings that enter the cache key -----------------------------------------------------

    def route_settings(self, overrides: dict | None = None) -> dict:
        """The route knobs in effect (defaults, then ``overrides``), as they enter the cache key:
        frame parameters only for the frames route, the sample rate only for ``input_audio``."""
        s, o = self.settings, overrides or {}
        out = {"video_route": o.get("video_route", s.video_route),
               "audio_route": o.get("audio_route", s.audio_route)}
        if out["video_route"] == "frames":
            out.update(frames_fps=o.get("frames_fps", s.frames_fps),
                       max_frames=o.get("max_frames", s.max_frames),
                       frame_width=o.get("frame_width", s.frame_width))
        if out["audio_route"] == "input_audio":
            out["audio_sample_rate"] = o.get("audio_sample_rate", s.audio_sample_rate)
        return out

    def generation_settings(self) -> dict:
        """Everything that changes what the model replies or sees, plus the identity: pass it as
        the requests' ``settings`` and to :func:`.call_cache.cache_key` (the role
        :func:`.gemini.generation_settings` plays for Gemini)."""
        s = self.settings
        base = {"temperature": s.temperature, "max_output_tokens": s.max_output_tokens,
                **self.route_settings()}
        if s.seed is not None:
            base["seed"] = s.seed
        return with_identity(base, self.identity)

    def route_for(self, request: CallRequest) -> str:
        """The route a request is (or was) sent by, without calling; for a clip without an audio
        track under ``input_audio`` this reads the file's streams."""
        if not request.media_path or request.condition == "no_clip":
            return "text"
        r = self.route_settings(request.settings)
        bits = []
        if r["video_route"] == "frames":
            try:
                start, end = _window(request.media_path, request.start_offset_s,
                                     request.end_offset_s)
                span = end - start
                used = min(float(r["frames_fps"]), r["max_frames"] / span)
                n = min(int(r["max_frames"]), max(1, math.ceil(span * used - 1e-9)))
                bits.append(f"video=frames({n}@{used:g}fps)")
            except MediaError:
                bits.append("video=frames")
        else:
            bits.append(f"video={r['video_route']}")
        audio = r["audio_route"]
        if audio == "input_audio":
            try:
                has_audio = probe(request.media_path).has_audio
            except MediaError:
                has_audio = True
            bits.append("audio=input_audio" if has_audio else "audio=none(no audio track)")
        else:
            bits.append(f"audio={audio}")
        return ";".join(bits)

    # -- client ---------------------------------------------------------------------------------

    def _client(self) -> AsyncOpenAI:
        loop = asyncio.get_running_loop()
        state = self._loops.get(loop)
        if state is None:
            state = _LoopState(AsyncOpenAI(base_url=self.identity.endpoint, api_key=self._api_key,
                                           max_retries=0, timeout=self.settings.timeout_s))
            self._loops[loop] = state
        return state.client

    async def aclose(self) -> None:
        """Close the SDK client of the running loop."""
        state = self._loops.pop(asyncio.get_running_loop(), None)
        if state is not None:
            await state.client.close()

    async def served_models(self) -> list[str]:
        """The model ids the server lists at ``/v1/models`` — to check, before a run, that the
        model asked for is the one served (vLLM and SGLang serve one model under the name given
        to ``--served-model-name``). Raises RetryableError for transient failures and
        ValueError (with the server's message) for others."""
        try:
            page = await self._client().models.list()
        except openai.APIStatusError as exc:
            message = self._scrub(f"HTTP {exc.status_code}: {_status_message(exc)}")
            if exc.status_code in RETRYABLE_HTTP or exc.status_code >= 500:
                raise RetryableError(message, status=int(exc.status_code)) from None
            raise ValueError(f"listing models at {self.identity.endpoint}: {message}") from None
        except openai.APIConnectionError as exc:
            raise RetryableError(f"{type(exc).__name__}: {exc}", status=0) from None
        return [m.id for m in page.data]

    def _scrub(self, text: str) -> str:
        """``text`` with the API key (if a real one) replaced by ``***``."""
        key = self._api_key
        if key and len(key) >= 4 and key != "EMPTY":
            text = text.replace(key, "***")
        return text

    # -- media ----------------------------------------------------------------------------------

    def _memoised(self, key: tuple, compute):
        """``compute()`` once per key for the process (bounded LRU); concurrent callers of the same
        key wait for the first. Blocking: call it in a worker thread."""
        with self._memo_lock:
            if key in self._memo:
                self._memo.move_to_end(key)
                return self._memo[key]
            lock = self._key_locks.setdefault(key, threading.Lock())
        with lock:
            with self._memo_lock:
                if key in self._memo:
                    return self._memo[key]
            value = compute()
            with self._memo_lock:
                self._memo[key] = value
                while len(self._memo) > max(1, self.settings.media_memo_entries):
                    self._memo.popitem(last=False)
                self._key_locks.pop(key, None)
            return value

    def _window_file(self, path: str, start: float | None, end: float | None) -> str:
        """``path`` itself when the whole file is asked for, else the window cut to ``work_dir``."""
        if start is None and end is None:
            return path
        s, e = _window(path, start, end)
        with self._memo_lock:
            if self._work_dir is None:
                self._work_dir = tempfile.mkdtemp(prefix="epic-levels-windows-")
        st = os.stat(path)
        out = Path(self._work_dir) / f"{Path(path).stem}.{st.st_size}.{st.st_mtime_ns}.{s:.3f}-{e:.3f}.mp4"
        if not out.is_file():
            cut_clip(Path(path), s, e, out)
        return str(out)

    def _prepare(self, request: CallRequest, r: dict) -> tuple[list[dict], dict, str]:
        """(media parts, extra_body, route) for a request with media. Blocking."""
        path = request.media_path
        assert path is not None
        if not os.path.isfile(path):
            raise MediaError(f"media file not found: {path}")
        st = os.stat(path)
        ident = (os.path.abspath(path), st.st_size, st.st_mtime_ns, request.start_offset_s,
                 request.end_offset_s)
        parts: list[dict] = []
        extra: dict = {}
        bits: list[str] = []
        video = r["video_route"]
        if video == "video_url":
            data = self._memoised(("video", *ident), lambda: base64.b64encode(Path(
                self._window_file(path, request.start_offset_s, request.end_offset_s)).read_bytes()
            ).decode("ascii"))
            parts.append({"type": "video_url", "video_url": {"url": f"data:video/mp4;base64,{data}"}})
            bits.append("video=video_url")
        elif video == "file_url":
            local = self._window_file(path, request.start_offset_s, request.end_offset_s)
            parts.append({"type": "video_url", "video_url": {"url": Path(local).resolve().as_uri()}})
            bits.append("video=file_url")
        elif video == "frames":
            fps, n, width = float(r["frames_fps"]), int(r["max_frames"]), int(r["frame_width"])

            def frames():
                s, e = _window(path, request.start_offset_s, request.end_offset_s)
                used, got = sample_frames(path, s, e, fps, n, width)
                return used, [(t, base64.b64encode(jpg).decode("ascii")) for t, jpg in got]

            used, got = self._memoised(("frames", fps, n, width, *ident), frames)
            for t, b64 in got:
                parts.append({"type": "text", "text": f"Frame at {t:.1f} s:"})
                parts.append({"type": "image_url",
                              "image_url": {"url": f"data:image/jpeg;base64,{b64}"}})
            bits.append(f"video=frames({len(got)}@{used:g}fps)")
        else:
            bits.append("video=none")

        audio = r["audio_route"]
        if audio == "input_audio":
            rate = int(r["audio_sample_rate"])

            def wav():
                s, e = _window(path, request.start_offset_s, request.end_offset_s)
                raw = extract_wav(path, s, e, rate)
                return None if raw is None else base64.b64encode(raw).decode("ascii")

            data = self._memoised(("wav", rate, *ident), wav)
            if data is None:
                bits.append("audio=none(no audio track)")
            else:
                parts.append({"type": "input_audio", "input_audio": {"data": data, "format": "wav"}})
                bits.append("audio=input_audio")
        elif audio == "use_audio_in_video":
            extra["mm_processor_kwargs"] = {"use_audio_in_video": True}
            bits.append("audio=use_audio_in_video")
        else:
            bits.append("audio=none")
        return parts, extra, ";".join(bits)

    # -- calling --------------------------------------------------------------------------------

    def _fail(self, request: CallRequest, message: str, **extra) -> CallResult:
        return CallResult(request.cache_key, extra.pop("reply", ""), "error",
                              error=self._scrub(message), **extra)

    def _model(self, request: CallRequest) -> str:
        model = request.model or self.identity.model
        prefix = f"{self.identity.provider}/"
        return model[len(prefix):] if model.startswith(prefix) else model

    async def __call__(self, request: CallRequest) -> CallResult:
        """Answer one request. Raises only RetryableError (for the runner to retry) and truly
        unexpected exceptions (which the runner turns into ``error`` results)."""
        s, o = self.settings, request.settings or {}
        r = self.route_settings(o)
        try:
            check_routes(r["video_route"], r["audio_route"], float(r.get("frames_fps", 1.0)),
                         int(r.get("max_frames", 1)))
        except ValueError as exc:
            return self._fail(request, str(exc))
        start, end = request.start_offset_s, request.end_offset_s
        text_only = not request.media_path or request.condition == "no_clip"
        route = "text"
        parts: list[dict] = []
        extra: dict = {}
        if not text_only:
            if (start is not None and start < 0) or (end is not None and end < 0) or (
                    start is not None and end is not None and end <= start):
                return self._fail(request, f"invalid offsets start={start} end={end}")
            try:
                parts, extra, route = await asyncio.to_thread(self._prepare, request, r)
            except (MediaError, OSError) as exc:
                return self._fail(request, f"media: {exc}", route=self.route_for(request))
        parts.append({"type": "text", "text": request.prompt})

        messages: list[dict] = []
        if o.get("system_instruction"):
            messages.append({"role": "system", "content": str(o["system_instruction"])})
        messages.append({"role": "user", "content": parts})
        response_format, schema = response_format_of(o)
        kwargs: dict = {"model": self._model(request), "messages": messages,
                        "temperature": o.get("temperature", s.temperature),
                        s.max_tokens_field: o.get("max_output_tokens", s.max_output_tokens)}
        seed = o.get("seed", s.seed)
        if seed is not None:
            kwargs["seed"] = seed
        if response_format is not None:
            kwargs["response_format"] = response_format
        if extra:
            kwargs["extra_body"] = extra

        started = time.monotonic()
        try:
            response = await self._client().chat.completions.create(**kwargs)
        except openai.APIStatusError as exc:
            code = int(exc.status_code)
            message = self._scrub(f"HTTP {code}: {_status_message(exc)}")
            if code in RETRYABLE_HTTP or code >= 500:
                raise RetryableError(message, status=code,
                                     retry_after=retry_after_seconds(exc.response.headers)) from None
            return self._fail(request, message, route=route,
                              latency_s=time.monotonic() - started)
        except openai.APIConnectionError as exc:  # APITimeoutError is one
            raise RetryableError(self._scrub(f"{type(exc).__name__}: {exc}"), status=0) from None
        except (openai.APIResponseValidationError, json.JSONDecodeError, ValueError) as exc:
            return self._fail(request, f"malformed response: {type(exc).__name__}: {exc}",
                              route=route, latency_s=time.monotonic() - started)
        latency = time.monotonic() - started
        return self._read(request, response, schema, route, latency, o)

    def _read(self, request: CallRequest, response, schema: dict | None, route: str,
              latency: float, o: dict) -> CallResult:
        """The result of a 200 answer; ``error`` when it is not a usable chat completion."""
        usage = getattr(response, "usage", None)
        details = getattr(usage, "prompt_tokens_details", None) if usage is not None else None
        tokens = dict(prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                      output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
                      cached_tokens=int(getattr(details, "cached_tokens", 0) or 0),
                      latency_s=latency, route=route)
        choices = getattr(response, "choices", None)
        if isinstance(response, (str, bytes)) or not choices:
            return self._fail(request, "malformed response: no choices", **tokens)
        choice = choices[0]
        message = getattr(choice, "message", None)
        text = getattr(message, "content", None) if message is not None else None
        if not isinstance(text, str) or not text:
            why = getattr(choice, "finish_reason", None)
            refusal = getattr(message, "refusal", None) if message is not None else None
            detail = f"refusal: {refusal}" if refusal else f"finish_reason={why}"
            return self._fail(request, f"empty response: {detail}", **tokens)
        if schema is not None or o.get("response_mime_type") == "application/json":
            why = check_json_reply(text, schema)
            if why is not None:
                return self._fail(request, why, reply=text, **tokens)
        return CallResult(request.cache_key, text, "ok", **tokens)


def make(model: str, *, base_url: str | None = None, cache: CallCache | None = None,
         provider: str = "vllm", **settings) -> OpenAICompatCaller:
    """The provider factory (:func:`.base.make_provider`): a caller for ``provider``/``model`` at
    ``base_url`` (else the provider's environment variable or default), with the model's default
    routes (:func:`default_settings`) and ``settings`` overriding them."""
    return OpenAICompatCaller.for_model(f"{provider}/{model}", base_url, cache, **settings)
