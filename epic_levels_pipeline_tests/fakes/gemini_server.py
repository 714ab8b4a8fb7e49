"""A local stand-in for the Gemini REST API (v1beta), for tests and benchmarks.

Listens on 127.0.0.1 at a free port and speaks enough of the API for the real ``google-genai`` SDK
pointed at it through ``HttpOptions(base_url=server.base_url)``:

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
_UPLOAD_START = re.compile(r"^/upload/(v1beta|v1)/files$")
_UPLOAD_SESSION = re.compile(r"^/upload-session/([0-9a-f]+)$")
_FILE = re.compile(r"^/(v1beta|v1)/files/([A-Za-z0-9_-]+)$")


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

    def prompts(self) -> list[str]:
        """The text of every generate request received, in arrival order."""
        with self._lock:
            return [request_text(b) for b in self.generate_requests]

    # -- routing ----------------------------------------------------------------------------------

    def _route(self, h: _Handler, method: str, path: str, body: bytes) -> None:
        if method == "POST" and (m := _GENERATE.match(path)):
            return self._generate(h, m.group(2), body)
        if method == "POST" and _UPLOAD_START.match(path):
            return self._upload_start(h, body)
        if method == "POST" and (m := _UPLOAD_SESSION.match(path)):
            return self._upload_chunk(h, m.group(1), body)
        if method == "GET" and (m := _FILE.match(path)):
            return self._file_get(h, m.group(2))
        if method == "DELETE" and (m := _FILE.match(path)):
            with self._lock:
                self.files.pop(m.group(2), None)
            return h._send(200, {})
        h._error(404, "NOT_FOUND", f"no route for {method} {path}")

    def _generate(self, h: _Handler, model: str, raw: bytes) -> None:
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

        # Files referenced must exist and be ACTIVE.
        for uri in request_file_uris(body):
            fid = uri.rstrip("/").rsplit("/", 1)[-1]
            with self._lock:
                entry = self.files.get(fid)
                state = entry["resource"]["state"] if entry else None
            if state != "ACTIVE":
                with self._lock:
                    self.rejected += 1
                what = "does not exist" if state is None else f"is in state {state}"
                return h._error(400, "FAILED_PRECONDITION",
                                f"The File {fid} is not in an ACTIVE state ({what}) and usage "
                                "is not allowed.")

        prompt_tokens = len(request_text(body).split()) + FILE_PART_TOKENS * len(
            request_file_uris(body))
        if malformed:
            with self._lock:
                self.malformed += 1
            return h._send(200, {"usageMetadata": {"promptTokenCount": prompt_tokens,
                                                   "totalTokenCount": prompt_tokens},
                                 "modelVersion": model})
        try:
            text = self.reply_fn(body)
        except Exception as exc:  # noqa: BLE001 - a broken reply_fn is reported as a 500
            with self._lock:
                self.faults += 1
            return h._error(500, "INTERNAL", f"reply_fn failed: {exc}")
        out_tokens = max(1, len(text.split()))
        payload = {
            "candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": prompt_tokens,
                              "candidatesTokenCount": out_tokens,
                              "totalTokenCount": prompt_tokens + out_tokens},
            "modelVersion": model,
            "responseId": uuid.uuid4().hex[:16],
        }
        h._send(200, payload)
        with self._lock:
            self.generate_ok += 1

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
