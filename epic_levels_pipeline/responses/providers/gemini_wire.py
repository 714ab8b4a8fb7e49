"""Gemini wire helpers: media files (hash, mime type, Duration text), the SDK's errors classified for the call
runner (retryable or not, ``Retry-After``), file states, why a response has no text, and the per-event-loop
client state of a :class:`.gemini.GeminiCaller`."""

from __future__ import annotations

import asyncio
import hashlib
import mimetypes
import os

from google import genai
from google.genai import errors, types

from ..calls import RetryableError, parse_retry_after

RETRYABLE_HTTP = frozenset({408, 429, 500, 502, 503, 504})

# Gemini's names where they differ from (or are missing in) the platform's mimetypes table.
_MIME_OVERRIDES = {
    ".mp4": "video/mp4", ".m4v": "video/mp4", ".webm": "video/webm", ".mov": "video/mov",
    ".avi": "video/avi", ".mpeg": "video/mpeg", ".mpg": "video/mpg", ".wmv": "video/wmv",
    ".3gp": "video/3gpp", ".flv": "video/x-flv", ".wav": "audio/wav", ".mp3": "audio/mp3",
    ".aac": "audio/aac", ".m4a": "audio/aac", ".ogg": "audio/ogg", ".flac": "audio/flac",
    ".aiff": "audio/aiff", ".aif": "audio/aiff",
}


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


class _LoopState:
    def __init__(self, client: genai.Client):
        self.client = client
        self.locks: dict[str, asyncio.Lock] = {}


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
