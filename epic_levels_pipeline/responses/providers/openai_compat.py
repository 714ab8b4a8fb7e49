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
  says so in the route. The route is a setting (the models file's ``audio = "in_video" |
  "separate" | "none"``, :func:`settings_for`), never guessed from the model's name; with nothing
  set, vLLM and SGLang get ``video_url`` + ``input_audio`` and OpenAI ``frames`` + ``input_audio``.
* **server-side sampling**: on ``video_url`` / ``file_url``, ``video_fps`` (the models file's ``fps``)
  goes out as ``mm_processor_kwargs.fps``, lowered so at most ``max_frames`` cover the window.
* ``extra_body`` (the models file's) is merged into every request's body (its
  ``mm_processor_kwargs`` with the route's).
* ``no_clip`` (or a request without ``media_path``) → the prompt as the only part.

Media parts come first, then the prompt (as for Gemini); a request without media sends the prompt as the
message's plain string content (servers whose chat template joins strings, such as llama.cpp's, refuse a
list of parts). The window is the request's
``start_offset_s``/``end_offset_s`` (the whole file when both are None). The route actually used
is returned in :attr:`CallResult.route`, e.g. ``"video=frames(30@1fps);audio=input_audio"``
or ``"text"``; :meth:`OpenAICompatCaller.route_for` gives the same string without calling (for
rows served from the cache). The media parts are :mod:`.openai_media`'s (memoised per file, window
and route parameters, so the items of one clip share one ffmpeg run, and serialised once: the body goes out
through the SDK's ``post(..., content=...)`` with the media's JSON spliced in, :func:`.openai_wire.chat_body`);
structured output and error bodies are :mod:`.openai_wire`'s.

Decisions and edge cases:

* **Retries.** The SDK's own retries are off (``max_retries=0``) so every attempt goes through the
  runner's rate limiter and is counted. HTTP 408, 429 and 5xx, timeouts and connection errors
  become :class:`.calls.RetryableError` (``retry_after`` from ``retry-after-ms`` or ``Retry-After``,
  else None). Other HTTP errors (400, 401, 404, 422 …) are ``error`` results carrying the server's
  message. A 200 whose body has no choices, no text, or does not parse is an ``error`` result
  (not retried: a server that answers nonsense will likely do it again).
* **Structured output.** When ``request.settings`` carries ``response_schema`` (the Gemini-style
  schema that :meth:`judge_request` and the Gemini caller use, upper-case types) it is converted
  to JSON Schema (:func:`json_schema_of`); ``json_schema`` is taken as JSON Schema already. How it goes
  out is the model's ``structured_output`` (the models file's; a request's settings may override it):
  ``json_schema`` (default) as ``response_format={"type": "json_schema", ...}`` (``strict`` when every
  object lists all its properties as required); ``json_object`` as ``{"type": "json_object"}`` and
  ``none`` as no ``response_format``, the schema then stated after the prompt
  (:func:`.openai_wire.schema_instruction`; under ``none`` the JSON object is taken out of the text around
  it). ``response_mime_type="application/json"`` alone asks for ``json_object``. The reply must pass
  :func:`.structured.check_json_reply` in every form (the text is kept in ``reply`` for audit when it
  does not).
* **Rejected forms.** Every HTTP error and every answer is recorded in the caller's
  :class:`.calls.Rejections` by request form (:meth:`OpenAICompatCaller.request_form`: text or the media
  route, and the structured-output form); a form the server keeps rejecting with the same message stops,
  its rows carrying one message naming the setting to change (:meth:`OpenAICompatCaller.rejection_advice`).
* **Tokens and latency.** ``usage.prompt_tokens``, ``usage.completion_tokens`` and
  ``usage.prompt_tokens_details.cached_tokens`` (0 when the server omits them); ``latency_s`` times
  the chat call only, not media preparation.
* **Keys.** From :func:`.registry.resolve_api_key` (environment only) or the caller; kept in the
  SDK client, never in a result, route, identity or error text (server messages are scrubbed of
  it). The endpoint comes from the :class:`.providers.ProviderIdentity`.
* **Model.** ``request.model`` is sent, with a ``provider/`` prefix removed; empty → the
  identity's model.
* **Event loops.** One SDK client per event loop (weakly held), so the same caller works across
  successive ``asyncio.run`` calls (``run_calls_sync``).
"""

from __future__ import annotations

import asyncio
import json
import math
import time
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import openai
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion

from ..cache import CallCache
from ..calls import CallRequest, CallResult, Rejections, RetryableError
from ..media import MediaError, probe
from ..media_window import media_window
from . import openai_pricing, registry
from .base import ProviderIdentity, with_identity
from .openai_media import MediaParts, server_fps
from .openai_wire import (MEDIA_SLOT, STRUCTURED_OUTPUT, chat_body, json_in_text, json_schema_of,
                          response_format_of, retry_after_seconds, schema_instruction, short_message, status_message)
from .structured import JudgeCalls, check_json_reply

if TYPE_CHECKING:
    from ..models_config import ModelSpec

__all__ = ["AUDIO_ROUTES", "LocalServerFacts", "OpenAICompatCaller", "OpenAICompatFacts", "OpenAICompatSettings",
           "VIDEO_ROUTES", "check_routes", "default_settings", "from_spec", "json_schema_of", "make", "response_format_of",
           "retry_after_seconds", "settings_for"]

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
    base64 video, frames or wav; a clip and its silenced copy under two routes take four).
    ``video_fps`` asks a ``video_url``/``file_url`` server to sample at that rate (None: the server's
    default); ``extra_body`` is merged into every request. ``structured_output`` is the form structured
    requests take (:data:`.openai_wire.STRUCTURED_OUTPUT`)."""

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
    video_fps: float | None = None
    extra_body: dict = field(default_factory=dict)
    structured_output: str = "json_schema"

    def __post_init__(self) -> None:
        check_routes(self.video_route, self.audio_route, self.frames_fps, self.max_frames)
        if self.structured_output not in STRUCTURED_OUTPUT:
            raise ValueError(f"structured_output {self.structured_output!r} is not one of "
                             f"{', '.join(STRUCTURED_OUTPUT)}")


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


AUDIO_OF_CONFIG = {"in_video": "use_audio_in_video", "separate": "input_audio", "none": "none"}


def default_settings(identity: ProviderIdentity, **overrides) -> OpenAICompatSettings:
    """The provider's defaults (never the model's name; :attr:`OpenAICompatFacts.settings_defaults`): OpenAI's API
    gets frames and ``input_audio`` with ``max_completion_tokens``; vLLM and SGLang get ``video_url`` +
    ``input_audio``. ``overrides`` win."""
    return OpenAICompatSettings(**{**_facts(identity.provider).settings_defaults, **overrides})


def _facts(provider: str) -> "OpenAICompatFacts":
    facts = registry.get(provider)
    if not isinstance(facts, OpenAICompatFacts):
        compatible = [f.name for f in registry.every() if isinstance(f, OpenAICompatFacts)]
        raise ValueError(f"{provider} is not an OpenAI-compatible provider ({', '.join(compatible)})")
    return facts


def settings_for(spec: "ModelSpec", **overrides) -> OpenAICompatSettings:
    """The settings a models-file entry (:class:`..models_config.ModelSpec`) resolves to."""
    route = {"video_route": spec.video, "audio_route": AUDIO_OF_CONFIG[spec.audio],
             "timeout_s": spec.timeout_s, "extra_body": dict(spec.extra_body),
             "structured_output": getattr(spec, "structured_output", "json_schema")}
    if spec.video == "frames":
        route.update(frames_fps=spec.fps or 1.0, max_frames=spec.max_frames or 32)
    elif spec.fps:
        route.update(video_fps=spec.fps, **({"max_frames": spec.max_frames} if spec.max_frames else {}))
    identity = ProviderIdentity(spec.provider, spec.model, spec.endpoint)
    return default_settings(identity, **{**route, **overrides})


def merge_extra_body(configured: dict | None, route: dict) -> dict:
    """The configured ``extra_body`` with the route's keys added (``mm_processor_kwargs`` merged, the
    route's keys winning: the route is what the cache key says was sent)."""
    out = dict(configured or {})
    for key, value in route.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


class _LoopState:
    def __init__(self, client: AsyncOpenAI):
        self.client = client


class OpenAICompatCaller(JudgeCalls):
    """``await caller(request) -> CallResult`` against an OpenAI-compatible server (see the
    module docstring).

    ``identity`` names the provider, model and endpoint (the SDK's ``base_url``); ``settings``
    default to :func:`default_settings` of the identity. ``cache`` is used by :meth:`judge_choice`
    only. ``api_key`` defaults to :func:`.registry.resolve_api_key` (ValueError when the provider
    needs one and none is set). ``name`` is the models file's NAME, which the messages of rejected
    forms name (default: the provider-qualified model name).
    """

    def __init__(self, identity: ProviderIdentity, settings: OpenAICompatSettings | None = None,
                 cache: CallCache | None = None, api_key: str | None = None, *, name: str | None = None):
        self.facts = _facts(identity.provider)
        self.identity = identity
        self.settings = settings or default_settings(identity)
        self.cache = cache
        self._api_key = api_key or registry.resolve_api_key(identity.provider)
        self._loops: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState]" = (
            weakref.WeakKeyDictionary())
        self._media = MediaParts(self.settings.work_dir, self.settings.media_memo_entries)
        self.name = name or identity.name
        self._ahead: dict[tuple, CallRequest] = {}  # a media window -> the request of the next window to prepare
        self._preparing: set[asyncio.Task] = set()
        self.rejections = Rejections(identity.cache_identity(), self.request_form, self.rejection_advice)

    @classmethod
    def for_model(cls, name: str, endpoint: str | None = None, cache: CallCache | None = None,
                  api_key: str | None = None, **settings) -> "OpenAICompatCaller":
        """A caller for a provider-qualified name such as ``vllm/Qwen/Qwen2.5-Omni-7B``, at
        ``endpoint`` (else the provider's environment variable or default)."""
        identity = registry.identify(name, endpoint)
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
        elif out["video_route"] in ("video_url", "file_url") and o.get("video_fps", s.video_fps):
            out.update(video_fps=o.get("video_fps", s.video_fps), max_frames=o.get("max_frames", s.max_frames))
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
        if s.extra_body:
            base["extra_body"] = s.extra_body
        if s.seed is not None:
            base["seed"] = s.seed
        if s.structured_output != "json_schema":  # the default stays out, so existing cache keys hold
            base["structured_output"] = s.structured_output
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
                start, end = media_window(request.media_path, request.start_offset_s,
                                     request.end_offset_s)
                span = end - start
                used = min(float(r["frames_fps"]), r["max_frames"] / span)
                n = min(int(r["max_frames"]), max(1, math.ceil(span * used - 1e-9)))
                bits.append(f"video=frames({n}@{used:g}fps)")
            except MediaError:
                bits.append("video=frames")
        elif r.get("video_fps"):
            try:
                start, end = media_window(request.media_path, request.start_offset_s, request.end_offset_s)
                bits.append(f"video={r['video_route']}({server_fps(r, end - start):g}fps)")
            except MediaError:
                bits.append(f"video={r['video_route']}")
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

    # -- media prepared ahead ---------------------------------------------------------------------

    def _window(self, request: CallRequest) -> tuple | None:
        if not request.media_path or request.condition == "no_clip":
            return None
        return (request.media_path, request.start_offset_s, request.end_offset_s,
                json.dumps(self.route_settings(request.settings), sort_keys=True))

    def expect(self, requests) -> None:
        """The requests :func:`.calls.run_calls` is about to send, in order: while the items of one media window
        are sent, the next window's media is cut and encoded (one window ahead, so the memo keeps both)."""
        windows = list(dict.fromkeys(w for w in map(self._window, requests) if w is not None))
        first = {}
        for request in requests:
            first.setdefault(self._window(request), request)
        self._ahead = {w: first[nxt] for w, nxt in zip(windows, windows[1:])}

    def _prepare_next(self, request: CallRequest) -> None:
        nxt = self._ahead.pop(self._window(request), None) if self._ahead else None
        if nxt is None:
            return

        def encode() -> None:
            try:
                self._media.encoded(nxt, self.route_settings(nxt.settings))
            except (MediaError, OSError):
                pass  # its own request reports it

        task = asyncio.get_running_loop().create_task(asyncio.to_thread(encode))
        self._preparing.add(task)
        task.add_done_callback(self._preparing.discard)

    # -- rejected forms ---------------------------------------------------------------------------

    def _structured(self, o: dict) -> str:
        """The structured-output form of a request's settings ("" when it asks for none)."""
        if not (o.get("json_schema") or o.get("response_schema") or o.get("response_mime_type") == "application/json"):
            return ""
        return str(o.get("structured_output", self.settings.structured_output))

    def request_form(self, request: CallRequest) -> str:
        """What a server may refuse of a request as a whole: ``text`` or the media route
        (``video_url+input_audio``), then ``;`` and the structured-output form when it asks for one."""
        o = request.settings or {}
        if not request.media_path or request.condition == "no_clip":
            form = "text"
        else:
            r = self.route_settings(o)
            form = f"{r['video_route']}+{r['audio_route']}"
        structured = self._structured(o)
        return f"{form};{structured}" if structured else form

    def rejection_advice(self, form: str, status: int, message: str) -> str:
        """The message of a stopped form: what the server rejects and the setting to change."""
        where, said = f"[models.{self.name}]", f"HTTP {status}: {short_message(message)}"
        media, _, structured = form.partition(";")
        about_format = any(w in message.lower() for w in ("response_format", "json_schema", "json_object",
                                                           "schema", "grammar"))
        if structured == "json_schema" and (media == "text" or about_format):
            return (f"model {self.name}: the server rejects json_schema response_format ({said}): set "
                    f'structured_output = "json_object" in {where} (or "none"; `epic-levels probe {self.name}` '
                    "says which it accepts)")
        if structured == "json_object" and (media == "text" or about_format):
            return (f"model {self.name}: the server rejects json_object response_format ({said}): set "
                    f'structured_output = "none" in {where}')
        if media != "text":
            return (f"model {self.name}: the server rejects requests with media ({media.replace('+', ' video, ')} "
                    f"audio; {said}): check video and audio in {where} (`epic-levels probe {self.name}` says "
                    "which routes it accepts)")
        return (f"model {self.name}: the server rejects its text requests ({said}): check model and endpoint "
                f"in {where} (`epic-levels probe {self.name}`)")

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
            message = self._scrub(f"HTTP {exc.status_code}: {status_message(exc)}")
            if exc.status_code in RETRYABLE_HTTP or exc.status_code >= 500:
                raise RetryableError(message, status=int(exc.status_code)) from None
            raise ValueError(f"listing models at {self.identity.endpoint}: {message}") from None
        except openai.APIConnectionError as exc:
            raise RetryableError(f"{type(exc).__name__}: {exc}", status=0) from None
        return [m.id for m in page.data]

    def without_audio(self, request: CallRequest) -> tuple[dict, str, str | None] | None:
        """``(settings, media path, its sha256)`` of the same request sent without its audio (the route
        ``audio_route = none``), or None when the request sends no audio anyway."""
        if self.route_settings(request.settings)["audio_route"] == "none" or not request.media_path:
            return None
        return {"audio_route": "none"}, request.media_path, request.media_sha256

    async def reachable(self) -> str | None:
        """None when the server answers ``/v1/models`` (and, for a server that serves one model by the name it was
        given, such as vLLM's and SGLang's, lists the model), else why not."""
        try:
            served = await self.served_models()
        except (RetryableError, ValueError) as exc:
            return str(exc)[:300]
        if self.facts.checks_served_model and self.model not in served:
            return (f"the server serves {', '.join(served) or 'no model'}, not {self.model!r} (set model to the "
                    "name given to --served-model-name)")
        return None

    def _scrub(self, text: str) -> str:
        """``text`` with the API key (if a real one) replaced by ``***``."""
        key = self._api_key
        if key and len(key) >= 4 and key != "EMPTY":
            text = text.replace(key, "***")
        return text

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
        media = b""
        extra: dict = {}
        if not text_only:
            if (start is not None and start < 0) or (end is not None and end < 0) or (
                    start is not None and end is not None and end <= start):
                return self._fail(request, f"invalid offsets start={start} end={end}")
            try:
                self._prepare_next(request)
                media, extra, route = (self._media.encoded_if_ready(request, r)
                                       or await asyncio.to_thread(self._media.encoded, request, r))
            except (MediaError, OSError) as exc:
                return self._fail(request, f"media: {exc}", route=self.route_for(request))
        form = str(o.get("structured_output", s.structured_output))
        try:
            response_format, schema = response_format_of(o, form)
        except ValueError as exc:
            return self._fail(request, str(exc), route=route)
        prompt = request.prompt if schema is None or form == "json_schema" else schema_instruction(request.prompt, schema)
        messages: list[dict] = []
        if o.get("system_instruction"):
            messages.append({"role": "system", "content": str(o["system_instruction"])})
        messages.append({"role": "user", "content": [MEDIA_SLOT, {"type": "text", "text": prompt}] if media else prompt})
        body: dict = {"model": self._model(request), "messages": messages,
                      "temperature": o.get("temperature", s.temperature),
                      s.max_tokens_field: o.get("max_output_tokens", s.max_output_tokens)}
        seed = o.get("seed", s.seed)
        if seed is not None:
            body["seed"] = seed
        if response_format is not None:
            body["response_format"] = response_format
        body.update(merge_extra_body(o.get("extra_body", s.extra_body), extra))  # on top, as the SDK's extra_body

        try:
            data = chat_body(body, media)
        except (TypeError, ValueError) as exc:  # a setting that is no JSON value (NaN, a date)
            return self._fail(request, f"request body: {exc}", route=route)

        started = time.monotonic()
        try:
            response = await self._client().post("/chat/completions", cast_to=ChatCompletion, content=data)
        except openai.APIStatusError as exc:
            code = int(exc.status_code)
            said = self._scrub(short_message(status_message(exc), 1000))
            self.rejections.rejected(request, code, said)
            message = f"HTTP {code}: {said}"
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
        self.rejections.accepted(request)
        return self._read(request, response, schema, route, latency, o, form)

    def _read(self, request: CallRequest, response, schema: dict | None, route: str,
              latency: float, o: dict, form: str = "json_schema") -> CallResult:
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
            if form == "none":
                text = json_in_text(text)
            why = check_json_reply(text, schema)
            if why is not None:
                return self._fail(request, why, reply=text, **tokens)
        return CallResult(request.cache_key, text, "ok", **tokens)


def make(model: str, *, base_url: str | None = None, cache: CallCache | None = None,
         provider: str = "vllm", **settings) -> OpenAICompatCaller:
    """A caller for ``provider``/``model`` at ``base_url`` (else the provider's environment variable or default),
    with the provider's default routes (:func:`default_settings`) and ``settings`` overriding them."""
    return _facts(provider).caller_class.for_model(f"{provider}/{model}", base_url, cache, **settings)


def from_spec(spec: "ModelSpec", cache: CallCache | None = None, api_key: str | None = None) -> OpenAICompatCaller:
    """The caller of a models-file entry (:func:`.registry.provider_for`): its endpoint, routes and timeout."""
    identity = ProviderIdentity(spec.provider, spec.model, spec.endpoint)
    return _facts(spec.provider).caller_class(identity, settings_for(spec), cache, api_key, name=spec.name)


class OpenAICompatFacts(registry.ProviderFacts):
    """A service speaking OpenAI's ``/v1/chat/completions``, answered by :class:`OpenAICompatCaller` (or the
    subclass :attr:`caller_class` names): its routes are the models file's ``video`` / ``audio``, it takes
    ``extra_body`` and ``structured_output``, and its media are priced by :mod:`.openai_pricing`."""

    caller_class: type = OpenAICompatCaller
    settings_defaults: dict = {}  # OpenAICompatSettings fields its callers default to

    def caller(self, spec, cache, api_key):
        return from_spec(spec, cache, api_key)

    def make(self, model, *, base_url=None, cache=None):
        return make(model, base_url=base_url, cache=cache, provider=self.name)

    def check_entry(self, entry) -> list[tuple[str, str]]:
        video = entry.video or self.default_routes[0]
        out = []
        if entry.audio == "in_video" and video not in ("video_url", "file_url"):
            out.append(("audio", f"\"in_video\" reads the video's own track, so it needs video = \"video_url\" "
                                 f"or \"file_url\" (not {video!r}); use audio = \"separate\""))
        if video == "none" and (entry.fps is not None or entry.max_frames is not None):
            out.append(("fps" if entry.fps is not None else "max_frames", "does not apply: video = \"none\""))
        if video in ("video_url", "file_url") and entry.max_frames is not None and entry.fps is None:
            out.append(("max_frames", f"with video = {video!r} the server samples the video: set fps too "
                                      "(max_frames then lowers it so at most that many frames cover a window)"))
        return out + super().check_entry(entry)

    def media_rates(self, spec):
        return openai_pricing.media_rates(spec)


class OpenAIFacts(OpenAICompatFacts):
    """OpenAI's API: frames and ``input_audio`` (no video input), ``max_completion_tokens``; its tier-1 limits and
    published prices as assumptions; a local server when its endpoint is a loopback address."""

    name = "openai"
    endpoint_env = "OPENAI_BASE_URL"
    default_endpoint = "https://api.openai.com/v1"
    key_env = ("OPENAI_API_KEY",)
    default_routes = ("frames", "separate")
    settings_defaults = {"video_route": "frames", "audio_route": "input_audio",
                         "max_tokens_field": "max_completion_tokens"}
    hosted_rpm = {"gpt-4o": 500, "gpt-4o-mini": 500, "*": 500}
    prices = openai_pricing.PRICES


class LocalServerFacts(OpenAICompatFacts):
    """A local OpenAI-compatible server (vLLM, SGLang): always local, its endpoint named in the models file, any
    key accepted, ``video_url`` + ``input_audio`` by default, the served model's name checked before a run."""

    needs_key = False
    local = True
    endpoint_required = True
    checks_served_model = True

    def route_notes(self, video, audio):
        hint = "; set audio = \"in_video\" for Omni models"
        return [(key, why + hint if key == "audio" else why) for key, why in super().route_notes(video, audio)]


class VLLMFacts(LocalServerFacts):
    name = "vllm"
    endpoint_env = "VLLM_BASE_URL"
    default_endpoint = "http://localhost:8000/v1"
    key_env = ("VLLM_API_KEY", "OPENAI_API_KEY")


class SGLangFacts(LocalServerFacts):
    name = "sglang"
    endpoint_env = "SGLANG_BASE_URL"
    default_endpoint = "http://localhost:30000/v1"
    key_env = ("SGLANG_API_KEY", "OPENAI_API_KEY")


for _facts_of in (OpenAIFacts(), VLLMFacts(), SGLangFacts()):
    registry.register(_facts_of)
