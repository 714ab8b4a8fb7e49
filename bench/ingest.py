"""Benchmark: validating and loading the full staged annotation files.

Runs ``validate_paths`` and ``load_annotations`` over the staged source folder (default
``<repo>/../shared/data``) and prints, per table, the rows loaded; the wall time of each (best and median of
``--repeat`` runs); peak Python allocation during one load (``tracemalloc``, measured in a separate run so
tracing does not slow the timed ones) and the process's peak resident memory (``ru_maxrss``); and the
ratio of load time to a baseline measured in the same process: just reading the bytes of the same
annotation files (page cache warm, as for the timed runs); and, as a stricter second baseline, the time to
only parse them (pandas ``read_csv`` as strings, ``json.loads``) with no validation or typing.

Skips cleanly (prints why, exits 0) when the staged files are absent.

Usage (from the repo root): ``python bench/ingest.py [--source DIR] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import pandas as pd  # noqa: E402

from epic_levels_pipeline.annotations.readers import TABLE_COLUMNS, discover, load_annotations, validate_paths  # noqa: E402


def timed(fn, repeat: int) -> tuple[list[float], object]:
    times, value = [], None
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - started)
    return times, value


def read_bytes(files: list[Path]) -> int:
    return sum(len(f.read_bytes()) for f in files)


def parse_only(files: list[Path]) -> int:
    """A second, stricter baseline: only parse the files (CSV as strings with pandas, JSON with json)."""
    rows = 0
    for f in files:
        if f.suffix == ".json":
            rows += len(json.loads(f.read_bytes()))
        else:
            rows += len(pd.read_csv(io.BytesIO(f.read_bytes()), dtype=str, keep_default_na=False))
    return rows


def maxrss_mib() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 1024 / 1024 if sys.platform == "darwin" else rss / 1024  # bytes on macOS, KiB on Linux


def fmt(times: list[float]) -> str:
    return f"best {min(times):.3f} s, median {statistics.median(times):.3f} s"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    source = Path(args.source)
    if not source.is_dir():
        print(f"skipped: staged annotation files not found at {source} (nothing to benchmark)")
        return 0
    files, skipped = discover([source])
    if not files:
        print(f"skipped: no annotation files under {source}")
        return 0
    size = sum(f.stat().st_size for f in files)
    print(f"source: {source}  ({len(files)} annotation files, {size / 2**20:.1f} MiB; {len(skipped)} other files skipped)")
    repeat = max(1, args.repeat)
    rss_start = maxrss_mib()

    read_bytes(files)  # warm the page cache so the baseline and the loads see the same state
    base_times, _ = timed(lambda: read_bytes(files), max(repeat, 5))
    baseline = min(base_times)
    print(f"baseline (read the files' bytes): {fmt(base_times)}")
    parse_times, _ = timed(lambda: parse_only(files), repeat)
    parse_baseline = min(parse_times)
    print(f"second baseline (parse only: pandas read_csv as strings / json.loads): {fmt(parse_times)}")

    val_times, (problems, vfiles, _) = timed(lambda: validate_paths([source]), repeat)
    errors = [p for p in problems if p.severity == "error"]
    dropped = [p for p in problems if p.severity == "dropped"]
    print(f"validate_paths: {fmt(val_times)}  ({len(vfiles)} files, {len(errors)} errors, {len(dropped)} rows dropped)")

    load_times, ann = timed(lambda: load_annotations(source), repeat)
    print(f"load_annotations: {fmt(load_times)}")

    print("\nrows per table:")
    total = 0
    for name in TABLE_COLUMNS:
        frame = ann.table(name)
        total += len(frame)
        print(f"  {name:<14} {len(frame):>9,}  ({frame.memory_usage(deep=True).sum() / 2**20:6.1f} MiB in pandas)")
    print(f"  {'total':<14} {total:>9,}")
    for reason, n in sorted(ann.dropped_counts().items(), key=lambda kv: -kv[1]):
        print(f"  dropped: {n:>4}  {reason}")
    rss_after = maxrss_mib()
    del ann
    gc.collect()

    tracemalloc.start()
    load_annotations(source)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    best_load = min(load_times)
    print("\nfigures:")
    print(f"  load time           {best_load:.3f} s (best of {repeat}); {total / best_load:,.0f} rows/s; "
          f"{size / 2**20 / best_load:.1f} MiB/s")
    print(f"  validate time       {min(val_times):.3f} s (best of {repeat})")
    print(f"  read-bytes baseline {baseline * 1000:.1f} ms")
    print(f"  ratio load / baseline       {best_load / baseline:,.0f}x")
    print(f"  ratio validate / baseline   {min(val_times) / baseline:,.0f}x")
    print(f"  parse-only baseline {parse_baseline:.3f} s; ratio load / parse-only {best_load / parse_baseline:.1f}x")
    print(f"  peak traced allocation during one load (tracemalloc): {peak / 2**20:.1f} MiB "
          f"({peak / max(size, 1):.1f}x the files' size)")
    print(f"  peak resident memory (ru_maxrss): {rss_after:.0f} MiB after the timed runs "
          f"({rss_after - rss_start:+.0f} MiB over the {rss_start:.0f} MiB at start, imports included)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
