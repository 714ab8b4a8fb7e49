"""A local stand-in for the Gemini REST API (v1beta), for tests and benchmarks.

Listens on 127.0.0.1 at a free port and speaks enough of the API for the real ``google-genai`` SDK
pointed at it through ``HttpOptions(base_url=server.base_url)``:

* ``GET /{v1beta|v1}/models/{model}`` — the model (any name; what a pre-flight check asks).
* ``POST /{v1beta|v1}/models/{model}:generateContent`` — answers ``reply_fn(request_json)`` with usage
  metadata (``promptTokenCount``: words of the text parts + 258 per file part; ``candidatesTokenCount``:
  words of the reply, at least 1). Injected faults: with probability ``fault_rate`` a 429 (carrying
  ``Retry-After`` and a ``google.rpc.RetryInfo`` detail when ``retry_after_s`` is set) or a 500, half
  each; with probability ``malformed_rate`` a 200 whose body has no candidates. A request whose
  ``fileData.fileUri`` names an unknown or not-yet-ACTIVE file gets 400 ``FAILED_PRECONDITION``, as
  the real service does. Draws come from one RNG seeded by ``seed`` (the *sequence* is reproducible;
  which request gets which draw depends on arrival order under concurrency).
* ``POST /upload/{v}/files`` with ``X-Goog-Upload-Protocol: resumable`` and command ``start`` — opens
  an upload session and returns its URL in ``X-Goog-Upload-URL``. ``POST`` to that URL with command
  ``upload`` (more chunks follow: status ``active``) or ``upload, finalize`` (status ``final``, body
  ``{"file": {...}}``) stores the bytes and creates the file resource in state PROCESSING.
* ``GET /{v}/files/{id}`` — the file resource; PROCESSING for the first ``processing_polls`` gets of
  that file, then ACTIVE (or FAILED with an error message when ``fail_files`` is set). With
  ``processing_polls=0`` a file is ACTIVE as soon as it is uploaded (unless ``fail_files``). Unknown
  id: 403 ``PERMISSION_DENIED`` ("... or it may not exist"), as the real service answers.
* ``DELETE /{v}/files/{id}`` — forgets the file (also :meth:`GeminiTestServer.expire_files`, to mimic
  the provider's 48-hour expiry).

* ``POST /{v}/cachedContents`` — creates a cached content (``model``, ``contents``,
  ``systemInstruction``, ``ttl`` or ``expireTime``); its token count is counted as for a prompt, and
  below ``min_cache_tokens`` the answer is 400 ``INVALID_ARGUMENT`` "Cached content is too small", as
  the real service says. ``GET``/``DELETE /{v}/cachedContents/{id}``; an expired or deleted cache is
  403 ``PERMISSION_DENIED``. A generate request naming ``cachedContent`` is answered as if the cache's
  contents came first; ``promptTokenCount`` includes them and ``cachedContentTokenCount`` says how
  many. :meth:`GeminiTestServer.expire_caches` ends every cache at once (a TTL passing mid-run).
* ``POST /{v}/models/{model}:batchGenerateContent`` — a batch job from inlined requests
  (``batch.inputConfig.requests.requests``) or a JSONL file (``batch.inputConfig.fileName``, lines
  ``{"key": ..., "request": {...}}``). ``GET /{v}/batches/{id}`` walks BATCH_STATE_PENDING (the first
  ``batch_pending_polls`` gets) → RUNNING (the next ``batch_running_polls``, or for as long as
  :meth:`hold_batches` holds) → SUCCEEDED, each item answered then, exactly once, like a generate
  request: inlined responses in order with their metadata, or a responses file
  (``GET /{v}/files/{id}:download?alt=media``) of ``{"key", "response" | "error"}`` lines. An item whose
  prompt text contains ``batch_error_marker`` gets a per-item error instead.
* The media token count: ``file_part_tokens`` (default ``FILE_PART_TOKENS``) per file part, or, with
  ``media_tokens_per_s`` set, that many per second of the part's ``videoMetadata`` window; plus
  ``audio_part_tokens`` (default 0) for a file whose bytes hold an AAC track (an ``mp4a`` sample entry),
  unless ``drop_audio`` (a server that takes the audio and ignores it). ``in_flight`` / ``max_in_flight``
  count generate requests being answered at once.

Every request must carry an ``x-goog-api-key`` header (any value), else 403 — except the upload
session URL, which (as with the real service) is its own authorisation.

Holding (to kill a client deterministically mid-run): after :meth:`hold_after` (n), the generate
requests that arrive once ``n`` have been answered ``ok`` wait inside the server; :meth:`release`
lets them proceed, or with ``drop=True`` closes their connections without an answer (they are then
neither ``generate_ok`` nor faults). So a test can kill a client while requests are in flight and
still know exactly which requests were answered.

Counters (read them as attributes; updated under a lock): ``generate_calls`` (every generate request
received), ``generate_ok``, ``faults``, ``malformed``, ``rejected`` (4xx answers to generate),
``dropped``, ``held``, ``upload_starts``, ``uploads`` (finalised uploads), ``file_gets``. Bodies of
all generate requests are kept in ``generate_requests`` (list of dicts, arrival order).
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from typing import Callable

from .local_server import JsonHandler, LocalServer, QuietServer

FILE_PART_TOKENS = 258

_GENERATE = re.compile(r"^/(v1beta|v1)/models/([^/:]+):generateContent$")
_MODEL = re.compile(r"^/(v1beta|v1)/models/([^/:]+)$")
_UPLOAD_START = re.compile(r"^/upload/(v1beta|v1)/files$")
_UPLOAD_SESSION = re.compile(r"^/upload-session/([0-9a-f]+)$")
_FILE = re.compile(r"^/(v1beta|v1)/files/([A-Za-z0-9_-]+)$")
_DOWNLOAD = re.compile(r"^/(v1beta|v1)/files/([A-Za-z0-9_-]+):download$")
_CACHES = re.compile(r"^/(v1beta|v1)/cachedContents$")
_CACHE = re.compile(r"^/(v1beta|v1)/cachedContents/([A-Za-z0-9_-]+)$")
_BATCH_CREATE = re.compile(r"^/(v1beta|v1)/models/([^/:]+):batchGenerateContent$")
_BATCH = re.compile(r"^/(v1beta|v1)/batches/([A-Za-z0-9_-]+)$")


def _seconds(text) -> float:
    """A protobuf Duration (``"12.5s"``) as seconds; 0 when absent."""
    return float(str(text).rstrip("s")) if text else 0.0


def _parts(body: dict) -> list[dict]:
    return [p for c in body.get("contents") or [] for p in c.get("parts") or []]


def request_text(body: dict) -> str:
    """All text parts of a generate request's contents, joined by newlines."""
    texts = []
    for content in body.get("contents") or []:
        for part in content.get("parts") or []:
            if isinstance(part.get("text"), str):
                texts.append(part["text"])
    return "\n".join(texts)


def request_file_uris(body: dict) -> list[str]:
    """The ``fileData.fileUri`` values of a generate request, in order.

    Field names are accepted in both spellings, as protobuf JSON parsing does: the SDK sends nested
    objects it passes through untouched in snake case (``fileData: {"file_uri": ...}``).
    """
    uris = []
    for content in body.get("contents") or []:
        for part in content.get("parts") or []:
            fd = part.get("fileData") or part.get("file_data") or {}
            uri = fd.get("fileUri") or fd.get("file_uri")
            if uri:
                uris.append(uri)
    return uris


def default_reply(body: dict) -> str:
    """Deterministic echo: ``echo: `` + the first 60 characters of the prompt text."""
    return "echo: " + request_text(body)[:60]


def _stamp(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _err(code: int, status: str, message: str) -> dict:
    return {"error": {"code": code, "message": message, "status": status}}


class _Server(QuietServer):
    owner: "GeminiTestServer"


class _Dropped(Exception):
    """Raised inside a handler to close the connection without an answer."""


class _Handler(JsonHandler):
    server: _Server
    content_type = "application/json; charset=UTF-8"

    def _send(self, code: int, payload: dict | None, headers: dict | None = None) -> None:
        self._write(code, json.dumps(payload).encode() if payload is not None else b"", headers)

    def _error(self, code: int, status: str, message: str, headers: dict | None = None,
               details: list | None = None) -> None:
        err = {"code": code, "message": message, "status": status}
        if details:
            err["details"] = details
        self._send(code, {"error": err}, headers)

    def _dispatch(self, method: str) -> None:
        owner = self.server.owner
        path = self.path.split("?", 1)[0]
        body = self._body()
        try:
            # The upload-session URL authorises by itself (the SDK sends no key there).
            if not self.headers.get("x-goog-api-key") and not path.startswith("/upload-session/"):
                self._error(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers.")
                return
            owner._route(self, method, path, body)
        except _Dropped:
            self.close_connection = True
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


class GeminiTestServer(LocalServer):
    """See the module docstring. Start with :meth:`start` or ``with GeminiTestServer(...) as s:``."""

    thread_name = "gemini-test-server"
    server_class = _Server
    handler = _Handler

    def __init__(
        self,
        reply_fn: Callable[[dict], str] | None = None,
        *,
        latency_s: float = 0.0,
        fault_rate: float = 0.0,
        malformed_rate: float = 0.0,
        retry_after_s: float | None = 0.1,
        processing_polls: int = 1,
        fail_files: bool = False,
        seed: int = 0,
        min_cache_tokens: int = 1024,
        media_tokens_per_s: float | None = None,
        file_part_tokens: int = FILE_PART_TOKENS,
        batch_pending_polls: int = 1,
        batch_running_polls: int = 1,
        batch_error_marker: str = "BATCH-ITEM-FAILS",
        audio_part_tokens: int = 0,
        drop_audio: bool = False,
    ):
        self.reply_fn = reply_fn or default_reply
        self.latency_s = latency_s
        self.fault_rate = fault_rate
        self.malformed_rate = malformed_rate
        self.retry_after_s = retry_after_s
        self.processing_polls = processing_polls
        self.fail_files = fail_files
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._sessions: dict[str, dict] = {}
        self.files: dict[str, dict] = {}  # id -> {"resource": ..., "data": bytes, "gets": int}
        self.generate_requests: list[dict] = []
        self.generate_calls = 0
        self.generate_ok = 0
        self.faults = 0
        self.malformed = 0
        self.rejected = 0
        self.dropped = 0
        self.held = 0
        self.upload_starts = 0
        self.uploads = 0
        self.file_gets = 0
        self.min_cache_tokens = min_cache_tokens
        self.media_tokens_per_s = media_tokens_per_s
        self.file_part_tokens = file_part_tokens
        self.audio_part_tokens = audio_part_tokens
        self.drop_audio = drop_audio
        self.in_flight = 0
        self.max_in_flight = 0
        self.batch_pending_polls = batch_pending_polls
        self.batch_running_polls = batch_running_polls
        self.batch_error_marker = batch_error_marker
        self.caches: dict[str, dict] = {}  # id -> {"resource": ..., "body": ..., "tokens": int}
        self.cache_creates = 0
        self.cache_gets = 0
        self.cache_deletes = 0
        self.cached_generates = 0  # generate requests answered from a cached content
        self.batches: dict[str, dict] = {}  # id -> {"resource", "items", "gets", "from_file"}
        self.batch_creates = 0
        self.batch_gets = 0
        self.batch_items = 0  # batch items answered (each once, when its job succeeds)
        self.downloads = 0
        self._batches_held = False
        self._hold_after: int | None = None
        self._release = threading.Event()
        self._drop_held = False

    # -- lifecycle (start, stop, port: LocalServer) -----------------------------------------------

    def _before_stop(self) -> None:
        self.release(drop=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- test controls ----------------------------------------------------------------------------

    def hold_after(self, n_ok: int) -> None:
        """Hold every generate request that arrives once ``n_ok`` requests have been answered ok."""
        with self._lock:
            self._hold_after = n_ok
            self._drop_held = False
            self._release.clear()

    def release(self, *, drop: bool = False) -> None:
        """Stop holding; held requests proceed normally, or are dropped unanswered (``drop``)."""
        with self._lock:
            self._hold_after = None
            self._drop_held = drop
            self._release.set()

    def expire_files(self) -> None:
        """Forget every uploaded file (the provider's files expire after 48 hours)."""
        with self._lock:
            self.files.clear()

    def expire_caches(self) -> None:
        """End every cached content now (as its TTL passing would)."""
        with self._lock:
            self.caches.clear()

    def hold_batches(self) -> None:
        """Keep every batch job RUNNING (once past PENDING) until :meth:`release_batches`."""
        with self._lock:
            self._batches_held = True

    def release_batches(self) -> None:
        with self._lock:
            self._batches_held = False

    def prompts(self) -> list[str]:
        """The text of every generate request received, in arrival order."""
        with self._lock:
            return [request_text(b) for b in self.generate_requests]

    def named_files(self, body: dict) -> list[str]:
        """The display names of the uploaded files a generate request names (by name or by full uri)."""
        with self._lock:
            names = {}
            for entry in self.files.values():
                resource = entry["resource"]
                names[resource["name"]] = names[resource["uri"]] = resource["displayName"]
        return [names.get(uri, "") for uri in request_file_uris(body)]

    # -- routing ----------------------------------------------------------------------------------

    def _route(self, h: _Handler, method: str, path: str, body: bytes) -> None:
        if method == "POST" and (m := _GENERATE.match(path)):
            return self._generate(h, m.group(2), body)
        if method == "GET" and (m := _MODEL.match(path)):
            return h._send(200, {"name": f"models/{m.group(2)}", "displayName": m.group(2),
                                 "supportedGenerationMethods": ["generateContent"]})
        if method == "POST" and _UPLOAD_START.match(path):
            return self._upload_start(h, body)
        if method == "POST" and (m := _UPLOAD_SESSION.match(path)):
            return self._upload_chunk(h, m.group(1), body)
        if method == "POST" and (m := _BATCH_CREATE.match(path)):
            return self._batch_create(h, m.group(2), body)
        if method == "GET" and (m := _BATCH.match(path)):
            return self._batch_get(h, m.group(2))
        if method == "POST" and _CACHES.match(path):
            return self._cache_create(h, body)
        if method in ("GET", "DELETE") and (m := _CACHE.match(path)):
            return self._cache_get(h, m.group(2), delete=method == "DELETE")
        if method == "GET" and (m := _DOWNLOAD.match(path)):
            return self._download(h, m.group(2))
        if method == "GET" and (m := _FILE.match(path)):
            return self._file_get(h, m.group(2))
        if method == "DELETE" and (m := _FILE.match(path)):
            with self._lock:
                self.files.pop(m.group(2), None)
            return h._send(200, {})
        h._error(404, "NOT_FOUND", f"no route for {method} {path}")

    def _generate(self, h: _Handler, model: str, raw: bytes) -> None:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            self._generate_one(h, model, raw)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _generate_one(self, h: _Handler, model: str, raw: bytes) -> None:
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            with self._lock:
                self.generate_calls += 1
                self.rejected += 1
            return h._error(400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
        with self._lock:
            self.generate_calls += 1
            self.generate_requests.append(body)
            hold = self._hold_after is not None and self.generate_ok >= self._hold_after
            if hold:
                self.held += 1
        if hold:
            self._release.wait()
            with self._lock:
                drop = self._drop_held
                if drop:
                    self.dropped += 1
            if drop:
                raise _Dropped()
        if self.latency_s:
            time.sleep(self.latency_s)

        with self._lock:
            draw = self._rng.random()
            kind_draw = self._rng.random()
            fault = draw < self.fault_rate
            malformed = not fault and draw < self.fault_rate + self.malformed_rate
            if fault:
                self.faults += 1
        if fault:
            if kind_draw < 0.5:
                headers, details = {}, None
                if self.retry_after_s is not None:
                    headers["Retry-After"] = f"{self.retry_after_s:g}"
                    details = [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                "retryDelay": f"{self.retry_after_s:g}s"}]
                return h._error(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted "
                                "(e.g. check quota).", headers, details)
            return h._error(500, "INTERNAL", "An internal error has occurred.")

        code, payload = self._answer(model, body, malformed=malformed)
        if code != 200:
            err = payload["error"]
            return h._error(code, err["status"], err["message"])
        h._send(200, payload)
        with self._lock:
            if "candidates" in payload:
                self.generate_ok += 1

    # -- answering (generate requests and batch items) ---------------------------------------------

    def _media_tokens(self, parts: list[dict]) -> int:
        total = 0
        for part in parts:
            if not (part.get("fileData") or part.get("file_data")):
                continue
            meta = part.get("videoMetadata") or part.get("video_metadata") or {}
            start = _seconds(meta.get("startOffset") or meta.get("start_offset"))
            end = meta.get("endOffset") or meta.get("end_offset")
            if self.media_tokens_per_s is not None and end:
                total += round((_seconds(end) - start) * self.media_tokens_per_s)
            else:
                total += self.file_part_tokens
            if self.audio_part_tokens and not self.drop_audio:
                data = part.get("fileData") or part.get("file_data") or {}
                fid = str(data.get("fileUri") or data.get("file_uri") or "").rstrip("/").rsplit("/", 1)[-1]
                with self._lock:
                    entry = self.files.get(fid)
                if entry is not None and b"mp4a" in (entry.get("data") or b""):
                    total += self.audio_part_tokens
        return total

    def _missing_file(self, parts: list[dict]) -> tuple[int, dict] | None:
        """The 400 answer for a referenced file that is unknown or not ACTIVE, else None."""
        for uri in request_file_uris({"contents": [{"parts": parts}]}):
            fid = uri.rstrip("/").rsplit("/", 1)[-1]
            with self._lock:
                entry = self.files.get(fid)
                state = entry["resource"]["state"] if entry else None
            if state != "ACTIVE":
                with self._lock:
                    self.rejected += 1
                what = "does not exist" if state is None else f"is in state {state}"
                return 400, _err(400, "FAILED_PRECONDITION",
                                 f"The File {fid} is not in an ACTIVE state ({what}) and usage "
                                 "is not allowed.")
        return None

    def _answer(self, model: str, body: dict, *, malformed: bool = False) -> tuple[int, dict]:
        """(HTTP status, body) for one generate request: a cached content named by
        ``cachedContent`` comes first, referenced files must be ACTIVE."""
        cached_tokens, cached_body = 0, None
        name = body.get("cachedContent") or body.get("cached_content")
        if name:
            cid = str(name).rsplit("/", 1)[-1]
            with self._lock:
                entry = self._live_cache(cid)
                if entry is not None:
                    cached_tokens, cached_body = entry["tokens"], entry["body"]
            if cached_body is None:
                with self._lock:
                    self.rejected += 1
                return 403, _err(403, "PERMISSION_DENIED",
                                 f"CachedContent not found (or permission denied): {name}")
        own_parts = _parts(body)
        missing = self._missing_file(own_parts + (_parts(cached_body) if cached_body else []))
        if missing is not None:
            return missing
        prompt_tokens = cached_tokens + len(request_text(body).split()) + self._media_tokens(own_parts)
        usage = {"promptTokenCount": prompt_tokens, "totalTokenCount": prompt_tokens}
        if cached_tokens:
            usage["cachedContentTokenCount"] = cached_tokens
        if malformed:
            with self._lock:
                self.malformed += 1
            return 200, {"usageMetadata": usage, "modelVersion": model}
        seen = dict(body)
        if cached_body is not None:  # the reply function sees the whole context, cache first
            seen["contents"] = list(cached_body.get("contents") or []) + list(body.get("contents") or [])
        try:
            text = self.reply_fn(seen)
        except Exception as exc:  # noqa: BLE001 - a broken reply_fn is reported as a 500
            with self._lock:
                self.faults += 1
            return 500, _err(500, "INTERNAL", f"reply_fn failed: {exc}")
        out_tokens = max(1, len(text.split()))
        if cached_tokens:
            with self._lock:
                self.cached_generates += 1
        usage.update(candidatesTokenCount=out_tokens, totalTokenCount=prompt_tokens + out_tokens)
        return 200, {
            "candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": usage,
            "modelVersion": model,
            "responseId": uuid.uuid4().hex[:16],
        }

    # -- cached contents ----------------------------------------------------------------------------

    def _live_cache(self, cid: str) -> dict | None:
        """The cache entry if it exists and has not expired (call under the lock)."""
        entry = self.caches.get(cid)
        if entry is None:
            return None
        if entry["expires"] <= datetime.now(timezone.utc):
            self.caches.pop(cid, None)
            return None
        return entry

    def _cache_create(self, h: _Handler, raw: bytes) -> None:
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return h._error(400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
        parts = _parts(body)
        system = body.get("systemInstruction") or {}
        tokens = (len(request_text(body).split()) + self._media_tokens(parts)
                  + len(request_text({"contents": [system]}).split()))
        with self._lock:
            self.cache_creates += 1
        if tokens < self.min_cache_tokens:
            return h._error(400, "INVALID_ARGUMENT", "Cached content is too small. "
                            f"total_token_count={tokens}, min_total_token_count={self.min_cache_tokens}")
        missing = self._missing_file(parts)
        if missing is not None:
            err = missing[1]["error"]
            return h._error(missing[0], err["status"], err["message"])
        now = datetime.now(timezone.utc)
        if body.get("expireTime"):
            expires = datetime.fromisoformat(str(body["expireTime"]).replace("Z", "+00:00"))
        else:
            expires = now + timedelta(seconds=_seconds(body.get("ttl")) or 3600)
        cid = uuid.uuid4().hex[:12]
        resource = {"name": f"cachedContents/{cid}", "model": body.get("model", ""),
                    "displayName": body.get("displayName", ""), "createTime": _stamp(now),
                    "updateTime": _stamp(now), "expireTime": _stamp(expires),
                    "usageMetadata": {"totalTokenCount": tokens}}
        with self._lock:
            self.caches[cid] = {"resource": resource, "body": body, "tokens": tokens,
                                "expires": expires}
        h._send(200, resource)

    def _cache_get(self, h: _Handler, cid: str, *, delete: bool) -> None:
        with self._lock:
            if delete:
                self.cache_deletes += 1
            else:
                self.cache_gets += 1
            entry = self._live_cache(cid)
            if entry is not None and delete:
                self.caches.pop(cid, None)
        if entry is None:
            return h._error(403, "PERMISSION_DENIED",
                            f"CachedContent not found (or permission denied): cachedContents/{cid}")
        h._send(200, {} if delete else entry["resource"])

    # -- batch jobs -----------------------------------------------------------------------------------

    def _batch_create(self, h: _Handler, model: str, raw: bytes) -> None:
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return h._error(400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
        batch = body.get("batch") or {}
        source = batch.get("inputConfig") or {}
        if source.get("fileName"):
            fid = str(source["fileName"]).rsplit("/", 1)[-1]
            with self._lock:
                entry = self.files.get(fid)
            if entry is None:
                return h._error(400, "INVALID_ARGUMENT", f"input file {source['fileName']} not found")
            try:
                lines = [json.loads(line) for line in entry["data"].decode().splitlines() if line.strip()]
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                return h._error(400, "INVALID_ARGUMENT", f"input file is not JSONL: {exc}")
            items = [{"request": line.get("request") or {}, "key": line.get("key")} for line in lines]
        else:
            items = [{"request": r.get("request") or {}, "metadata": r.get("metadata")}
                     for r in (source.get("requests") or {}).get("requests") or []]
        if not items:
            return h._error(400, "INVALID_ARGUMENT", "batch has no requests")
        bid = uuid.uuid4().hex[:12]
        now = _stamp(datetime.now(timezone.utc))
        resource = {"name": f"batches/{bid}",
                    "metadata": {"@type": "type.googleapis.com/google.ai.generativelanguage.v1main."
                                          "GenerateContentBatch",
                                 "model": f"models/{model}", "displayName": batch.get("displayName", ""),
                                 "createTime": now, "updateTime": now, "state": "BATCH_STATE_PENDING",
                                 "batchStats": {"requestCount": str(len(items))}}}
        with self._lock:
            self.batch_creates += 1
            self.batches[bid] = {"resource": resource, "items": items, "gets": 0, "model": model,
                                 "from_file": bool(source.get("fileName"))}
        h._send(200, resource)

    def _batch_get(self, h: _Handler, bid: str) -> None:
        with self._lock:
            self.batch_gets += 1
            job = self.batches.get(bid)
            if job is not None:
                job["gets"] += 1
                meta = job["resource"]["metadata"]
                state = meta["state"]
                if state == "BATCH_STATE_PENDING" and job["gets"] > self.batch_pending_polls:
                    state = "BATCH_STATE_RUNNING"
                run_gets = job["gets"] - self.batch_pending_polls
                finish = (state == "BATCH_STATE_RUNNING" and not self._batches_held
                          and run_gets > self.batch_running_polls)
                meta["state"] = state
                meta["updateTime"] = _stamp(datetime.now(timezone.utc))
        if job is None:
            return h._error(404, "NOT_FOUND", f"batch batches/{bid} not found")
        if finish:
            self._finish_batch(job)
        with self._lock:
            resource = json.loads(json.dumps(job["resource"]))
        h._send(200, resource)

    def _finish_batch(self, job: dict) -> None:
        """Answer every item of a job (once) and attach the output."""
        outputs = []
        for item in job["items"]:
            request = item["request"]
            if self.batch_error_marker and self.batch_error_marker in request_text(request):
                code, payload = 400, _err(400, "INVALID_ARGUMENT", "request refused (per-item error)")
            else:
                code, payload = self._answer(job["model"], request)
            out = {"response": payload} if code == 200 else {"error": payload["error"]}
            if job["from_file"]:
                out["key"] = item.get("key")
            elif item.get("metadata") is not None:
                out["metadata"] = item["metadata"]
            outputs.append(out)
        with self._lock:
            self.batch_items += len(outputs)
            meta = job["resource"]["metadata"]
            done = sum(1 for o in outputs if "response" in o)
            meta["batchStats"].update(successfulRequestCount=str(done),
                                      failedRequestCount=str(len(outputs) - done))
            if job["from_file"]:
                fid = uuid.uuid4().hex[:12]
                data = "".join(json.dumps(o) + "\n" for o in outputs).encode()
                now = _stamp(datetime.now(timezone.utc))
                self.files[fid] = {"resource": {"name": f"files/{fid}", "mimeType": "application/jsonl",
                                                "sizeBytes": str(len(data)), "createTime": now,
                                                "updateTime": now, "state": "ACTIVE",
                                                "source": "GENERATED",
                                                "downloadUri": f"{self.base_url}/v1beta/files/{fid}:download"},
                                   "data": data, "gets": 0}
                meta["output"] = {"responsesFile": f"files/{fid}"}
            else:
                meta["output"] = {"inlinedResponses": {"inlinedResponses": outputs}}
            meta["state"] = "BATCH_STATE_SUCCEEDED"
            meta["endTime"] = meta["updateTime"]

    def _download(self, h: _Handler, fid: str) -> None:
        with self._lock:
            self.downloads += 1
            entry = self.files.get(fid)
        if entry is None:
            return h._error(403, "PERMISSION_DENIED", f"File {fid} not found")
        data = entry["data"]
        h.send_response(200)
        h.send_header("Content-Type", "application/octet-stream")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)
        h.wfile.flush()

    def _upload_start(self, h: _Handler, raw: bytes) -> None:
        if (h.headers.get("X-Goog-Upload-Protocol") or "").lower() != "resumable" or \
                (h.headers.get("X-Goog-Upload-Command") or "").lower() != "start":
            return h._error(400, "INVALID_ARGUMENT", "only resumable uploads are supported")
        try:
            meta = (json.loads(raw or b"{}") or {}).get("file") or {}
        except json.JSONDecodeError:
            return h._error(400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
        sid = uuid.uuid4().hex
        with self._lock:
            self.upload_starts += 1
            self._sessions[sid] = {
                "meta": meta,
                "size": int(h.headers.get("X-Goog-Upload-Header-Content-Length") or 0),
                "mime": h.headers.get("X-Goog-Upload-Header-Content-Type")
                or meta.get("mimeType") or "application/octet-stream",
                "display": h.headers.get("X-Goog-Upload-File-Name"),
                "data": bytearray(),
            }
        h._send(200, {}, {"X-Goog-Upload-URL": f"{self.base_url}/upload-session/{sid}",
                          "X-Goog-Upload-Status": "active"})

    def _upload_chunk(self, h: _Handler, sid: str, raw: bytes) -> None:
        command = (h.headers.get("X-Goog-Upload-Command") or "").lower()
        with self._lock:
            session = self._sessions.get(sid)
        if session is None:
            return h._error(404, "NOT_FOUND", "upload session not found",
                            {"X-Goog-Upload-Status": "final"})
        offset = int(h.headers.get("X-Goog-Upload-Offset") or 0)
        if offset != len(session["data"]):
            return h._error(400, "INVALID_ARGUMENT", f"bad offset {offset}",
                            {"X-Goog-Upload-Status": "final"})
        session["data"].extend(raw)
        if "finalize" not in command:
            return h._send(200, None, {"X-Goog-Upload-Status": "active"})
        fid = uuid.uuid4().hex[:12]
        now = datetime.now(timezone.utc)
        resource = {
            "name": f"files/{fid}",
            "displayName": session["meta"].get("displayName") or session["display"] or fid,
            "mimeType": session["mime"],
            "sizeBytes": str(len(session["data"])),
            "createTime": _stamp(now),
            "updateTime": _stamp(now),
            "expirationTime": _stamp(now + timedelta(hours=48)),
            "uri": f"{self.base_url}/v1beta/files/{fid}",
            "state": "PROCESSING" if self.processing_polls > 0 or self.fail_files else "ACTIVE",
            "source": "UPLOADED",
        }
        with self._lock:
            self._sessions.pop(sid, None)
            self.files[fid] = {"resource": resource, "data": bytes(session["data"]), "gets": 0}
            self.uploads += 1
        h._send(200, {"file": resource}, {"X-Goog-Upload-Status": "final"})

    def _file_get(self, h: _Handler, fid: str) -> None:
        with self._lock:
            self.file_gets += 1
            entry = self.files.get(fid)
            if entry is None:
                resource = None
            else:
                entry["gets"] += 1
                res = entry["resource"]
                if res["state"] == "PROCESSING" and entry["gets"] > self.processing_polls:
                    if self.fail_files:
                        res["state"] = "FAILED"
                        res["error"] = {"code": 3, "message": "Video processing failed."}
                    else:
                        res["state"] = "ACTIVE"
                    res["updateTime"] = _stamp(datetime.now(timezone.utc))
                resource = dict(res)
        if resource is None:
            return h._error(403, "PERMISSION_DENIED",
                            f"You do not have permission to access the File {fid} or it may "
                            "not exist.")
        h._send(200, resource)
