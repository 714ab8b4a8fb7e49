"""Benchmark: what context caching and batch mode do to the bill over the bundled clips.

Two parts, both printed:

1. **Estimate** (:func:`epic_levels_pipeline.estimate.caching_and_batch`) over every bundled clip's items:
   per model, billed input tokens with caching as a share of without (cached tokens count at the
   documented 10 % of the input price; target <= 0.35), and the cost direct, with caching, in batch
   mode and both.
2. **Measured** through the real code path: the items of the first ``--clips`` clips (condition ``clip``)
   sent by :class:`GeminiCaller` with the real google-genai SDK to the local Gemini-compatible server
   (which counts ``--tokens-per-s`` tokens per second of video window and reports
   ``cachedContentTokenCount``), once with context caching and once without; billed input =
   uncached prompt tokens + 10 % of cached ones + each cache's tokens once at creation. Then the same
   items in batch mode: jobs, items, and the batch price of the direct run's tokens.

Prices and discounts are the assumptions stated in ``epic_levels_pipeline/estimate.py`` (Google's
published Gemini API prices: 2.5-flash input $0.30, audio $1.00, output $2.50 per 1M; cached input 10 %
of input; storage $1.00 per 1M tokens per hour; batch 50 %). No network, no API key (a dummy one).

Usage (from the repo root): ``python bench/cost.py [--models gemini-2.5-flash,...] [--clips N]
[--tokens-per-s T] [--media-resolution low|medium|high] [--fps F]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from epic_levels_pipeline.annotations.clips import Clip  # noqa: E402
from epic_levels_pipeline.estimate import (CACHED_INPUT_SHARE, BATCH_SHARE, DEFAULT_PRICES, caching_and_batch,  # noqa: E402
                                           estimate, load_items, render_caching_and_batch)
from epic_levels_pipeline.responses.cache import CallCache, cache_key  # noqa: E402
from epic_levels_pipeline.responses.calls import CallRequest, run_calls_sync  # noqa: E402
from epic_levels_pipeline.responses.providers.gemini import GeminiCaller, GeminiSettings  # noqa: E402
from epic_levels_pipeline.responses.providers.gemini_wire import sha256_file  # noqa: E402
from epic_levels_pipeline.settings import Paths  # noqa: E402
from epic_levels_pipeline_tests.fakes.gemini_server import GeminiTestServer  # noqa: E402

MODEL = "gemini-2.5-flash"


def measured(items, n_clips: int, tokens_per_s: float, workdir: Path) -> None:
    keys = sorted(items["clip_key"].unique())[:n_clips]
    chosen = items[items["clip_key"].isin(keys)]
    requests, seen = [], set()
    for clip_key, group in chosen.groupby("clip_key"):
        clip = Clip.from_key(clip_key)
        path = workdir / f"{clip_key}.mp4"
        path.write_bytes(os.urandom(4096))  # stands for the cut clip: the server counts tokens by window
        sha = sha256_file(path)
        for prompt in group["prompt"]:
            if prompt in seen:  # the same prompt twice is one call (one cache key)
                continue
            seen.add(prompt)
            requests.append(CallRequest(cache_key("gemini", MODEL, prompt, sha, "clip", {}), "gemini", MODEL, "clip",
                                        prompt, media_path=str(path), media_sha256=sha, start_offset_s=0.0,
                                        end_offset_s=float(clip.duration_s)))
    billed = {}
    with GeminiTestServer(media_tokens_per_s=tokens_per_s, processing_polls=0) as server:
        for mode in ("direct", "caching"):
            with CallCache(workdir / f"{mode}.sqlite") as cache:
                caller = GeminiCaller(GeminiSettings(base_url=server.base_url, file_poll_interval_s=0.01,
                                                     context_cache=mode == "caching"), cache, api_key="bench")
                creates_before = server.cache_creates
                results, _ = run_calls_sync(requests, caller, cache, rpm=None, concurrency=8)
                created = sum(c.token_count for c in cache.context_caches())
                caller.end_run()
                prompt = sum(r.prompt_tokens for r in results)
                cached = sum(r.cached_tokens for r in results)
                billed[mode] = prompt - cached + CACHED_INPUT_SHARE * cached + created
                bad = sum(r.status != "ok" for r in results)
                print(f"  {mode:<8} {len(results):,} calls ({bad} not ok), prompt tokens {prompt:,}, cached {cached:,}, "
                      f"caches created {server.cache_creates - creates_before}, billed input tokens {billed[mode]:,.0f}")
        share = billed["caching"] / billed["direct"]
        print(f"  measured billed input with caching / without: {share:.3f} (target <= 0.35)")
        with CallCache(workdir / "batch.sqlite") as cache:
            caller = GeminiCaller(GeminiSettings(base_url=server.base_url, file_poll_interval_s=0.01), cache,
                                  api_key="bench")
            results, stats = caller.run_batch(requests, cache, poll_interval_s=0.01, max_poll_interval_s=0.05,
                                              progress=None)
            bad = sum(r.status != "ok" for r in results)
            print(f"  batch    {stats.progress_line()}; {bad} not ok; billed input tokens {billed['direct']:,.0f} "
                  f"at {BATCH_SHARE:.0%} of the price = {BATCH_SHARE * billed['direct']:,.0f} direct-price tokens")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(m for m in DEFAULT_PRICES if m.startswith("gemini-2.5")))
    ap.add_argument("--clips", type=int, default=3, help="clips sent through the test server (measured part)")
    ap.add_argument("--tokens-per-s", type=float, default=290.0)
    ap.add_argument("--media-resolution", default=None)
    ap.add_argument("--fps", type=float, default=None)
    args = ap.parse_args()
    os.environ.setdefault("GEMINI_API_KEY", "bench-dummy-key")

    paths = Paths.default()
    items, _ = load_items(paths)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    frame = estimate(paths, models, items=items, media_resolution=args.media_resolution, fps=args.fps, assume_media=True)
    print(f"Estimate over the bundled clips ({frame.attrs['clips']} clips, {len(items):,} items):")
    table = caching_and_batch(frame)
    print(render_caching_and_batch(table))
    for row in table[table["mode"] == "caching"].itertuples(index=False):
        print(f"  {row.model}: billed input tokens with caching / without = {row.input_share:.3f} (target <= 0.35); "
              f"cost {row.cost_share:.3f} of direct")
    print()
    print(f"Measured through the test server ({args.clips} clips, condition clip, {args.tokens_per_s:g} tokens/s):")
    with tempfile.TemporaryDirectory() as tmp:
        measured(items, args.clips, args.tokens_per_s, Path(tmp))


if __name__ == "__main__":
    main()
