"""GeminiCaller on the real google-genai SDK against the local Gemini-compatible server.

Covers: text-only and media requests, one upload per media file (within a run and across runs),
waiting for ACTIVE, FAILED/timeout -> error rows, reply/token parsing, malformed replies, fault
injection with nothing lost, zero calls on re-run, structured judge output, and a SIGKILLed run
resumed without re-asking anything already answered.
"""

from __future__ import annotations

import asyncio
import json
import os
import runpy
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from google.genai import errors

from epic_levels_pipeline.responses.cache import CallCache, cache_key
from epic_levels_pipeline.responses.calls import CallRequest, RetryableError, run_calls, run_calls_sync
from epic_levels_pipeline.responses.providers.gemini import (GeminiCaller, GeminiSettings, api_key_from_env,
                                                             check_json_reply)
from epic_levels_pipeline.responses.providers.structured import choice_schema, parse_choice
from epic_levels_pipeline.responses.providers.gemini_wire import duration, retry_after_of, sha256_file

try:
    from epic_levels_pipeline_tests.fakes.gemini_server import GeminiTestServer, request_file_uris, request_text
except ImportError:  # tests dir is not a package; pytest puts it on sys.path itself
    from gemini_server import GeminiTestServer, request_file_uris, request_text

REPO = Path(__file__).resolve().parents[2]
FAST = dict(rpm=None, base_delay=0.01, max_delay=0.05)


@pytest.fixture(autouse=True)
def dummy_key(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "test-key-not-secret")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)


@pytest.fixture
def media(tmp_path) -> list[Path]:
    out = []
    for i in range(3):
        p = tmp_path / f"clip{i}.mp4"
        p.write_bytes(os.urandom(2000 + i))
        out.append(p)
    return out


def settings_for(server: GeminiTestServer, **kw) -> GeminiSettings:
    return GeminiSettings(base_url=server.base_url, file_poll_interval_s=0.01, timeout_s=20,
                          sdk_retry_attempts=1, **kw)


def make_request(prompt: str, clip: Path | None = None, start=None, end=None, settings=None,
                 condition="full") -> CallRequest:
    sha = sha256_file(clip) if clip else None
    settings = settings or {}
    return CallRequest(cache_key=cache_key("gemini", "gemini-2.5-flash", prompt, sha, condition, settings),
                       responder="gemini", model="gemini-2.5-flash", condition=condition, prompt=prompt,
                       media_path=str(clip) if clip else None, media_sha256=sha,
                       start_offset_s=start, end_offset_s=end, settings=settings)


# -- pure helpers ---------------------------------------------------------------------------------

def test_api_key_from_env_order(monkeypatch):
    monkeypatch.setenv("GOOGLE_API_KEY", "g")
    assert api_key_from_env() == "test-key-not-secret"
    monkeypatch.setenv("GEMINI_API_KEY", "  ")
    assert api_key_from_env() == "g"
    monkeypatch.delenv("GOOGLE_API_KEY")
    assert api_key_from_env() is None
    with pytest.raises(ValueError, match="GEMINI_API_KEY"):
        GeminiCaller(GeminiSettings(), None)


def test_duration_and_choice_helpers():
    assert (duration(0), duration(12.5), duration(3.25), duration(1 / 3)) == ("0s", "12.5s", "3.25s",
                                                                             "0.333s")
    schema = choice_schema(3)
    assert schema["properties"]["choice"]["enum"] == ["A", "B", "C", "none"]
    assert parse_choice('{"choice": "B"}', 3) == "B" and parse_choice('{"choice": "none"}', 3) is None
    for bad in ('{"choice": "D"}', '{"choice": "a"}', '{"pick": "A"}', "[]"):
        with pytest.raises(ValueError):
            parse_choice(bad, 3)
    assert check_json_reply('{"choice": "A"}', schema) is None
    assert "not valid JSON" in check_json_reply("A", schema)
    assert "required" in check_json_reply("{}", schema)
    assert "not one of" in check_json_reply('{"choice": "Z"}', schema)
    with pytest.raises(ValueError):
        choice_schema(0)


def test_retry_after_from_header_or_retry_info():
    body = {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "quota",
                      "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                   "retryDelay": "31s"}]}}
    assert retry_after_of(errors.ClientError(429, body)) == 31.0

    class Resp:
        headers = {"retry-after": "2"}

    assert retry_after_of(errors.ClientError(429, body, Resp())) == 2.0
    assert retry_after_of(errors.ServerError(503, {"error": {"message": "x"}})) is None


# -- text only ------------------------------------------------------------------------------------

def test_text_only_request_parses_reply_and_tokens(tmp_path):
    with GeminiTestServer(reply_fn=lambda body: "the knife is washed") as server:
        cache = CallCache(tmp_path / "c.sqlite")
        caller = GeminiCaller(settings_for(server), cache)
        req = make_request("Which object is washed after the cut?")
        (res,), stats = run_calls_sync([req], caller, cache, **FAST)
        assert res.status == "ok" and res.reply == "the knife is washed"
        assert (res.prompt_tokens, res.output_tokens) == (7, 4) and res.latency_s > 0
        assert server.uploads == 0 and server.upload_starts == 0
        body = server.generate_requests[0]
        assert request_file_uris(body) == [] and request_text(body) == req.prompt
        gen = body["generationConfig"]
        assert gen["temperature"] == 0.0 and gen["maxOutputTokens"] == 256
        row = cache.rows()[0]
        assert (row["status"], row["reply"], row["prompt_tokens"], row["output_tokens"]) == (
            "ok", "the knife is washed", 7, 4)


def test_malformed_reply_is_an_error_row(tmp_path):
    with GeminiTestServer(malformed_rate=1.0) as server:
        caller = GeminiCaller(settings_for(server), None)
        (res,), _ = run_calls_sync([make_request("q")], caller, None, **FAST)
        assert res.status == "error" and "empty response" in res.error and "no candidates" in res.error
        assert res.attempts == 1  # not a transient error: not retried


# -- media ----------------------------------------------------------------------------------------

def test_media_uploaded_once_waits_for_active_and_sends_offsets(tmp_path, media):
    with GeminiTestServer(processing_polls=3) as server:
        cache = CallCache(tmp_path / "c.sqlite")
        caller = GeminiCaller(settings_for(server), cache)
        requests = [make_request(f"question {i} about the clip", media[i % 2], start=1.0, end=3.25)
                    for i in range(12)]
        results, stats = run_calls_sync(requests, caller, cache, concurrency=6, **FAST)
        assert [r.status for r in results] == ["ok"] * 12, [r.error for r in results]
        assert server.uploads == 2 and server.upload_starts == 2  # one per distinct file
        assert server.rejected == 0  # never used before ACTIVE
        assert server.file_gets == 2 * 4  # 3 PROCESSING polls + the ACTIVE one, per file
        for body in server.generate_requests:
            part = body["contents"][0]["parts"][0]
            meta = part["videoMetadata"]
            assert (meta.get("start_offset") or meta.get("startOffset")) == "1s"
            assert (meta.get("end_offset") or meta.get("endOffset")) == "3.25s"
            assert len(request_file_uris(body)) == 1
            assert body["contents"][0]["parts"][1]["text"].startswith("question")
        assert results[0].prompt_tokens == 5 + 258
        for clip in media[:2]:
            up = cache.get_upload(sha256_file(clip))
            assert up.state == "ACTIVE" and up.mime_type == "video/mp4" and up.file_name.startswith("files/")

        # A new process (new caller) over new prompts reuses the uploads after one state check each.
        caller2 = GeminiCaller(settings_for(server), cache)
        more = [make_request(f"another question {i}", media[i % 2]) for i in range(4)]
        results, _ = run_calls_sync(more, caller2, cache, **FAST)
        assert all(r.status == "ok" for r in results)
        assert server.uploads == 2 and server.file_gets == 8 + 2

        # Expired provider files are uploaded again by a fresh caller.
        server.expire_files()
        caller3 = GeminiCaller(settings_for(server, file_wait_timeout_s=5), cache)
        results, _ = run_calls_sync([make_request("after expiry", media[0])], caller3, cache, **FAST)
        assert results[0].status == "ok" and server.uploads == 3


def test_file_expired_mid_run_is_a_non_retryable_error(tmp_path, media):
    with GeminiTestServer(processing_polls=0) as server:
        caller = GeminiCaller(settings_for(server), None)
        (first,), _ = run_calls_sync([make_request("one", media[0])], caller, None, **FAST)
        assert first.status == "ok"
        server.expire_files()  # the caller still believes the file is ACTIVE
        (res,), _ = run_calls_sync([make_request("two", media[0])], caller, None, **FAST)
        assert res.status == "error" and "400" in res.error and "FAILED_PRECONDITION" in res.error
        assert res.attempts == 1


def test_failed_processing_gives_error_rows_and_a_single_upload(tmp_path, media):
    with GeminiTestServer(processing_polls=1, fail_files=True) as server:
        cache = CallCache(tmp_path / "c.sqlite")
        caller = GeminiCaller(settings_for(server), cache)
        requests = [make_request(f"q{i}", media[0]) for i in range(5)] + [make_request("text only")]
        results, stats = run_calls_sync(requests, caller, cache, concurrency=3, **FAST)
        assert [r.status for r in results] == ["error"] * 5 + ["ok"]
        assert all("FAILED" in r.error and "Video processing failed" in r.error for r in results[:5])
        assert server.uploads == 1 and server.generate_calls == 1
        assert cache.status_counts() == {"error": 5, "ok": 1}
        assert cache.get_upload(sha256_file(media[0])).state == "FAILED"


def test_processing_timeout_is_an_error_row(tmp_path, media):
    with GeminiTestServer(processing_polls=10_000) as server:
        caller = GeminiCaller(settings_for(server, file_wait_timeout_s=0.2), None)
        (res,), _ = run_calls_sync([make_request("q", media[1])], caller, None, **FAST)
        assert res.status == "error" and "still PROCESSING" in res.error
        assert server.generate_calls == 0


def test_missing_media_file_is_an_error_row(tmp_path):
    with GeminiTestServer() as server:
        caller = GeminiCaller(settings_for(server), None)
        req = CallRequest("k", "gemini", "gemini-2.5-flash", "full", "q",
                          media_path=str(tmp_path / "nope.mp4"), media_sha256="0" * 64)
        (res,), _ = run_calls_sync([req], caller, None, **FAST)
        assert res.status == "error" and "not found" in res.error and server.uploads == 0


# -- faults ---------------------------------------------------------------------------------------

def test_retryable_http_errors_are_raised_with_retry_after(tmp_path):
    with GeminiTestServer(fault_rate=1.0, retry_after_s=0.05, seed=3) as server:
        caller = GeminiCaller(settings_for(server), None)
        seen = set()

        async def go():
            for i in range(8):
                with pytest.raises(RetryableError) as info:
                    await caller(make_request(f"q{i}"))
                seen.add((info.value.status, info.value.retry_after))

        asyncio.run(go())
        assert seen == {(429, 0.05), (500, None)}
        assert server.generate_calls == 8  # the SDK did not retry behind the runner's back


def test_injected_faults_lose_nothing_and_rerun_makes_no_calls(tmp_path, media):
    with GeminiTestServer(fault_rate=0.2, retry_after_s=0.02, latency_s=0.005, seed=7,
                          processing_polls=0) as server:
        cache = CallCache(tmp_path / "c.sqlite")
        caller = GeminiCaller(settings_for(server), cache)
        requests = [make_request(f"fault test {i}", media[i % 3] if i % 2 else None) for i in range(60)]
        results, stats = run_calls_sync(requests, caller, cache, concurrency=8, max_retries=6, **FAST)
        assert len(results) == 60 and {r.status for r in results} <= {"ok", "error"}
        assert [r.cache_key for r in results] == [r.cache_key for r in requests]
        assert server.faults > 0 and stats.retries > 0
        # One HTTP generate request per runner attempt: the SDK never retried behind its back.
        assert stats.calls_made == server.generate_calls == server.generate_ok + server.faults
        assert sum(r.status == "ok" for r in results) == server.generate_ok
        assert len(cache) == 60 and server.uploads == 3
        # Re-run: only requests that ended in error (almost surely none) are asked again.
        server.fault_rate = 0.0
        calls_before = server.generate_calls
        results2, stats2 = run_calls_sync(requests, caller, cache, **FAST)
        assert stats2.calls_made == stats.errors == server.generate_calls - calls_before
        assert stats2.cache_hits == 60 - stats.errors and all(r.status == "ok" for r in results2)


# -- judge ----------------------------------------------------------------------------------------

def test_judge_choice_structured_and_cached(tmp_path):
    def reply(body):
        prompt = request_text(body)
        return json.dumps({"choice": "none" if "nothing" in prompt else
                           "Z" if "broken" in prompt else "B"})

    with GeminiTestServer(reply_fn=reply) as server:
        cache = CallCache(tmp_path / "c.sqlite")
        caller = GeminiCaller(settings_for(server), cache)
        choice, raw, res = asyncio.run(caller.judge_choice("Which says it?", 3, cache_key="j1"))
        assert (choice, json.loads(raw), res.status) == ("B", {"choice": "B"}, "ok")
        gen = server.generate_requests[0]["generationConfig"]
        assert gen["responseMimeType"] == "application/json"
        assert gen["responseSchema"]["properties"]["choice"]["enum"] == ["A", "B", "C", "none"]
        assert cache.get("j1").status == "ok"

        again = asyncio.run(caller.judge_choice("Which says it?", 3, cache_key="j1"))
        assert again[0] == "B" and again[2].cached and server.generate_calls == 1

        choice, _, res = asyncio.run(caller.judge_choice("nothing matches", 3))
        assert choice is None and res.status == "ok"
        choice, _, res = asyncio.run(caller.judge_choice("broken server", 3))
        assert choice is None and res.status == "error" and "not one of" in res.error

        reqs = [caller.judge_request(f"item {i}", 4) for i in range(5)]
        results, _ = run_calls_sync(reqs, caller, cache, **FAST)
        assert [parse_choice(r.reply, 4) for r in results] == ["B"] * 5


def test_same_caller_across_event_loops(tmp_path):
    with GeminiTestServer() as server:
        caller = GeminiCaller(settings_for(server), None)
        for round_ in range(3):
            results, _ = run_calls_sync([make_request(f"r{round_} q{i}") for i in range(3)], caller,
                                        None, **FAST)
            assert all(r.status == "ok" for r in results)


# -- SIGKILL and resume ---------------------------------------------------------------------------

KILL_SCRIPT = r'''
import sys
from pathlib import Path

sys.path.insert(0, {repo!r})
from epic_levels_pipeline.responses.cache import CallCache, cache_key
from epic_levels_pipeline.responses.calls import CallRequest, run_calls_sync
from epic_levels_pipeline.responses.providers.gemini import GeminiCaller, GeminiSettings
from epic_levels_pipeline.responses.providers.gemini_wire import sha256_file

N = 60


def build_requests(media_dir):
    clips = sorted(Path(media_dir).glob("*.mp4"))
    out = []
    for i in range(N):
        clip = clips[i % len(clips)] if i % 4 else None
        sha = sha256_file(clip) if clip else None
        prompt = f"kill test question {{i}}"
        out.append(CallRequest(cache_key("gemini", "gemini-2.5-flash", prompt, sha, "full", {{}}),
                               "gemini", "gemini-2.5-flash", "full", prompt,
                               media_path=str(clip) if clip else None, media_sha256=sha))
    return out


def settings(base_url):
    return GeminiSettings(base_url=base_url, file_poll_interval_s=0.01, sdk_retry_attempts=1,
                          timeout_s=60)


if __name__ == "__main__":
    base_url, cache_path, media_dir = sys.argv[1:4]
    cache = CallCache(cache_path)
    run_calls_sync(build_requests(media_dir), GeminiCaller(settings(base_url), cache), cache,
                   rpm=None, concurrency=4)
'''


def _wait_for(cond, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


@pytest.mark.slow
def test_sigkill_mid_run_then_resume_answers_each_request_once(tmp_path, media):
    script = tmp_path / "kill_run.py"
    script.write_text(KILL_SCRIPT.format(repo=str(REPO)))
    ns = runpy.run_path(str(script), run_name="kill_run")
    requests = ns["build_requests"](media[0].parent)
    cache_path = tmp_path / "calls.sqlite"

    with GeminiTestServer(latency_s=0.03, processing_polls=1) as server:
        server.hold_after(20)
        proc = subprocess.Popen([sys.executable, str(script), server.base_url, str(cache_path),
                                 str(media[0].parent)], env={**os.environ})
        try:
            # All four in-flight requests are held inside the server and everything answered so
            # far is persisted: now the kill lands mid-run with requests in flight.
            _wait_for(lambda: server.held >= 4 or proc.poll() is not None, 60, "held requests")
            assert proc.poll() is None, "the run ended before it could be killed"
            probe = CallCache(cache_path)
            _wait_for(lambda: len(probe) == server.generate_ok, 10, "answers persisted")
            answered_before = len(probe)
            probe.close()
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
        assert proc.returncode == -signal.SIGKILL
        server.release(drop=True)  # the held requests die with their client, unanswered
        _wait_for(lambda: server.dropped == server.held >= 4, 10, "held requests dropped")
        assert 20 <= answered_before < 60 and server.uploads == 3

        cache = CallCache(cache_path)
        assert len(cache) == answered_before and cache.status_counts() == {"ok": answered_before}
        caller = GeminiCaller(ns["settings"](server.base_url), cache)
        results, stats = asyncio.run(run_calls(requests, caller, cache, rpm=None, concurrency=4))

        assert all(r.status == "ok" for r in results)
        assert stats.cache_hits == answered_before and stats.calls_made == 60 - answered_before
        assert server.generate_ok == 60  # each request answered exactly once overall
        assert len(cache) == 60 and cache.status_counts() == {"ok": 60}
        assert server.uploads == 3  # uploads from the killed run were reused
        prompts = server.prompts()  # includes the dropped ones, each re-sent once on resume
        assert len(prompts) == 60 + server.dropped and len(set(prompts)) == 60
