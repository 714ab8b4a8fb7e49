"""Benchmark: the same materialization through the distributed profile with 1 and with 2 Celery workers.

For each worker count, a fresh local cluster (``epic_levels_pipeline_tests/fakes/cluster.py``: redis-server,
PostgreSQL in a temporary directory, N workers of one run each, the Dagster daemon, on ``deploy/distributed/``)
materializes the manifest's first N clips (``--clips``, default 6) on a temporary copy of the bundled data with
the offline responders: ``orchestration.distributed.run_distributed`` (annotation tables, every clip's run through the
queue, then the cross-clip tables and the warehouse writer). Cluster start-up is not timed.

Prints each wall time, the runs each worker took, the speed-up (1 worker / 2 workers), and checks that both
warehouses hold the same rows (digest of questions, verdicts and scores; response row count). On 2 cores
expect little speed-up: the point is that the runs spread and nothing is lost.

Usage (from the repo root, with the dev or distributed extras and redis-server installed):
``python bench/distributed.py [--clips N]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from epic_levels_pipeline.annotations.clip_keys import read_manifest  # noqa: E402
from epic_levels_pipeline.orchestration.distributed import run_distributed  # noqa: E402
from epic_levels_pipeline.storage.views import query, table_digest  # noqa: E402
from epic_levels_pipeline_tests.fakes.cluster import LocalCluster  # noqa: E402

sys.path.insert(0, str(REPO / "bench"))
from orchestration import QUIET, offline_process, temp_project  # noqa: E402


def one(workers: int, clips: int, tmp: Path) -> dict:
    paths = temp_project(tmp / f"w{workers}", clips)
    os.environ["EPIC_LEVELS_HOME"] = str(paths.root)
    keys = [c.key for c in read_manifest(paths.manifest)]
    with LocalCluster(paths.root, workers=workers) as cluster:
        instance = cluster.instance()
        cluster.wait_for_workers(instance)
        started = time.monotonic()
        report = run_distributed(instance, REPO / "workspace.yaml", paths, keys, run_config=QUIET, timeout_s=3600,
                                 log=lambda *_: None)
        seconds = time.monotonic() - started
        per_worker = Counter(instance.run_launcher.worker_of(r) for r in instance.get_runs())
    return {"seconds": seconds, "runs": report.runs, "failed": report.failed, "per_worker": dict(per_worker),
            "digest": {t: table_digest(paths.warehouse, t) for t in ("questions", "verdicts", "scores")},
            "responses": int(query(paths.warehouse, "SELECT count(*) AS n FROM responses")["n"][0]),
            "clips": len(keys)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clips", type=int, default=6, help="the manifest's first N clips")
    args = ap.parse_args(argv)
    if why := LocalCluster.unavailable():
        print(f"skipped: {why}")
        return 0
    offline_process()
    with tempfile.TemporaryDirectory(prefix="bench-distributed-") as tmp:
        results = {n: one(n, args.clips, Path(tmp)) for n in (1, 2)}
    for n, r in results.items():
        print(f"{n} worker{'s' if n > 1 else ''}: {r['clips']} clips, {r['runs']} runs in {r['seconds']:.1f} s "
              f"(runs per worker: {r['per_worker']}); failed: {r['failed'] or 'none'}; {r['responses']} response rows")
    print(f"speed-up (1 worker / 2 workers): {results[1]['seconds'] / results[2]['seconds']:.2f}x")
    same = results[1]["digest"] == results[2]["digest"] and results[1]["responses"] == results[2]["responses"]
    print(f"warehouses identical (questions, verdicts, scores digests; response rows): {same}")
    return 0 if same and not (results[1]["failed"] or results[2]["failed"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
