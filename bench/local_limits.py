"""Benchmark: a default ``vllm`` model against a local server — requests in flight and completed calls per minute.

A model named inline (``vllm/bench-model``, no models-file entry) takes its provider's default limits: 16
requests in flight and no request-rate limit (``responses/models_config.py``). This runs ``--requests`` calls
through the real ``openai`` SDK and the call runner, at those limits, with the SQLite call cache as a run uses it
(``--no-cache`` leaves it out), against the local OpenAI-compatible server on 127.0.0.1 (in its own process, as a
real server is, on the same cores as the client) with ``--latency-ms`` of latency per request. Two workloads, as
a run sends them:

* ``text``: every request text only (the ``no_clip`` condition);
* ``media``: every request with a clip by the default route (``video_url`` + ``input_audio``: the clip as base64
  mp4 and its track as a 16 kHz wav), ``--clip-seconds`` of synthetic video at ``--clip-size`` each, a clip per
  ``--items-per-clip`` requests (a clip × condition's items share its media).

For each it prints the limits the model resolved to, the most requests in flight at once as the server measured
them (target >= 12), both processes' CPU, and completed calls per minute with their ratio to
``concurrency / latency`` (the most the limits allow; target >= 0.85).

Usage (from the repo root): ``python bench/local_limits.py [--workload text|media|both] [--requests N]
[--latency-ms MS] [--clip-seconds S] [--clip-size WxH] [--items-per-clip K] [--no-cache] [--media-every K]``
(``--media-every K``: one mixed workload, one request in K with a clip).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from epic_levels_pipeline.responses.cache import CallCache, cache_key  # noqa: E402
from epic_levels_pipeline.responses.calls import CallRequest, run_calls_sync  # noqa: E402
from epic_levels_pipeline.responses.media import make_test_video, sha256_file  # noqa: E402
from epic_levels_pipeline.responses.models_config import inline_spec  # noqa: E402
from epic_levels_pipeline.responses.providers.registry import provider_for  # noqa: E402
from epic_levels_pipeline_tests.fakes.openai_server import OpenAITestServer  # noqa: E402

TARGET = 0.85


def serve(latency_s: float, conn) -> None:
    """The server in its own process (as a real vLLM server is): sends its base URL, then its counters when told."""
    with OpenAITestServer(models=("bench-model",), latency_s=latency_s, record=False) as server:
        conn.send(server.base_url)
        cpu = time.process_time()
        conn.recv()
        conn.send({"max_in_flight": server.max_in_flight, "chat_calls": server.chat_calls,
                   "cpu_s": time.process_time() - cpu})


def requests_for(n: int, spec, settings: dict, clips: list[Path], media_every: int, items_per_clip: int
                 ) -> list[CallRequest]:
    shas = [sha256_file(c) for c in clips]
    out = []
    for i in range(n):
        media = bool(clips) and i % media_every == 0
        j = (i // items_per_clip) % len(clips) if clips else 0
        prompt = f"[{i}] Which sound do you hear? A. a tap B. a knife C. a kettle D. a pan"
        condition = "clip" if media else "no_clip"
        sha = shas[j] if media else None
        key = cache_key("vllm", spec.model, prompt, sha, condition, settings)
        out.append(CallRequest(key, "vllm", spec.model, condition, prompt, media_path=str(clips[j]) if media else None,
                               media_sha256=sha, settings=settings))
    return out


def measure(args, label: str, media_every: int) -> bool:
    latency = args.latency_ms / 1000
    ours, theirs = multiprocessing.Pipe()
    process = multiprocessing.Process(target=serve, args=(latency, theirs), daemon=True)
    process.start()
    base_url = ours.recv()
    with tempfile.TemporaryDirectory() as tmp:
        spec = inline_spec("vllm/bench-model", base_url)
        caller = provider_for(spec)
        settings = caller.generation_settings()
        clips = []
        if media_every:
            n_clips = max(1, -(-args.requests // (args.items_per_clip * media_every)))
            clips = [make_test_video(Path(tmp) / f"clip{k}.mp4", args.clip_seconds, size=args.clip_size, rate=30)
                     for k in range(n_clips)]
        clip_bytes = clips[0].stat().st_size if clips else 0
        requests = requests_for(args.requests, spec, settings, clips, media_every or 1, args.items_per_clip)
        cache = None if args.no_cache else CallCache(Path(tmp) / "calls.sqlite")
        started, cpu = time.perf_counter(), time.process_time()
        results, _ = run_calls_sync(requests, caller, cache, rpm=spec.rpm, concurrency=spec.max_concurrency)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        if cache is not None:
            cache.close()
    ours.send("stop")
    server = ours.recv()
    process.join(10)
    ok = sum(r.status == "ok" for r in results)
    per_min = ok / elapsed * 60
    bound = spec.max_concurrency / latency * 60 if latency else float("inf")
    ratio = per_min / bound
    what = ("text only" if not media_every else "every request with a clip" if media_every == 1
            else f"one in {media_every} with a clip")
    if media_every:
        what += (f" ({len(clips)} clips of {args.clip_seconds:g} s at {args.clip_size}, {clip_bytes:,} "
                 "bytes each, + the wav)")
    print(f"[{label}] {args.requests} requests, {what}; server latency {args.latency_ms:g} ms; "
          f"{'no cache' if args.no_cache else 'through the SQLite call cache'}: {ok} ok in {elapsed:.2f} s")
    print(f"[{label}] CPU over {elapsed:.2f} s wall: client process {cpu:.2f} s ({cpu / elapsed:.0%} of one core), "
          f"server process {server['cpu_s']:.2f} s ({server['cpu_s'] / elapsed:.0%}); near 100 % means that process, "
          "not the limits, sets the pace")
    print(f"[{label}] max in flight (measured by the server): {server['max_in_flight']} (target >= 12)")
    print(f"[{label}] completed calls per minute: {per_min:,.0f}; concurrency / latency = {bound:,.0f} per minute; "
          f"ratio {ratio:.3f} (target >= {TARGET})", flush=True)
    return ok == args.requests


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", choices=("text", "media", "both"), default="both")
    ap.add_argument("--requests", type=int, default=1200)
    ap.add_argument("--latency-ms", type=float, default=150.0)
    ap.add_argument("--clip-seconds", type=float, default=30.0)
    ap.add_argument("--clip-size", default="456x256")
    ap.add_argument("--items-per-clip", type=int, default=100, help="requests sharing one clip's media")
    ap.add_argument("--no-cache", action="store_true", help="leave out the SQLite call cache")
    ap.add_argument("--media-every", type=int, default=None, help="one mixed workload: one request in K with a clip")
    args = ap.parse_args(argv)
    for var in ("EPIC_LEVELS_RPM", "EPIC_LEVELS_CONCURRENCY", "VLLM_BASE_URL"):
        os.environ.pop(var, None)
    spec = inline_spec("vllm/bench-model", "http://127.0.0.1:1/v1")
    print(f"model vllm/bench-model (inline, provider defaults): max_concurrency {spec.max_concurrency}, "
          f"rpm {spec.rpm:g} (0 = no request-rate limit); load average before: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.media_every is not None:
        runs = [(f"one in {args.media_every}", args.media_every)]
    else:
        runs = [(w, 1 if w == "media" else 0) for w in ("text", "media") if args.workload in (w, "both")]
    ok = all([measure(args, label, every) for label, every in runs])
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
