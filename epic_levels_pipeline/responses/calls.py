"""Running many model calls: rate limit, concurrency cap, retries, and a persistent cache (pure core).

A *call* is any ``async def call(request: CallRequest) -> CallResult`` (a provider's caller, a test's fake).
:func:`run_calls` gives every request exactly one result, in input order, and never raises: ``ok`` rows of the
:class:`.cache.CallCache` are served without calling, each result is persisted the moment it arrives, requests
sharing a cache key are called once, retries back off with seeded jitter (a server's Retry-After wins), and a
request form the server keeps rejecting is stopped with one message naming the setting to change. The guarantees
in full: docs/design/model-calls.md."""

from __future__ import annotations

import asyncio
import contextvars
import email.utils
import random
import re
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Awaitable, Callable, ClassVar, Protocol, Sequence

STATUSES = ("ok", "error", "skipped")


@dataclass(frozen=True)
class CallRequest:
    """One question to one responder.

    ``cache_key`` identifies the answer (see :func:`.cache.cache_key`); the runner trusts it and
    never recomputes it. ``media_path``/``media_sha256`` name the clip file sent with the prompt (None:
    text only); ``start_offset_s``/``end_offset_s`` restrict the model to part of it. ``settings`` are
    responder-specific knobs (temperature, output schema, ...) and must be JSON-serialisable because
    they are part of the cache key.
    """

    cache_key: str
    responder: str
    model: str
    condition: str
    prompt: str
    media_path: str | None = None
    media_sha256: str | None = None
    start_offset_s: float | None = None
    end_offset_s: float | None = None
    settings: dict = field(default_factory=dict)


@dataclass(frozen=True)
class CallResult:
    """The outcome of one request.

    ``status`` is ``ok`` (``reply`` holds the answer text), ``error`` (``error`` holds why; ``reply``
    is empty or partial) or ``skipped`` (the responder chose not to answer, e.g. a condition it does
    not support). ``attempts`` counts calls made in the run that produced it (0 for a result that was
    never called). ``cached`` is True when the result was served from the cache in this run.
    ``latency_s`` is the responder's own measure when it gives one, otherwise the runner's wall time
    of the successful attempt. ``route`` says how the media was sent (e.g.
    ``"video=frames(30@1fps);audio=input_audio"``, ``"text"``; empty when the provider has one way
    only) and ``cached_tokens`` how many prompt tokens the server had cached (0 when it does not say).
    """

    cache_key: str
    reply: str
    status: str
    prompt_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    error: str = ""
    attempts: int = 0
    cached: bool = False
    route: str = ""
    cached_tokens: int = 0


class ResultCache(Protocol):
    """What the call loop needs of a cache: :class:`.cache.CallCache` (which stores these types) is the one."""

    def get(self, key: str) -> CallResult | None: ...

    def put(self, result: CallResult, request: CallRequest | None = None) -> None: ...


class RetryableError(Exception):
    """A transient failure worth retrying: HTTP 429/5xx, a timeout, a dropped connection.

    ``status`` is the HTTP status (0 when there was no HTTP answer). ``retry_after`` is the delay in
    seconds the server asked for, or None when it did not say.
    """

    def __init__(self, message: str = "", *, status: int = 0, retry_after: float | None = None):
        super().__init__(message or f"retryable error (HTTP {status})")
        self.status = status
        self.retry_after = retry_after


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds, decimals tolerated, or an HTTP date) or a
    Duration string (``"31s"``, ``"0.5s"``); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    m = re.fullmatch(r"(\d+(?:\.\d*)?)s?", value)
    if m:
        return float(m.group(1))
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


@dataclass
class CallStats:
    """What a run did.

    ``requests``: requests given (duplicates included); ``cache_hits``: requests served from the cache;
    ``calls_made``: invocations of ``call``, retries included; ``retries``: the invocations that were
    retries; ``errors``: requests that ended ``error``; ``ok``: requests that ended ``ok``;
    ``elapsed_s``: wall time of the run.
    """

    requests: int = 0
    cache_hits: int = 0
    calls_made: int = 0
    retries: int = 0
    errors: int = 0
    ok: int = 0
    elapsed_s: float = 0.0

    @property
    def calls_per_minute(self) -> float:
        return 60.0 * self.calls_made / self.elapsed_s if self.elapsed_s > 0 else 0.0


class RateLimiter:
    """Smooth spacing (not a token bucket): successive :meth:`acquire` calls return at least
    ``60 / rpm`` seconds apart, with no burst allowance.

    Decision: spacing rather than a bucket because the limit we respect is a per-minute quota enforced
    by the provider over sliding windows; a bucket's initial burst is exactly what trips a 429 at the
    start of a run. Slots are reserved in call order (first come, first served) and a task cancelled
    while waiting still consumes its slot (harmless: the limiter only ever errs on the slow side).
    After an idle period the next caller goes immediately — idle time is not banked. ``rpm`` of None
    or <= 0 means no limit. Safe for one event loop (not for threads).
    """

    def __init__(self, rpm: float | None):
        self.rpm = rpm
        self.interval = 60.0 / rpm if rpm and rpm > 0 else 0.0
        self._next = 0.0

    async def acquire(self) -> None:
        if self.interval <= 0:
            return
        now = time.monotonic()
        slot = max(now, self._next)
        self._next = slot + self.interval
        if slot > now:
            await asyncio.sleep(slot - now)


STOP_AFTER = 3  # rejections in a row, same status and message, that stop a form never accepted
TRANSIENT_HTTP = frozenset({0, 408, 429, 502, 503, 504})  # a busy or restarting server: never a rejection


class Rejections:
    """Which forms of a model's requests its server rejects as malformed (see the module docstring).

    ``form_of(request)`` names a request's form (e.g. ``text;json_schema``: what the server may refuse as a
    whole, whatever the prompt); ``advice(form, status, message)`` is the one message a stopped form's rows
    carry, naming the setting to change. The provider calls :meth:`accepted` for every answer the server
    took and :meth:`rejected` for every HTTP error; :func:`run_calls` asks :meth:`stopped` before every
    attempt. A form the server accepted once is never stopped (its errors are the requests' own). Stopped
    forms hold for the process, under ``scope`` (the model's identity), so every step of a run shares them;
    the message is printed once, on standard error."""

    _stopped: ClassVar[dict[tuple[str, str], str]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, scope: str, form_of: Callable[[CallRequest], str],
                 advice: Callable[[str, int, str], str], after: int = STOP_AFTER):
        self.scope = scope
        self.form_of = form_of
        self.advice = advice
        self.after = max(1, int(after))
        self._accepted: set[str] = set()
        self._streak: dict[str, tuple[int, str, int]] = {}

    def stopped(self, request: CallRequest) -> str | None:
        """The message of a stopped form, or None when the request may be sent."""
        return self._stopped.get((self.scope, self.form_of(request)))

    def accepted(self, request: CallRequest) -> None:
        form = self.form_of(request)
        with self._lock:
            self._accepted.add(form)
            self._streak.pop(form, None)

    def rejected(self, request: CallRequest, status: int, message: str) -> None:
        if status in TRANSIENT_HTTP:
            return
        form = self.form_of(request)
        with self._lock:
            if form in self._accepted or (self.scope, form) in self._stopped:
                return
            last = self._streak.get(form)
            count = last[2] + 1 if last and last[:2] == (status, message) else 1
            self._streak[form] = (status, message, count)
            if count < self.after:
                return
            reason = self.advice(form, status, message)
            self._stopped[(self.scope, form)] = reason
        print(f"warning: {reason} (stopped after {count} rejections in a row; its remaining requests are "
              "error rows with this message)", file=sys.stderr, flush=True)

    @classmethod
    def forget(cls) -> None:
        """Clear every stopped form of the process (a test's fresh start)."""
        with cls._lock:
            cls._stopped.clear()


Call = Callable[[CallRequest], Awaitable[CallResult]]


def _backoff(attempt: int, base_delay: float, max_delay: float, rng: random.Random,
             retry_after: float | None) -> float:
    """Seconds to wait before retry number ``attempt`` (1-based)."""
    delay = min(max_delay, base_delay * (2 ** (attempt - 1)))
    delay = delay * (0.5 + 0.5 * rng.random())
    if retry_after is not None and retry_after > 0:
        delay = max(delay, retry_after)
    return delay


def serve_cached(requests: Sequence[CallRequest], cache: "ResultCache | None", results: list
                 ) -> tuple[dict[str, list[int]], list[CallRequest], int]:
    """Cache first: fill ``results`` (by position) from ``ok`` rows; returns the positions of each key
    (a key is answered once however many requests share it), the first request of every key still to
    answer, and how many requests were served."""
    positions: dict[str, list[int]] = {}
    for i, req in enumerate(requests):
        positions.setdefault(req.cache_key, []).append(i)
    pending: list[CallRequest] = []
    hits = 0
    for key, idx in positions.items():
        hit = cache.get(key) if cache is not None else None
        if hit is not None and hit.status == "ok":
            for i in idx:
                results[i] = hit
            hits += len(idx)
        else:
            pending.append(requests[idx[0]])
    return positions, pending, hits


async def run_calls(
    requests: Sequence[CallRequest],
    call: Call,
    cache: "ResultCache | None",
    *,
    rpm: float | None = 60,
    concurrency: int = 8,
    max_retries: int = 5,
    base_delay: float = 0.5,
    max_delay: float = 30.0,
    seed: int = 0,
    on_result: Callable[[CallRequest, CallResult], None] | None = None,
) -> tuple[list[CallResult], CallStats]:
    """Answer every request (see the module docstring for the guarantees); returns results in input
    order and the run's :class:`CallStats`.

    ``cache`` may be None (no caching, no persistence). ``on_result(request, result)`` is called for
    every fresh (non-cached) result after it has been persisted, e.g. for progress display; an
    exception it raises is ignored. Cancellation (``asyncio.CancelledError``) and
    ``KeyboardInterrupt`` are not swallowed: the run stops, results already persisted stay.
    """
    t0 = time.monotonic()
    stats = CallStats(requests=len(requests))
    results: list[CallResult | None] = [None] * len(requests)
    limiter = RateLimiter(rpm)
    cap = asyncio.Semaphore(max(1, int(concurrency)))
    rng = random.Random(seed)
    rejections = getattr(call, "rejections", None)
    if not isinstance(rejections, Rejections):
        rejections = None

    positions, pending, stats.cache_hits = serve_cached(requests, cache, results)

    async def one(req: CallRequest) -> None:
        attempt = 0
        last_error = ""
        result: CallResult | None = None
        while True:
            retry_after: float | None = None
            async with cap:
                stop = rejections.stopped(req) if rejections is not None else None
                if stop is not None:  # the form was stopped while this request waited: not sent
                    result = CallResult(req.cache_key, "", "error", error=stop, attempts=attempt)
                    break
                attempt += 1
                await limiter.acquire()
                stats.calls_made += 1
                if attempt > 1:
                    stats.retries += 1
                started = time.monotonic()
                try:
                    out = await call(req)
                    if not isinstance(out, CallResult):
                        raise TypeError(f"call returned {type(out).__name__}, not CallResult")
                    if out.status not in STATUSES:
                        raise ValueError(f"call returned unknown status {out.status!r}")
                    result = replace(
                        out, cache_key=req.cache_key, attempts=attempt, cached=False,
                        latency_s=out.latency_s or (time.monotonic() - started),
                    )
                except RetryableError as exc:
                    last_error = f"{type(exc).__name__}: HTTP {exc.status}: {exc}"
                    retry_after = exc.retry_after
                except (asyncio.CancelledError, KeyboardInterrupt):
                    raise
                except Exception as exc:  # noqa: BLE001 - any failure becomes an error row
                    result = CallResult(req.cache_key, "", "error",
                                        error=f"{type(exc).__name__}: {exc}", attempts=attempt)
            if result is not None:
                break
            if attempt > max_retries:
                result = CallResult(req.cache_key, "", "error",
                                    error=f"gave up after {attempt} attempts: {last_error}",
                                    attempts=attempt)
                break
            await asyncio.sleep(_backoff(attempt, base_delay, max_delay, rng, retry_after))

        if cache is not None:
            cache.put(result, req)
        for i in positions[req.cache_key]:
            results[i] = result
        if on_result is not None:
            try:
                on_result(req, result)
            except Exception:  # noqa: BLE001 - progress display must not break the run
                pass

    expect = getattr(call, "expect", None)
    if pending and callable(expect):
        expect(pending)
    if pending:
        await asyncio.gather(*(one(r) for r in pending))

    final: list[CallResult] = [r for r in results if r is not None]
    assert len(final) == len(requests)
    stats.ok = sum(1 for r in final if r.status == "ok")
    stats.errors = sum(1 for r in final if r.status == "error")
    stats.elapsed_s = time.monotonic() - t0
    return final, stats


def run_blocking(coro):
    """Run the coroutine ``coro`` to completion from synchronous code and return its value. Uses
    ``asyncio.run`` when no loop runs in this thread; inside a running loop (e.g. a notebook, or an
    async Dagster op) it runs a fresh loop in a helper thread and waits for it, re-raising any
    exception there."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)

    box: dict = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="run_blocking", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def run_calls_sync(requests: Sequence[CallRequest], call: Call, cache: "ResultCache | None",
                   **kwargs) -> tuple[list[CallResult], CallStats]:
    """Blocking :func:`run_calls` (see :func:`run_blocking`). ``call`` must not be tied to another
    event loop (:class:`.providers.gemini.GeminiCaller` keeps one SDK client per loop, so it is fine). The results are
    shown to the current observer (:func:`observed`)."""
    results, stats = run_blocking(run_calls(requests, call, cache, **kwargs))
    observe(call, results, stats)
    return results, stats


Observer = Callable[[object, list, "CallStats | None"], None]
_OBSERVER: contextvars.ContextVar[Observer | None] = contextvars.ContextVar("calls_observer", default=None)


@contextmanager
def observed(observer: Observer):
    """While the block runs, ``observer(call, results, stats)`` sees every batch :func:`run_calls_sync` answers
    (what :mod:`.spend` tallies)."""
    token = _OBSERVER.set(observer)
    try:
        yield observer
    finally:
        _OBSERVER.reset(token)


def observe(call, results: list, stats: "CallStats | None" = None) -> None:
    """Show a batch of results answered for ``call`` to the current observer, if any."""
    observer = _OBSERVER.get()
    if observer is not None:
        observer(call, results, stats)
