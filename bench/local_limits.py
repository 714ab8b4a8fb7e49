"""Benchmark: a default ``vllm`` model against a local server — requests in flight and completed calls per minute.

A model named inline (``vllm/bench-model``, no models-file entry) takes its provider's default limits: 16
requests in flight and no request-rate limit (``responses/models_config.py``). This runs ``--requests`` calls
(text only by default; ``--media-every K`` sends one in K with a synthetic clip by the default route, video_url +
input_audio) through the real ``openai`` SDK and the call runner, at those limits, against the local
OpenAI-compatible server on 127.0.0.1 (in its own process, as a real server is) with ``--latency-ms`` of latency per request, and prints:

* the limits the model resolved to;
* the most requests in flight at once, as the server measured them (target >= 12);
* completed calls per minute, and their ratio to ``concurrency / latency`` (the most the limits allow;
  target >= 0.9).

Usage (from the repo root): ``python bench/local_limits.py [--requests N] [--latency-ms MS] [--media-every K]``.
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

from epic_levels_pipeline.responses.cache import cache_key  # noqa: E402
from epic_levels_pipeline.responses.calls import CallRequest, run_calls_sync  # noqa: E402
from epic_levels_pipeline.responses.media import make_test_video, sha256_file  # noqa: E402
from epic_levels_pipeline.responses.models_config import inline_spec  # noqa: E402
from epic_levels_pipeline.responses.providers.base import provider_for  # noqa: E402
from epic_levels_pipeline_tests.fakes.openai_server import OpenAITestServer  # noqa: E402


def serve(latency_s: float, conn) -> None:
    """The server in its own process (as a real vLLM server is): sends its base URL, then its counters when told."""
    with OpenAITestServer(models=("bench-model",), latency_s=latency_s) as server:
        conn.send(server.base_url)
        cpu = time.process_time()
        conn.recv()
        conn.send({"max_in_flight": server.max_in_flight, "chat_calls": server.chat_calls,
                   "cpu_s": time.process_time() - cpu})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=1200)
    ap.add_argument("--latency-ms", type=float, default=150.0)
    ap.add_argument("--media-every", type=int, default=0, help="one request in K carries a clip (0: none)")
    args = ap.parse_args(argv)
    for var in ("EPIC_LEVELS_RPM", "EPIC_LEVELS_CONCURRENCY", "VLLM_BASE_URL"):
        os.environ.pop(var, None)
    latency = args.latency_ms / 1000
    ours, theirs = multiprocessing.Pipe()
    process = multiprocessing.Process(target=serve, args=(latency, theirs), daemon=True)
    process.start()
    base_url = ours.recv()
    with tempfile.TemporaryDirectory() as tmp:
        spec = inline_spec("vllm/bench-model", base_url)
        caller = provider_for(spec)
        settings = caller.generation_settings()
        clip = make_test_video(Path(tmp) / "clip.mp4", 4.0) if args.media_every else None
        sha = sha256_file(clip) if clip else None
        requests = []
        for i in range(args.requests):
            media = bool(clip) and i % args.media_every == 0
            prompt = f"[{i}] Which sound do you hear?"
            condition = "clip" if media else "no_clip"
            key = cache_key("vllm", spec.model, prompt, sha if media else None, condition, settings)
            requests.append(CallRequest(key, "vllm", spec.model, condition, prompt,
                                        media_path=str(clip) if media else None,
                                        media_sha256=sha if media else None, settings=settings))
        started, cpu = time.perf_counter(), time.process_time()
        results, stats = run_calls_sync(requests, caller, None, rpm=spec.rpm, concurrency=spec.max_concurrency)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    ours.send("stop")
    server = ours.recv()
    process.join(10)
    ok = sum(r.status == "ok" for r in results)
    per_min = ok / elapsed * 60
    bound = spec.max_concurrency / latency * 60 if latency else float("inf")
    print(f"model vllm/bench-model (inline, provider defaults): max_concurrency {spec.max_concurrency}, "
          f"rpm {spec.rpm:g} (0 = no request-rate limit)")
    print(f"{args.requests} requests ({'text only' if not clip else f'one in {args.media_every} with a clip'}), "
          f"server latency {args.latency_ms:g} ms: {ok} ok in {elapsed:.2f} s")
    print(f"CPU over {elapsed:.2f} s wall: client process {cpu:.2f} s ({cpu / elapsed:.0%} of one core), server "
          f"process {server['cpu_s']:.2f} s ({server['cpu_s'] / elapsed:.0%}); near 100 % means that process, not "
          "the limits, sets the pace")
    print(f"max in flight (measured by the server): {server['max_in_flight']} (target >= 12)")
    print(f"completed calls per minute: {per_min:,.0f}; concurrency / latency = {bound:,.0f} per minute; "
          f"ratio {per_min / bound:.3f} (target >= 0.9)")
    return 0 if ok == args.requests else 1


if __name__ == "__main__":
    raise SystemExit(main())
