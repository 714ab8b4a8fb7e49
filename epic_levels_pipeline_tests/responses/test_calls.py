"""run_calls: order, cache, retries/backoff, Retry-After, rate limit, concurrency cap, no lost request."""

from __future__ import annotations

import asyncio
import time

import pytest
from hypothesis import given, settings, strategies as st

from epic_levels_pipeline.responses.cache import CallCache
from epic_levels_pipeline.responses.calls import (CallRequest, CallResult, RateLimiter, RetryableError, run_calls,
                                        run_calls_sync)


def reqs(n: int, prefix: str = "k") -> list[CallRequest]:
    return [CallRequest(cache_key=f"{prefix}{i}", responder="fake", model="m", condition="c",
                        prompt=f"p{i}") for i in range(n)]


class Fake:
    """A call whose behaviour per prompt is scripted: a list of outcomes consumed one per attempt
    ('ok', 'retry', 'retry429', 'boom'); unscripted prompts answer ok."""

    def __init__(self, script: dict[str, list[str]] | None = None, delay: float = 0.0):
        self.script = {k: list(v) for k, v in (script or {}).items()}
        self.delay = delay
        self.calls: list[str] = []
        self.times: list[float] = []
        self.in_flight = 0
        self.max_in_flight = 0

    async def __call__(self, req: CallRequest) -> CallResult:
        self.calls.append(req.prompt)
        self.times.append(time.monotonic())
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            todo = self.script.get(req.prompt)
            outcome = todo.pop(0) if todo else "ok"
            if outcome == "retry":
                raise RetryableError("server busy", status=503)
            if outcome == "retry429":
                raise RetryableError("slow down", status=429, retry_after=0.3)
            if outcome == "boom":
                raise ValueError("bad prompt")
            if outcome == "bad":
                return "not a result"  # type: ignore[return-value]
            return CallResult(req.cache_key, f"answer to {req.prompt}", "ok", prompt_tokens=3,
                              output_tokens=1)
        finally:
            self.in_flight -= 1


FAST = dict(rpm=None, base_delay=0.001, max_delay=0.01)


def test_results_in_input_order_and_persisted(tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")
    requests = reqs(20)
    fake = Fake()
    results, stats = run_calls_sync(requests, fake, cache, concurrency=5, **FAST)
    assert [r.cache_key for r in results] == [r.cache_key for r in requests]
    assert [r.reply for r in results] == [f"answer to p{i}" for i in range(20)]
    assert all(r.status == "ok" and r.attempts == 1 and not r.cached for r in results)
    assert (stats.requests, stats.cache_hits, stats.calls_made, stats.ok, stats.errors) == (20, 0, 20, 20, 0)
    assert len(cache) == 20 and cache.get("k7").reply == "answer to p7"


def test_second_run_is_served_from_cache(tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")
    run_calls_sync(reqs(10), Fake(), cache, **FAST)
    fake = Fake()
    results, stats = run_calls_sync(reqs(10), fake, cache, **FAST)
    assert fake.calls == [] and stats.calls_made == 0 and stats.cache_hits == 10
    assert all(r.cached and r.status == "ok" for r in results)


def test_errors_are_stored_and_retried_next_run(tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")
    results, stats = run_calls_sync(reqs(3), Fake({"p1": ["boom"]}), cache, **FAST)
    assert [r.status for r in results] == ["ok", "error", "ok"]
    assert "ValueError: bad prompt" in results[1].error and results[1].attempts == 1
    assert stats.errors == 1 and cache.get("k1").status == "error"
    fake = Fake()
    results, stats = run_calls_sync(reqs(3), fake, cache, **FAST)
    assert fake.calls == ["p1"] and stats.cache_hits == 2
    assert results[1].status == "ok" and cache.get("k1").status == "ok"


def test_retryable_errors_are_retried_then_succeed():
    fake = Fake({"p0": ["retry", "retry", "ok"], "p2": ["retry"]})
    results, stats = run_calls_sync(reqs(3), fake, None, max_retries=5, **FAST)
    assert [r.status for r in results] == ["ok", "ok", "ok"]
    assert [r.attempts for r in results] == [3, 1, 2]
    assert stats.calls_made == 6 and stats.retries == 3 and stats.errors == 0


def test_exhausted_retries_become_an_error_result():
    fake = Fake({"p0": ["retry"] * 10})
    results, stats = run_calls_sync(reqs(2), fake, None, max_retries=3, **FAST)
    assert results[0].status == "error" and results[0].attempts == 4
    assert "gave up after 4 attempts" in results[0].error and "HTTP 503" in results[0].error
    assert results[1].status == "ok" and stats.errors == 1 and stats.retries == 3


def test_retry_after_is_honoured_even_beyond_max_delay():
    fake = Fake({"p0": ["retry429"]})
    t0 = time.monotonic()
    results, _ = run_calls_sync(reqs(1), fake, None, rpm=None, base_delay=0.001, max_delay=0.01)
    assert results[0].status == "ok" and results[0].attempts == 2
    assert fake.times[1] - fake.times[0] >= 0.29
    assert time.monotonic() - t0 < 5


def test_backoff_grows_exponentially():
    fake = Fake({"p0": ["retry", "retry", "retry"]})
    run_calls_sync(reqs(1), fake, None, rpm=None, base_delay=0.04, max_delay=10, max_retries=5)
    gaps = [b - a for a, b in zip(fake.times, fake.times[1:])]
    # Waits are base*2**(n-1) scaled by a jitter in [0.5, 1]: at least 0.02, 0.04, 0.08.
    assert gaps[0] >= 0.019 and gaps[1] >= 0.039 and gaps[2] >= 0.079
    assert sum(gaps) < 3


def test_a_call_returning_garbage_is_an_error_not_a_crash():
    results, _ = run_calls_sync(reqs(2), Fake({"p0": ["bad"]}), None, **FAST)
    assert results[0].status == "error" and "not CallResult" in results[0].error
    assert results[1].status == "ok"


def test_duplicate_keys_are_called_once():
    requests = reqs(3) + reqs(3)  # same keys twice
    fake = Fake()
    results, stats = run_calls_sync(requests, fake, None, **FAST)
    assert sorted(fake.calls) == ["p0", "p1", "p2"] and stats.requests == 6
    assert [r.reply for r in results] == [f"answer to p{i % 3}" for i in range(6)]


def test_concurrency_cap_is_respected():
    fake = Fake(delay=0.03)
    run_calls_sync(reqs(24), fake, None, concurrency=3, **FAST)
    assert fake.max_in_flight == 3


def test_rate_limiter_spaces_acquisitions():
    async def go():
        limiter = RateLimiter(rpm=600)  # one slot every 0.1 s
        stamps = []
        for _ in range(6):
            await limiter.acquire()
            stamps.append(time.monotonic())
        return stamps

    stamps = asyncio.run(go())
    assert stamps[-1] - stamps[0] >= 0.45  # 5 intervals of 0.1 s, generous slack below
    assert stamps[-1] - stamps[0] < 3.0
    assert all(b - a >= 0.08 for a, b in zip(stamps, stamps[1:]))


def test_rate_limiter_none_means_unlimited():
    async def go():
        limiter = RateLimiter(None)
        t0 = time.monotonic()
        for _ in range(1000):
            await limiter.acquire()
        return time.monotonic() - t0

    assert asyncio.run(go()) < 1.0


def test_run_calls_respects_rpm_across_concurrent_tasks():
    fake = Fake()
    _, stats = run_calls_sync(reqs(7), fake, None, rpm=600, concurrency=7, base_delay=0.001)
    span = fake.times[-1] - fake.times[0]
    assert span >= 0.5  # 6 intervals of 0.1 s even with 7 tasks free to go at once
    assert stats.calls_per_minute <= 600 * 1.25


def test_run_calls_sync_inside_a_running_loop():
    async def inside():
        return run_calls_sync(reqs(3), Fake(), None, **FAST)

    results, stats = asyncio.run(inside())
    assert [r.status for r in results] == ["ok"] * 3 and stats.calls_made == 3


def test_on_result_sees_every_fresh_result_and_cannot_break_the_run():
    seen = []

    def on_result(req, res):
        seen.append(req.cache_key)
        raise RuntimeError("display broke")

    results, _ = run_calls_sync(reqs(4), Fake(), None, on_result=on_result, **FAST)
    assert sorted(seen) == ["k0", "k1", "k2", "k3"] and all(r.status == "ok" for r in results)


@settings(deadline=None)
@given(st.lists(st.lists(st.sampled_from(["ok", "retry", "boom"]), max_size=4), min_size=1,
                max_size=12))
def test_no_request_is_ever_lost(plan):
    """Whatever each request's sequence of outcomes, every request ends ok or error, in order,
    with the right number of attempts."""
    requests = reqs(len(plan))
    fake = Fake({f"p{i}": p for i, p in enumerate(plan)})
    results, stats = run_calls_sync(requests, fake, None, max_retries=2, concurrency=4, **FAST)
    assert [r.cache_key for r in results] == [r.cache_key for r in requests]
    for outcomes, res in zip(plan, results):
        # Outcome of attempt n is outcomes[n-1] (ok once the script runs out).
        expected_status, expected_attempts = "ok", None
        for n in range(1, 4):
            o = outcomes[n - 1] if n <= len(outcomes) else "ok"
            if o == "retry" and n < 3:
                continue
            expected_attempts = n
            expected_status = "ok" if o == "ok" else "error"
            break
        assert res.status == expected_status and res.attempts == expected_attempts
    assert stats.ok + stats.errors == len(plan)
    assert stats.calls_made == len(fake.calls)


def test_cancellation_keeps_what_was_answered(tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")

    async def go():
        task = asyncio.create_task(run_calls(reqs(40), Fake(delay=0.02), cache, rpm=None,
                                             concurrency=2))
        await asyncio.sleep(0.15)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    answered = len(cache)
    assert 0 < answered < 40
    fake = Fake()
    _, stats = run_calls_sync(reqs(40), fake, cache, **FAST)
    assert stats.cache_hits == answered and len(fake.calls) == 40 - answered
