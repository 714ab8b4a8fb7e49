"""Gemini context caching per clip window, on the real google-genai SDK against the local server.

Covers: one cached content per clip file × condition, reused by every item (requests then carry only
the item text, and report ``cached_tokens``); a cache that expires mid-run is recreated exactly once;
a window below the model's minimum is sent uncached with the reason in ``route``, as is one the server
refuses; a resumed caller reuses the live cache recorded in the call cache database; the caches are
deleted when the run ends.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from epic_levels_pipeline.responses.cache import CallCache, cache_key
from epic_levels_pipeline.responses.calls import CallRequest, run_calls_sync
from epic_levels_pipeline.responses.providers.gemini import GeminiCaller, GeminiSettings
from epic_levels_pipeline.responses.providers.gemini_wire import sha256_file
from epic_levels_pipeline.responses.providers.gemini_tokens import media_tokens, min_cache_tokens, resolution_name

try:
    from epic_levels_pipeline_tests.fakes.gemini_server import GeminiTestServer, request_file_uris
except ImportError:  # tests dir is not a package; pytest puts it on sys.path itself
    from gemini_server import GeminiTestServer, request_file_uris

FAST = dict(rpm=None, base_delay=0.01, max_delay=0.05)
TOKENS_PER_S = 290


@pytest.fixture(autouse=True)
def dummy_key(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "test-key-not-secret")


@pytest.fixture
def clips(tmp_path) -> list[Path]:
    out = []
    for name in ("a_clip.mp4", "a_silenced.mp4", "b_clip.mp4"):
        p = tmp_path / name
        p.write_bytes(os.urandom(3000))
        out.append(p)
    return out


def caller_for(server: GeminiTestServer, cache: CallCache | None) -> GeminiCaller:
    return GeminiCaller(GeminiSettings(base_url=server.base_url, file_poll_interval_s=0.01,
                                       timeout_s=20, sdk_retry_attempts=1), cache)


def requests_for(clips: list[Path], n_items: int, *, start=0.0, end=30.0, tag="q") -> list[CallRequest]:
    out = []
    for clip in clips:
        sha = sha256_file(clip)
        condition = "silenced" if "silenced" in clip.name else "clip"
        for i in range(n_items):
            prompt = f"{tag} {i}: what happens in {clip.stem}?"
            out.append(CallRequest(cache_key("gemini", "gemini-2.5-flash", prompt, sha, condition, {}),
                                   "gemini", "gemini-2.5-flash", condition, prompt, media_path=str(clip),
                                   media_sha256=sha, start_offset_s=start, end_offset_s=end))
    return out


def test_token_helpers():
    assert media_tokens(30) == 30 * (258 + 32)
    assert media_tokens(30, "low", 2) == 30 * (66 * 2 + 32)
    assert resolution_name("LOW") == "MEDIA_RESOLUTION_LOW" and resolution_name(None) is None
    with pytest.raises(ValueError, match="low, medium, high"):
        resolution_name("ultra")
    assert min_cache_tokens("gemini-2.5-flash") == 1024 and min_cache_tokens("gemini-2.5-flash-lite") == 2048
    assert min_cache_tokens("models/gemini-2.5-pro") == 4096 and min_cache_tokens("new-model") == 4096


def test_one_cache_per_clip_and_condition_reused_by_all_items(tmp_path, clips):
    with GeminiTestServer(media_tokens_per_s=TOKENS_PER_S, processing_polls=0) as server, \
            CallCache(tmp_path / "calls.sqlite") as cache:
        caller = caller_for(server, cache)
        requests = requests_for(clips, 12)
        results, stats = run_calls_sync(requests, caller, cache, concurrency=6, **FAST)

        assert all(r.status == "ok" for r in results), [r.error for r in results if r.status != "ok"]
        assert server.cache_creates == 3 and caller.context_creations == 3  # 3 files x 1 window
        assert server.cached_generates == 36 and server.uploads == 3
        # every generate request carried only the item text and named its cache
        assert all(not request_file_uris(b) and b.get("cachedContent") for b in server.generate_requests)
        names = {b["cachedContent"] for b in server.generate_requests}
        assert len(names) == 3
        assert all(r.cached_tokens == 30 * TOKENS_PER_S for r in results)
        assert all(r.prompt_tokens > r.cached_tokens for r in results)
        assert all(r.route.startswith("video=cached_content(cachedContents/") for r in results)
        stored = cache.rows()
        assert {row["cached_tokens"] for row in stored} == {30 * TOKENS_PER_S}
        assert len(cache.context_caches()) == 3

        caller.end_run()  # the run is over: its caches are deleted, and their rows
        assert server.cache_deletes == 3 and not server.caches and cache.context_caches() == []


def test_cache_expiring_mid_run_is_recreated_once(tmp_path, clips):
    answered = {"n": 0}
    lock = threading.Lock()
    server = GeminiTestServer(media_tokens_per_s=TOKENS_PER_S, processing_polls=0)

    def reply(body):
        with lock:
            answered["n"] += 1
            if answered["n"] == 8:
                server.expire_caches()  # the TTL passes while the run goes on
        return "ok"

    server.reply_fn = reply
    with server, CallCache(tmp_path / "calls.sqlite") as cache:
        caller = caller_for(server, cache)
        results, _ = run_calls_sync(requests_for(clips[:1], 30), caller, cache, concurrency=4, **FAST)
        assert all(r.status == "ok" for r in results), [r.error for r in results if r.status != "ok"]
        assert server.cache_creates == 2  # the first, and one replacement however many noticed
        assert caller.context_recreations == 1
        assert server.rejected >= 1  # at least one request hit the expired cache (and was re-asked)
        assert sum(r.route.endswith(";recreated") for r in results) >= 1
        assert len(cache.context_caches()) == 1
        assert cache.context_caches()[0].name == server.generate_requests[-1]["cachedContent"]


def test_window_below_minimum_is_sent_uncached_with_reason(tmp_path, clips):
    with GeminiTestServer(media_tokens_per_s=TOKENS_PER_S, processing_polls=0) as server:
        caller = caller_for(server, None)
        results, _ = run_calls_sync(requests_for(clips[:1], 3, start=0.0, end=2.0), caller, None, **FAST)
        assert all(r.status == "ok" for r in results)
        assert server.cache_creates == 0  # ~580 tokens: not even tried
        assert all(request_file_uris(b) for b in server.generate_requests)  # media part first
        assert all(b["contents"][0]["parts"][-1].get("text") for b in server.generate_requests)  # text last
        assert all("uncached(~580 tokens is below the 1024-token minimum" in r.route for r in results)


def test_refused_creation_is_sent_uncached_and_tried_once(tmp_path, clips):
    with GeminiTestServer(media_tokens_per_s=None, processing_polls=0) as server:  # 258 tokens a file
        caller = caller_for(server, None)
        results, _ = run_calls_sync(requests_for(clips[:1], 4, start=None, end=None), caller, None, **FAST)
        assert all(r.status == "ok" for r in results)
        assert server.cache_creates == 1  # refused once, then remembered for the run
        assert all("cache creation failed: HTTP 400" in r.route and "too small" in r.route for r in results)
        assert all(r.cached_tokens == 0 for r in results)


def test_resumed_caller_reuses_the_recorded_live_cache(tmp_path, clips):
    with GeminiTestServer(media_tokens_per_s=TOKENS_PER_S, processing_polls=0) as server:
        path = tmp_path / "calls.sqlite"
        with CallCache(path) as cache:
            run_calls_sync(requests_for(clips[:1], 3), caller_for(server, cache), cache, **FAST)
        # the process ends without deleting (e.g. killed); a new one picks the cache up
        with CallCache(path) as cache:
            caller = caller_for(server, cache)
            results, _ = run_calls_sync(requests_for(clips[:1], 3, tag="more"), caller, cache, **FAST)
            assert all(r.status == "ok" and r.cached_tokens for r in results)
            assert server.cache_creates == 1 and server.cache_gets == 1 and caller.context_creations == 0
            # ...but not once it has expired: then a new one is made
            server.expire_caches()
            caller2 = caller_for(server, cache)
            results, _ = run_calls_sync(requests_for(clips[:1], 2, tag="late"), caller2, cache, **FAST)
            assert all(r.status == "ok" for r in results) and server.cache_creates == 2
