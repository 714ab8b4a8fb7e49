"""Benchmark: model-call throughput under a rate limit, with injected faults, then a cached re-run.

Runs each provider's real SDK through its caller and run_calls against its local test server on
127.0.0.1 — no network, no API key needed (a dummy one is passed):

* ``gemini``: google-genai through GeminiCaller against the Gemini-compatible server (media files
  are uploaded through the Files API);
* ``openai``: the openai SDK through OpenAICompatCaller (as ``vllm/bench-model``) against the
  OpenAI-compatible server; media requests send the clip as a base64 ``video_url`` part plus its
  wav as ``input_audio`` (real synthetic mp4s, so ffmpeg cuts the wav once per file).

Default: both providers, each with 2,000 requests (one in four with a media file, 20 distinct
files), 150 ms server latency, a limit of 1,200 requests per minute, concurrency 16, 5 % of model
requests answered 429/5xx. Takes about 2 minutes per provider. Prints, per provider:

* achieved HTTP attempts per minute as a ratio of the limit (target >= 0.9 for Gemini, >= 0.95
  for the OpenAI-compatible provider) — what the limiter governs; retries take slots like first
  attempts;
* completed requests per minute as a ratio of the limit (at most ~1 - fault share);
* retries, errors, uploads;
* the re-run's call count (target 0: everything is served from the cache).

Usage (from the repo root): ``python bench/responses.py [--provider gemini|openai|both]
[--requests N] [--latency-ms MS] [--rpm R] [--faults F] [--concurrency C] [--seed S]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from epic_levels_pipeline.responses.cache import CallCache, cache_key  # noqa: E402
from epic_levels_pipeline.responses.calls import CallRequest, run_calls  # noqa: E402
from epic_levels_pipeline.responses.providers.gemini import GeminiCaller, GeminiSettings  # noqa: E402
from epic_levels_pipeline.responses.providers.gemini_wire import sha256_file  # noqa: E402
from epic_levels_pipeline.responses.media import make_test_video  # noqa: E402
from epic_levels_pipeline.responses.providers.openai_compat import OpenAICompatCaller, default_settings  # noqa: E402
from epic_levels_pipeline.responses.providers.registry import identify  # noqa: E402
from epic_levels_pipeline_tests.fakes.gemini_server import GeminiTestServer  # noqa: E402
from epic_levels_pipeline_tests.fakes.openai_server import OpenAITestServer  # noqa: E402

MODEL = "gemini-2.5-flash"


def build_requests(n: int, clips: list[Path], caller, window: tuple[float, float] | None = None) -> list[CallRequest]:
    """``n`` requests, one in four with one of ``clips`` (``window`` seconds of it), keyed as the pipeline keys
    them: the caller's provider, model and generation settings (its identity included)."""
    settings = caller.generation_settings()
    shas = [sha256_file(c) for c in clips]
    out = []
    for i in range(n):
        with_media = clips and i % 4 == 0
        j = (i // 4) % len(clips) if clips else 0
        sha = shas[j] if with_media else None
        condition = "clip" if with_media else "no_clip"
        start, end = window if with_media and window else (None, None)
        prompt = f"Bench question {i}: what happens right after the tap is turned off?"
        out.append(CallRequest(
            cache_key=cache_key(caller.provider, caller.model, prompt, sha, condition, settings),
            responder=caller.provider, model=caller.model, condition=condition, prompt=prompt,
            media_path=str(clips[j]) if with_media else None, media_sha256=sha,
            start_offset_s=start, end_offset_s=end, settings=settings))
    return out


def measure(args, caller, requests: list[CallRequest], cache: CallCache, server_calls, target: float,
            describe) -> bool:
    """Run ``requests`` twice through ``run_calls`` and print the figures; ``server_calls()`` counts the
    model calls the server received, ``describe()`` adds the server's own counters to the first line."""
    run = dict(rpm=args.rpm, concurrency=args.concurrency, max_retries=5, base_delay=0.5,
               max_delay=30, seed=args.seed)
    print(f"{args.requests} requests, latency {args.latency_ms:g} ms, limit {args.rpm:g}/min, "
          f"concurrency {args.concurrency}, faults {args.faults:.0%}", flush=True)
    results, stats = asyncio.run(run_calls(requests, caller, cache, **run))
    minutes = stats.elapsed_s / 60
    attempts_rpm = stats.calls_made / minutes
    done_rpm = (stats.ok + stats.errors) / minutes
    ratio = attempts_rpm / args.rpm
    print(f"run 1: {stats.elapsed_s:.1f} s, {stats.calls_made} attempts, ok {stats.ok}, "
          f"errors {stats.errors}, retries {stats.retries}, {describe()}")
    print(f"  attempts/min {attempts_rpm:.0f} = {ratio:.3f} of the limit "
          f"(target >= {target:g}: {'PASS' if ratio >= target else 'FAIL'})")
    print(f"  completed requests/min {done_rpm:.0f} = {done_rpm / args.rpm:.3f} of the limit")
    lost = args.requests - len(results)
    print(f"  lost requests: {lost}; cache rows {len(cache)} {cache.status_counts()}")

    before = server_calls()
    _, stats2 = asyncio.run(run_calls(requests, caller, cache, **run))
    rerun_calls = server_calls() - before
    print(f"run 2 (re-run): {stats2.elapsed_s:.2f} s, cache hits {stats2.cache_hits}, "
          f"calls {stats2.calls_made}, server model calls {rerun_calls} "
          f"(target 0 when run 1 had no errors: {'PASS' if rerun_calls == stats.errors else 'FAIL'})")
    cache.close()
    return ratio >= target and lost == 0 and rerun_calls == stats.errors


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--provider", choices=("gemini", "openai", "both"), default="both")
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--latency-ms", type=float, default=150)
    ap.add_argument("--rpm", type=float, default=1200)
    ap.add_argument("--faults", type=float, default=0.05, help="share of 429/500 answers (0..1)")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--media-files", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    ok = True
    if args.provider in ("gemini", "both"):
        ok = bench_gemini(args) and ok
    if args.provider in ("openai", "both"):
        ok = bench_openai(args) and ok
    return 0 if ok else 1


def bench_gemini(args) -> bool:
    """The Gemini figure: GeminiCaller against the Gemini-compatible server (target >= 0.9 of the limit)."""
    print("== gemini (google-genai SDK, Files API uploads)", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-responses-") as tmp, GeminiTestServer(
            latency_s=args.latency_ms / 1000, fault_rate=args.faults, retry_after_s=1.0,
            processing_polls=1, seed=args.seed) as server:
        clips = []
        for k in range(args.media_files):
            p = Path(tmp) / f"clip{k:03d}.mp4"
            p.write_bytes(os.urandom(64_000))
            clips.append(p)
        cache = CallCache(Path(tmp) / "calls.sqlite")
        caller = GeminiCaller(GeminiSettings(model=MODEL, base_url=server.base_url, file_poll_interval_s=0.2),
                              cache, api_key="bench-dummy-key")
        requests = build_requests(args.requests, clips, caller, window=(2.0, 14.0))
        return measure(args, caller, requests, cache, lambda: server.generate_calls, 0.9,
                       lambda: f"server faults {server.faults}, uploads {server.uploads}")


def bench_openai(args) -> bool:
    """The OpenAI-compatible figure: OpenAICompatCaller (video_url + input_audio) against the
    OpenAI-compatible server. Target: attempts/min >= 0.95 of the limit, 0 calls on re-run."""
    print("== openai-compatible (openai SDK, vllm/bench-model, video_url + input_audio)", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-responses-openai-") as tmp, OpenAITestServer(
            latency_s=args.latency_ms / 1000, fault_rate=args.faults, retry_after_s=1.0,
            models=("bench-model",), seed=args.seed) as server:
        clips = [make_test_video(Path(tmp) / f"clip{k:03d}.mp4", 2.0, tone_hz=220.0 + 20 * k)
                 for k in range(args.media_files)]
        identity = identify("vllm/bench-model", server.base_url)
        caller = OpenAICompatCaller(identity, default_settings(
            identity, video_route="video_url", audio_route="input_audio",
            media_memo_entries=2 * args.media_files), api_key="bench-dummy-key")
        cache = CallCache(Path(tmp) / "calls.sqlite")
        requests = build_requests(args.requests, clips, caller)

        def describe() -> str:
            media_sent = sum(1 for b in server.chat_bodies()
                             if any(isinstance(p, dict) and p.get("type") == "video_url"
                                    for m in b.get("messages") or [] for p in m.get("content") or []))
            return f"server faults {server.faults}, requests with video {media_sent}"

        return measure(args, caller, requests, cache, lambda: server.chat_calls, 0.95, describe)


if __name__ == "__main__":
    sys.exit(main())
