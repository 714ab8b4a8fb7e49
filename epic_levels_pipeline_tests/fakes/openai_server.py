"""A local stand-in for an OpenAI-compatible server (vLLM, SGLang, OpenAI), for tests and benchmarks.

Listens on 127.0.0.1 at a free port (threaded) and speaks enough of the API for the real ``openai``
SDK pointed at ``server.base_url`` (which ends in ``/v1``):

* ``POST /v1/chat/completions`` — answers ``reply_fn(body)`` as one choice, with ``usage``
  (``prompt_tokens``: words of the text parts + :data:`PART_TOKENS` per media part;
  ``completion_tokens``: words of the reply, at least 1; ``prompt_tokens_details.cached_tokens``:
  ``cached_tokens``). The default reply (:func:`default_reply`) answers JSON that satisfies a
  requested ``json_schema`` (first enum value of each required property), or the schema a prompt
  states (:func:`stated_schema`), else echoes the prompt.
* ``GET /v1/models`` — the ``models`` list.

Faults, drawn from one RNG seeded by ``seed`` (the *sequence* is reproducible; which request gets
which draw depends on arrival order under concurrency): with probability ``fault_rate`` a 429
(with ``Retry-After: retry_after_s`` when that is set) or a 500/503, half each; with probability
``malformed_rate`` a 200 whose body is broken — ``malformed="no_choices"`` (valid JSON without
``choices``) or ``"not_json"`` (a JSON content type over text that does not parse). ``latency_s``
is slept before answering. A body that is not JSON gets 400; an unknown model (when ``models`` is
given and ``strict_models``) gets 404, as vLLM answers.

Keys: when ``api_key`` is set, a request without ``Authorization: Bearer <api_key>`` gets 401. The
key itself is never kept: :attr:`requests` records every request's method, path, headers *without*
``authorization`` and its JSON body (``record=False``: none, for a benchmark's many large bodies);
:meth:`received_key` tells a test whether a key arrived (it
compares sha256 digests of the bearer tokens seen).

Audio, as a server may treat it: by default an ``input_audio`` part counts :data:`PART_TOKENS` and a
video part sent with ``mm_processor_kwargs.use_audio_in_video`` counts :data:`AUDIO_IN_VIDEO_TOKENS` more
(the video's own track, read by an Omni processor). ``drop_audio=True`` is a server that accepts the audio
and ignores it (neither counts: what ``epic-levels probe`` must notice); ``reject_audio=True`` answers 400
to a request with audio, with vLLM's kind of message.

Refusals as llama.cpp's server (``llama-cpp-python[server]``) answers them, with its messages
(:data:`LLAMA_CPP_LIST_CONTENT`, :data:`LLAMA_CPP_RESPONSE_FORMAT`): ``string_content_only=True`` answers
500 to a message whose content is a list of parts (its chat template joins strings);
``response_formats=("text", "json_object")`` answers 500 to any other ``response_format`` type.

Counters (attributes, updated under a lock): ``chat_calls`` (every chat request received),
``chat_ok``, ``faults``, ``malformed``, ``rejected`` (4xx answers, refusals), ``model_lists``; ``in_flight`` (chat
requests being answered now) and ``max_in_flight`` (the most at once, measured by the server).
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
import uuid
from typing import Callable

from .local_server import JsonHandler, LocalServer, QuietServer

PART_TOKENS = {"image_url": 85, "video_url": 1000, "input_audio": 200}
AUDIO_IN_VIDEO_TOKENS = 200
# llama.cpp's server (llama-cpp-python 0.3.x) on SmolLM2-135M-Instruct, as it answered (HTTP 500 each)
LLAMA_CPP_LIST_CONTENT = 'can only concatenate str (not "list") to str'
LLAMA_CPP_RESPONSE_FORMAT = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input "
    "should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}"
    "\n\n  File \"/site-packages/llama_cpp/server/app.py\", line 376, in create_chat_completion\n"
    "    POST /v1/chat/completions")
SCHEMA_STATED = "matching this JSON schema: "


def message_parts(body: dict) -> list[dict]:
    """Every content part of a chat request, in order; a string content counts as one text part."""
    parts: list[dict] = []
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            parts.append({"type": "text", "text": content})
        elif isinstance(content, list):
            parts.extend(p for p in content if isinstance(p, dict))
    return parts


def request_text(body: dict) -> str:
    """The text parts of a chat request's user messages, joined by newlines."""
    texts = []
    for message in body.get("messages") or []:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [p["text"] for p in content if isinstance(p, dict) and p.get("type") == "text"]
    return "\n".join(texts)


def prompt_text(body: dict) -> str:
    """The last text part of the last user message: the prompt, after any media and frame labels."""
    for message in reversed(body.get("messages") or []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        texts = [p["text"] for p in content or [] if isinstance(p, dict) and p.get("type") == "text"]
        if texts:
            return texts[-1]
    return ""


def _satisfy(schema: dict):
    """A small value that satisfies a JSON schema's types, required keys and enums."""
    if not isinstance(schema, dict):
        return None
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "")).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        keys = schema.get("required") or list(props)
        return {k: _satisfy(props.get(k, {})) for k in keys}
    if kind == "array":
        return []
    return {"string": "x", "integer": 0, "number": 0, "boolean": False}.get(kind)


def stated_schema(body: dict) -> dict | None:
    """The JSON schema the prompt states after ``matching this JSON schema: `` (the ``json_object`` and
    ``none`` structured-output forms), or None."""
    text = prompt_text(body)
    at = text.rfind(SCHEMA_STATED)
    if at < 0:
        return None
    try:
        return json.JSONDecoder().raw_decode(text[at + len(SCHEMA_STATED):])[0]
    except json.JSONDecodeError:
        return None


def default_reply(body: dict) -> str:
    """JSON satisfying the requested ``json_schema``, or the schema the prompt states
    (:func:`stated_schema`), else ``{}`` for ``json_object``, else ``echo: `` + the first 60 characters
    of the prompt (:func:`prompt_text`)."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return json.dumps(_satisfy((fmt.get("json_schema") or {}).get("schema") or {}))
    stated = stated_schema(body)
    if stated is not None:
        return json.dumps(_satisfy(stated))
    if fmt.get("type") == "json_object":
        return "{}"
    return "echo: " + prompt_text(body)[:60]


class _Server(QuietServer):
    owner: "OpenAITestServer"


class _Handler(JsonHandler):
    server: _Server

    def _send(self, code: int, payload, headers: dict | None = None, raw: bytes | None = None) -> None:
        self._write(code, raw if raw is not None else json.dumps(payload).encode(), headers)

    def _error(self, code: int, message: str, kind: str, headers: dict | None = None) -> None:
        self._send(code, {"error": {"message": message, "type": kind, "code": code}}, headers)

    def _dispatch(self, method: str) -> None:
        raw = self._body()
        try:
            self.server.owner._route(self, method, self.path.split("?", 1)[0], raw)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


class OpenAITestServer(LocalServer):
    """See the module docstring. Start with :meth:`start` or ``with OpenAITestServer(...) as s:``."""

    thread_name = "openai-test-server"
    server_class = _Server
    handler = _Handler

    def __init__(
        self,
        reply_fn: Callable[[dict], str] | None = None,
        *,
        models: tuple[str, ...] = ("test-model",),
        strict_models: bool = False,
        api_key: str | None = None,
        latency_s: float = 0.0,
        fault_rate: float = 0.0,
        malformed_rate: float = 0.0,
        malformed: str = "no_choices",
        retry_after_s: float | None = 0.1,
        cached_tokens: int = 0,
        seed: int = 0,
        drop_audio: bool = False,
        reject_audio: bool = False,
        string_content_only: bool = False,
        response_formats: tuple[str, ...] | None = None,
        record: bool = True,
    ):
        if malformed not in ("no_choices", "not_json"):
            raise ValueError(f"malformed must be no_choices or not_json, not {malformed!r}")
        self.reply_fn = reply_fn or default_reply
        self.models = tuple(models)
        self.strict_models = strict_models
        self._key_digest = hashlib.sha256(api_key.encode()).hexdigest() if api_key else None
        self.latency_s = latency_s
        self.fault_rate = fault_rate
        self.malformed_rate = malformed_rate
        self.malformed_kind = malformed
        self.retry_after_s = retry_after_s
        self.cached_tokens = cached_tokens
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._tokens_seen: set[str] = set()
        self.requests: list[dict] = []
        self.chat_calls = 0
        self.chat_ok = 0
        self.faults = 0
        self.malformed = 0
        self.rejected = 0
        self.model_lists = 0
        self.drop_audio = drop_audio
        self.reject_audio = reject_audio
        self.string_content_only = string_content_only
        self.response_formats = response_formats
        self.record = record
        self.in_flight = 0
        self.max_in_flight = 0

    # -- lifecycle (start, stop, port: LocalServer) -----------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- test views -------------------------------------------------------------------------------

    def received_key(self, key: str) -> bool:
        """Whether some request carried ``Authorization: Bearer <key>``."""
        with self._lock:
            return hashlib.sha256(key.encode()).hexdigest() in self._tokens_seen

    def chat_bodies(self) -> list[dict]:
        """The JSON bodies of every chat request received, in arrival order."""
        with self._lock:
            return [r["body"] for r in self.requests if r["path"].endswith("/chat/completions")]

    # -- routing ----------------------------------------------------------------------------------

    def _route(self, h: _Handler, method: str, path: str, raw: bytes) -> None:
        auth = h.headers.get("Authorization") or ""
        token = auth[7:] if auth.lower().startswith("bearer ") else ""
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = {"_unparsed_bytes": len(raw)}
        with self._lock:
            if token:
                self._tokens_seen.add(hashlib.sha256(token.encode()).hexdigest())
            if self.record:
                self.requests.append({"method": method, "path": path, "body": body, "headers": {
                    k.lower(): v for k, v in h.headers.items() if k.lower() != "authorization"}})
        if self._key_digest is not None and \
                hashlib.sha256(token.encode()).hexdigest() != self._key_digest:
            with self._lock:
                self.rejected += 1
            return h._error(401, "Unauthorized", "authentication_error")
        if method == "GET" and path == "/v1/models":
            with self._lock:
                self.model_lists += 1
            return h._send(200, {"object": "list", "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": "epic-levels-test"}
                for m in self.models]})
        if method == "POST" and path == "/v1/chat/completions":
            return self._chat(h, body)
        h._error(404, f"no route for {method} {path}", "not_found_error")

    def _chat(self, h: _Handler, body) -> None:
        with self._lock:
            self.chat_calls += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            self._answer_chat(h, body)
        finally:
            with self._lock:
                self.in_flight -= 1

    def prompt_tokens(self, body: dict) -> int:
        """Words of the text parts + :data:`PART_TOKENS` per media part, + the video's own track under
        ``use_audio_in_video`` (audio counted only when the server does not drop it)."""
        parts = message_parts(body)
        total = 0
        for p in parts:
            kind = p.get("type")
            if kind == "text":
                total += len(p.get("text", "").split())
            elif kind == "input_audio" and self.drop_audio:
                continue
            else:
                total += PART_TOKENS.get(kind, 0)
        in_video = (body.get("mm_processor_kwargs") or {}).get("use_audio_in_video")
        if in_video and not self.drop_audio and any(p.get("type") == "video_url" for p in parts):
            total += AUDIO_IN_VIDEO_TOKENS
        return total

    def _llama_cpp_refusal(self, body: dict) -> str | None:
        """llama.cpp's message for a request it refuses (see the module docstring), or None."""
        kind = (body.get("response_format") or {}).get("type")
        if self.response_formats is not None and kind is not None and kind not in self.response_formats:
            return LLAMA_CPP_RESPONSE_FORMAT
        if self.string_content_only and any(isinstance(m.get("content"), list) for m in body.get("messages") or []):
            return LLAMA_CPP_LIST_CONTENT
        return None

    def _answer_chat(self, h: _Handler, body) -> None:
        if not isinstance(body, dict) or "_unparsed_bytes" in body:
            with self._lock:
                self.rejected += 1
            return h._error(400, "request body is not a JSON object", "invalid_request_error")
        model = body.get("model")
        if self.strict_models and model not in self.models:
            with self._lock:
                self.rejected += 1
            return h._error(404, f"The model `{model}` does not exist.", "NotFoundError")
        refusal = self._llama_cpp_refusal(body)
        if refusal:
            with self._lock:
                self.rejected += 1
            return h._error(500, refusal, "server_error")
        if self.reject_audio and (any(p.get("type") == "input_audio" for p in message_parts(body)) or
                                  (body.get("mm_processor_kwargs") or {}).get("use_audio_in_video")):
            with self._lock:
                self.rejected += 1
            return h._error(400, "At most 0 audio(s) may be provided in one prompt.", "BadRequestError")
        if self.latency_s:
            time.sleep(self.latency_s)
        with self._lock:
            draw, kind_draw = self._rng.random(), self._rng.random()
            fault = draw < self.fault_rate
            malformed = not fault and draw < self.fault_rate + self.malformed_rate
            if fault:
                self.faults += 1
            if malformed:
                self.malformed += 1
        if fault:
            if kind_draw < 0.5:
                headers = {"Retry-After": f"{self.retry_after_s:g}"} if self.retry_after_s else {}
                return h._error(429, "Too many requests", "rate_limit_error", headers)
            code = 500 if kind_draw < 0.75 else 503
            return h._error(code, "Internal server error", "server_error")
        if malformed:
            if self.malformed_kind == "not_json":
                return h._send(200, None, raw=b'{"id": "chatcmpl-broken", "choices": [')
            return h._send(200, {"id": "chatcmpl-" + uuid.uuid4().hex[:12],
                                 "object": "chat.completion", "created": int(time.time()),
                                 "model": model})
        try:
            text = self.reply_fn(body)
        except Exception as exc:  # noqa: BLE001 - a broken reply_fn is reported as a 500
            with self._lock:
                self.faults += 1
            return h._error(500, f"reply_fn failed: {exc}", "server_error")
        prompt_tokens = self.prompt_tokens(body)
        out_tokens = max(1, len(text.split()))
        h._send(200, {
            "id": "chatcmpl-" + uuid.uuid4().hex[:12],
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": out_tokens,
                      "total_tokens": prompt_tokens + out_tokens,
                      "prompt_tokens_details": {"cached_tokens": min(self.cached_tokens,
                                                                     prompt_tokens)}},
        })
        with self._lock:
            self.chat_ok += 1
