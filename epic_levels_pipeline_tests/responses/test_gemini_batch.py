"""Batch mode on the real google-genai SDK against the local server: inlined requests and a JSONL
file, per-item errors as error rows, progress lines, job names recorded before waiting, and a process
SIGKILLed while polling that resumes the same job — nothing submitted twice, each item answered once.
"""

from __future__ import annotations

import os
import runpy
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from epic_levels_pipeline.responses.cache import CallCache, cache_key
from epic_levels_pipeline.responses.calls import CallRequest
from epic_levels_pipeline.responses.providers.gemini_wire import sha256_file

from .test_gemini import _wait_for, media  # noqa: F401 (media: a fixture)
from .test_gemini_caching import caller_for, dummy_key  # noqa: F401 (dummy_key: an autouse fixture)

try:
    from epic_levels_pipeline_tests.fakes.gemini_server import GeminiTestServer, request_file_uris
except ImportError:  # tests dir is not a package; pytest puts it on sys.path itself
    from gemini_server import GeminiTestServer, request_file_uris

REPO = Path(__file__).resolve().parents[2]
POLL = dict(poll_interval_s=0.01, max_poll_interval_s=0.05)


def build(media: list[Path], n: int, fail: set[int] = frozenset()) -> list[CallRequest]:
    out = []
    for i in range(n):
        clip = media[i % len(media)] if i % 3 else None
        sha = sha256_file(clip) if clip else None
        prompt = f"batch question {i}" + (" BATCH-ITEM-FAILS" if i in fail else "")
        out.append(CallRequest(cache_key("gemini", "gemini-2.5-flash", prompt, sha, "clip", {}), "gemini",
                               "gemini-2.5-flash", "clip", prompt, media_path=str(clip) if clip else None,
                               media_sha256=sha, start_offset_s=0.0 if clip else None,
                               end_offset_s=5.0 if clip else None))
    return out


def test_batch_end_to_end_inline_with_per_item_errors(tmp_path, media):
    lines: list[str] = []
    with GeminiTestServer(processing_polls=0, batch_pending_polls=1, batch_running_polls=2) as server, \
            CallCache(tmp_path / "calls.sqlite") as cache:
        caller = caller_for(server, cache)
        requests = build(media, 12, fail={5})
        requests.append(requests[0])  # a duplicate key is submitted once, answered in both places
        results, stats = caller.run_batch(requests, cache, progress=lines.append, **POLL)

        assert len(results) == 13 and results[12] == results[0]
        assert [r.status for r in results].count("error") == 1 and results[5].status == "error"
        assert "batch item error" in results[5].error and "per-item error" in results[5].error
        assert all(r.reply.startswith("echo: batch question") for i, r in enumerate(results) if i != 5)
        assert all(r.route == "batch" and r.attempts == 1 for r in results)
        assert server.batch_creates == 1 and server.batch_items == 12 and server.generate_calls == 0
        assert stats.submitted_jobs == 1 and stats.calls_made == 12 and stats.jobs[0]["source"] == "inline"
        assert stats.jobs[0]["state"] == "JOB_STATE_SUCCEEDED" and stats.jobs[0]["done"]
        assert lines[0].startswith("batch: 1 jobs (1 pending), 0/12 items done")
        assert lines[-1] == "batch: 1 jobs (1 succeeded), 12/12 items done"
        # the media part came first, the item text last, in every media item of the job
        job = next(iter(server.batches.values()))
        media_items = [it["request"] for it in job["items"] if request_file_uris(it["request"])]
        assert len(media_items) == 8 and server.uploads == 2
        assert all(it["contents"][0]["parts"][-1]["text"].startswith("batch question") for it in media_items)
        assert cache.status_counts() == {"ok": 11, "error": 1}
        (record,) = cache.batch_jobs()
        assert record.done and record.state == "JOB_STATE_SUCCEEDED" and len(record.items) == 12

        # the next run serves the answers from the cache and submits only the error row again
        results2, stats2 = caller.run_batch(requests, cache, progress=None, **POLL)
        assert stats2.cache_hits == 12 and stats2.calls_made == 1 and server.batch_creates == 2
        assert results2[5].status == "error" and server.batch_items == 13


def test_batch_over_the_inline_limit_goes_through_a_jsonl_file(tmp_path, media):
    with GeminiTestServer(processing_polls=0) as server, CallCache(tmp_path / "calls.sqlite") as cache:
        caller = caller_for(server, cache)
        results, stats = caller.run_batch(build(media, 6), cache, inline_limit_bytes=100,
                                          progress=None, **POLL)
        assert all(r.status == "ok" for r in results), [r.error for r in results]
        assert stats.jobs[0]["source"].startswith("files/") and server.downloads == 1
        job = next(iter(server.batches.values()))
        assert job["from_file"] and len(job["items"]) == 6
        assert all(r.output_tokens >= 1 and r.prompt_tokens >= 1 for r in results)


KILL_SCRIPT = r'''
import sys
sys.path.insert(0, {repo!r})
from pathlib import Path
from epic_levels_pipeline.responses.cache import CallCache
from epic_levels_pipeline.responses.providers.gemini import GeminiCaller, GeminiSettings
from epic_levels_pipeline_tests.responses.test_gemini_batch import build

if __name__ == "__main__":
    base_url, cache_path, media_dir = sys.argv[1:4]
    media = sorted(Path(media_dir).glob("*.mp4"))
    cache = CallCache(cache_path)
    caller = GeminiCaller(GeminiSettings(base_url=base_url, file_poll_interval_s=0.01,
                                         sdk_retry_attempts=1, timeout_s=30), cache)
    caller.run_batch(build(media, 20), cache, poll_interval_s=0.02, max_poll_interval_s=0.05)
    print("finished")
'''


@pytest.mark.slow
def test_sigkill_while_waiting_then_resume_submits_nothing_new(tmp_path, media):
    script = tmp_path / "batch_run.py"
    script.write_text(KILL_SCRIPT.format(repo=str(REPO)))
    cache_path = tmp_path / "calls.sqlite"
    with GeminiTestServer(processing_polls=0, batch_pending_polls=1) as server:
        server.hold_batches()  # the job stays RUNNING: the process is killed while polling it
        proc = subprocess.Popen([sys.executable, str(script), server.base_url, str(cache_path),
                                 str(media[0].parent)], stdout=subprocess.PIPE, text=True)
        try:
            _wait_for(lambda: server.batch_gets >= 4 or proc.poll() is not None, 60, "polling")
            assert proc.poll() is None, "the batch run ended before it could be killed"
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
        assert proc.returncode == -signal.SIGKILL
        assert server.batch_creates == 1 and server.batch_items == 0
        with CallCache(cache_path) as probe:
            (open_job,) = probe.batch_jobs(open_only=True)  # recorded before waiting
            assert len(open_job.items) == 20 and len(probe) == 0
        server.release_batches()

        with CallCache(cache_path) as cache:
            caller = caller_for(server, cache)
            lines: list[str] = []
            requests = build(media, 20)
            results, stats = caller.run_batch(requests, cache, progress=lines.append, **POLL)
            assert all(r.status == "ok" for r in results), [r.error for r in results]
            assert server.batch_creates == 1  # nothing submitted again
            assert stats.resumed_jobs == 1 and stats.submitted_jobs == 0 and stats.calls_made == 0
            assert server.batch_items == 20  # each item answered exactly once
            assert len(cache) == 20 and cache.status_counts() == {"ok": 20}
            assert cache.batch_jobs(open_only=True) == []
            assert lines[-1] == "batch: 1 jobs (1 succeeded), 20/20 items done"
            assert server.uploads == 2  # the killed run's uploads were reused
            # a third run asks nothing at all
            _, stats3 = caller.run_batch(requests, cache, progress=None, **POLL)
            assert stats3.cache_hits == 20 and server.batch_creates == 1
