"""Benchmark: what Dagster orchestration costs over the same computation as plain function calls.

Materializes every bundled clip (``data/clips.csv``) through Dagster — ``orchestration.local.run_pipeline`` into
a temporary instance (``dagster.instance_for_test``, with the storage of the project's ``dagster.yaml``:
Dagster's stock SQLite storage), on a temporary copy of the project's ``data/annotations`` and
``data/clips.csv`` (``EPIC_LEVELS_HOME`` points at the copy, so the real ``data/`` folder is untouched) — and
through ``pipeline.run_core`` in the same process, with the offline responders only (no model calls: model and
API-key variables are cleared for this process; no media, so media conditions of model responders would be
skipped anyway). A warm-up (loading the annotations and one clip through the core) runs first so neither side
pays for first imports and caches.

Prints both wall times, the orchestration overhead as a ratio (Dagster / core) and per clip (and both sides'
CPU time, which other processes on a shared machine disturb less), and checks
that both produce the same number of questions, items, responses and verdicts (and the same correct
verdicts per responder).

``--staged [N]`` runs the same comparison at dataset scale: the temporary project holds a copy of the full
staged annotation files (default ``<repo>/../shared/data``) and a manifest of N of their 30-second windows
(default: all; an even spread over both datasets' windows), registered as partitions in the temporary
instance. Per-clip assets run in batches of consecutive partitions (``defs.partitions.MAX_CLIPS_PER_RUN``),
so the runs launched are printed beside the times, with the process's peak resident memory.

The Dagster side materializes the assets the core computes (the scored tables and everything upstream of
them, with their blocking checks); ``--full-graph`` materializes the whole graph (caption track, judge audit,
report, warehouse views too), which the core does not compute. ``--profile FILE`` runs the (first) Dagster
side under cProfile, writes the stats to FILE and prints the top entries.

``--postgres URL`` keeps the Dagster side's storage on that PostgreSQL server instead (the storage of
``deploy/distributed/dagster.yaml``; a new database per measurement, dropped afterwards).

``--repeat N`` measures N pairs, core and Dagster alternately in ABBA order (Dagster then core, core then
Dagster, ...): the machine's speed drifts while one side runs after the other, and alternating the order
cancels a steady drift within each two pairs. Every Dagster run starts from the same state (a new instance,
no materialized files); each pair's ratio is printed, and the figures' lines report the medians (of the
times, and of the pairs' ratios for the ratio).

Usage (from the repo root): ``python bench/orchestration.py [--clips N] [--staged [N]] [--source DIR]
[--full-graph] [--profile FILE] [--postgres URL] [--repeat N]`` (default: every bundled clip, one pair).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import resource
import shutil
import statistics
import sys
import tempfile
import time
import uuid
import warnings
from contextlib import ExitStack, contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import dagster as dg  # noqa: E402
import pandas as pd  # noqa: E402

from epic_levels_pipeline.annotations.readers import load_annotations  # noqa: E402
from epic_levels_pipeline.annotations.catalogue import build_catalogue  # noqa: E402
from epic_levels_pipeline.annotations.clips import all_windows  # noqa: E402
from epic_levels_pipeline.annotations.clip_keys import read_manifest  # noqa: E402
from epic_levels_pipeline.defs.partitions import MAX_CLIPS_PER_RUN  # noqa: E402
from epic_levels_pipeline.orchestration.local import load_definitions, run_pipeline  # noqa: E402
from epic_levels_pipeline.pipeline import run_core  # noqa: E402
from epic_levels_pipeline.settings import Paths  # noqa: E402
from epic_levels_pipeline.storage.parquet import read_parquet  # noqa: E402

# The Dagster side materializes what the core computes: the scored tables and everything upstream of them
# (annotation tables, catalogue, clip rows, question bank with its checks, items with theirs, clip media,
# responses, verdicts). `--full-graph` adds the rest (caption track, judge audit, report, warehouse views).
SAME_AS_CORE = (dg.AssetSelection.assets("scores", "paired_comparisons", "over_marking", "shortcut_audit").upstream()
                .required_multi_asset_neighbors())
QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
CLEARED_ENV = ("EPIC_LEVELS_MODELS", "EPIC_LEVELS_JUDGE_MODEL", "EPIC_LEVELS_RESPONDERS", "EPIC_LEVELS_MEDIA_ROOT",
               "GEMINI_API_KEY", "GOOGLE_API_KEY", "GEMINI_BASE_URL")


def offline_process() -> None:
    """This process runs offline and quietly: no model or key variables, no warnings."""
    warnings.filterwarnings("ignore")
    for name in CLEARED_ENV:
        os.environ.pop(name, None)


def temp_project(tmp: Path, limit: int | None) -> Paths:
    """A project root in ``tmp``: a copy of the bundled annotations and the manifest (first ``limit`` clips)."""
    shutil.copytree(REPO / "data" / "annotations", tmp / "data" / "annotations")
    lines = (REPO / "data" / "clips.csv").read_text("utf-8").splitlines()
    if limit is not None:
        header, body = lines[0], [line for line in lines[1:] if line.strip() and not line.startswith("#")]
        lines = [header, *body[:limit]]
    (tmp / "data" / "clips.csv").write_text("\n".join(lines) + "\n", "utf-8")
    return Paths(tmp)


def staged_project(tmp: Path, source: Path, n: int | None) -> Paths:
    """A project root in ``tmp``: a copy of the staged annotation files and a manifest of ``n`` of their
    30-second windows (all when None), spread evenly over every window of both datasets. HD-EPIC's VQA
    benchmark files (``vqa-benchmark/``) are left out: with them the graph also imports and scores the VQA
    source (150 video partitions, their own rows in ``scores``), which ``pipeline.run_core`` does not compute,
    so the two sides would not do the same work."""
    shutil.copytree(source, tmp / "data" / "annotations", ignore=shutil.ignore_patterns("seed_clips", "vqa-benchmark"))
    ann = load_annotations(tmp / "data" / "annotations")
    windows = all_windows(ann, "epic_sounds") + all_windows(ann, "hd_epic")
    if n is not None and n < len(windows):
        windows = [windows[i * len(windows) // n] for i in range(n)]
    lines = ["dataset,video_id,start_s,end_s"] + [f"{c.dataset},{c.video_id},{c.start_s:g},{c.end_s:g}" for c in windows]
    (tmp / "data" / "clips.csv").write_text("\n".join(lines) + "\n", "utf-8")
    return Paths(tmp)


def maxrss_mib() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 1024 / 1024 if sys.platform == "darwin" else rss / 1024


def materialized(paths: Paths, name: str) -> pd.DataFrame:
    return read_parquet(sorted((paths.assets / name).glob("*.parquet")))


def print_profile(profiler: cProfile.Profile, path: str, top: int = 30) -> None:
    """Write the Dagster side's profile to ``path`` and print its top entries by own and by cumulative time."""
    profiler.dump_stats(path)
    for order in ("tottime", "cumulative"):
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats(order).print_stats(top)
        print(f"\nprofile of the Dagster side, top {top} by {order} (stats in {path}):")
        print("\n".join(line for line in out.getvalue().splitlines() if line.strip()
                        and not line.startswith(("   Ordered by", "   List reduced"))))


@contextmanager
def postgres_database(server_url: str):
    """A new, empty database on the PostgreSQL server of ``server_url`` (``postgresql://user@host:port/db``, a
    ``+psycopg2`` driver suffix or none);
    yields its URL and drops it afterwards."""
    import psycopg2

    name = f"epic_levels_bench_{uuid.uuid4().hex[:12]}"
    parts = urlsplit(server_url)
    # psycopg2 takes a plain postgresql:// URL; Dagster's SQLAlchemy engine is told the driver, since SQLAlchemy's
    # default PostgreSQL driver is psycopg 3, which the project does not install.
    plain = urlunsplit(parts._replace(scheme="postgresql"))
    parts = parts._replace(scheme="postgresql+psycopg2")

    def admin(statement: str) -> None:
        connection = psycopg2.connect(plain)
        connection.autocommit = True
        try:
            with connection.cursor() as cursor:
                cursor.execute(statement)
        finally:
            connection.close()

    admin(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(parts._replace(path="/" + name))
    finally:
        admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def dagster_side(paths: Paths, selection, profile: str | None, postgres: str | None = None):
    """One Dagster measurement from the same starting state every time: no materialized files or clip media,
    a new temporary instance (its storage removed afterwards: a new PostgreSQL database, dropped afterwards,
    with ``postgres``). (report, wall s, CPU s); profiled when ``profile`` names a stats file."""
    for folder in (paths.assets, paths.media / "clips", paths.data / "dagster" / "storage"):
        shutil.rmtree(folder, ignore_errors=True)
    with ExitStack() as stack:
        if postgres:  # as in deploy/distributed/dagster.yaml
            storage = {"storage": {"postgres": {"postgres_url": stack.enter_context(postgres_database(postgres))}}}
        else:  # as in dagster.yaml
            storage = {"storage": {"sqlite": {"base_dir": str(paths.data / "dagster" / "storage")}}}
        profiler = cProfile.Profile() if profile else None
        cpu = time.process_time()
        t = time.perf_counter()
        if profiler:
            profiler.enable()
        with dg.instance_for_test(overrides=storage) as instance:
            report = run_pipeline(paths, instance=instance, run_config=QUIET, log=lambda *_: None,
                                  selection=selection)
        if profiler:
            profiler.disable()
        seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
    if profiler:
        print_profile(profiler, profile)
    return report, seconds, cpu


def core_side(paths: Paths):
    """One measurement of the core (reading the annotations itself, as the Dagster side does): (result, wall s,
    CPU s)."""
    cpu = time.process_time()
    t = time.perf_counter()
    core = run_core(paths)
    return core, time.perf_counter() - t, time.process_time() - cpu


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clips", type=int, default=None, help="only the manifest's first N clips")
    ap.add_argument("--staged", type=int, nargs="?", const=0, default=None,
                    help="N windows of the full staged files instead of the bundled clips (no N: all)")
    ap.add_argument("--source", default=str(REPO.parent / "shared" / "data"), help="the staged files (with --staged)")
    ap.add_argument("--full-graph", action="store_true",
                    help="materialize the whole graph through Dagster (caption track, report, warehouse too), "
                         "not only what the core computes")
    ap.add_argument("--profile", metavar="FILE", default=None,
                    help="profile the Dagster side with cProfile: write the stats to FILE and print the top entries")
    ap.add_argument("--postgres", metavar="URL", default=None,
                    help="Dagster's storage on this PostgreSQL server (postgresql://user@host:port/db; the storage of "
                         "deploy/distributed/), in a new database per measurement, instead of the stock SQLite")
    ap.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="N pairs of runs, core and Dagster alternately (ABBA); each pair's ratio and the medians")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    if args.staged is not None and not Path(args.source).is_dir():
        print(f"skipped: staged annotation files not found at {args.source} (nothing to benchmark)")
        return 0
    if not (REPO / "data" / "clips.csv").exists() or not (REPO / "data" / "annotations").is_dir():
        print(f"skipped: bundled data not found under {REPO / 'data'}")
        return 0
    offline_process()

    with tempfile.TemporaryDirectory(prefix="bench-orchestration-") as tmp:
        paths = (staged_project(Path(tmp), Path(args.source), args.staged or None) if args.staged is not None
                 else temp_project(Path(tmp), args.clips))
        os.environ["EPIC_LEVELS_HOME"] = str(paths.root)
        clips = read_manifest(paths.manifest)
        print(f"{len(clips)} clips from the manifest; temporary project at {paths.root}")

        # Warm-up: imports, definitions, annotation parsing caches, one clip through the core.
        t = time.perf_counter()
        load_definitions()
        ann = load_annotations(paths.annotations)
        run_core(paths, clips[:1], annotations=ann, catalogue=build_catalogue(ann), n_boot=10)
        print(f"warm-up: {time.perf_counter() - t:.1f} s")

        selection = None if args.full_graph else SAME_AS_CORE
        pairs: list[tuple[float, float, float, float]] = []  # (Dagster s, core s, Dagster CPU s, core CPU s)
        for i in range(args.repeat):
            dagster_first = i % 2 == 0  # ABBA: Dagster, core | core, Dagster | ...
            if not dagster_first:
                core, core_s, core_cpu = core_side(paths)
            report, dagster_s, dagster_cpu = dagster_side(paths, selection, args.profile if i == 0 else None,
                                                          args.postgres)
            if report.failed:
                print(f"Dagster runs failed: {report.failed}")
                return 1
            if dagster_first:
                core, core_s, core_cpu = core_side(paths)
            pairs.append((dagster_s, core_s, dagster_cpu, core_cpu))
            if args.repeat > 1:
                print(f"pair {i + 1}/{args.repeat} ({'Dagster, core' if dagster_first else 'core, Dagster'}): "
                      f"Dagster {dagster_s:.1f} s, core {core_s:.1f} s = {dagster_s / core_s:.2f}x")
        tables = {name: materialized(paths, name) for name in ("questions", "items", "responses", "verdicts")}
        tables["scores"] = read_parquet([paths.assets / "scores.parquet"])

    dagster_s, core_s, dagster_cpu, core_cpu = (statistics.median(p[i] for p in pairs) for i in range(4))
    ratio = statistics.median(d / c for d, c, _, _ in pairs)
    cpu_ratio = statistics.median(d / c for _, _, d, c in pairs)
    scope = "the whole graph" if args.full_graph else "the core's assets"
    if args.repeat > 1:
        ratios = ", ".join(f"{d / c:.2f}x" for d, c, _, _ in pairs)
        print(f"\n{args.repeat} pairs in ABBA order, Dagster / core: {ratios}; median {ratio:.2f}x "
              f"(spread {min(d / c for d, c, _, _ in pairs):.2f}-{max(d / c for d, c, _, _ in pairs):.2f}x); "
              f"times below are medians")
    store = "PostgreSQL" if args.postgres else "stock SQLite"
    print(f"\nDagster (run_pipeline of {scope}, {report.runs} runs in a temporary instance, {store} storage): "
          f"{dagster_s:.1f} s")
    print(f"core (pipeline.run_core, plain calls):                   {core_s:.1f} s  "
          f"[{', '.join(f'{k} {v:.1f}' for k, v in core.seconds.items() if k != 'total')}]")
    print("\nfigures:")
    print(f"  clips: {len(clips):,}; Dagster runs launched: {report.runs} (per-clip assets in batches of up to "
          f"{MAX_CLIPS_PER_RUN} consecutive partitions)")
    print(f"  Dagster {dagster_s:.1f} s, core {core_s:.1f} s")
    print(f"  peak resident memory of the process (ru_maxrss): {maxrss_mib():.0f} MiB")
    print(f"  CPU time of this process: Dagster {dagster_cpu:.1f} s, core {core_cpu:.1f} s = "
          f"{cpu_ratio:.2f}x (less sensitive than wall time to other processes on a shared machine)")
    print(f"  orchestration overhead: Dagster / core = {ratio:.2f}x "
          f"(+{dagster_s - core_s:.1f} s, {(dagster_s - core_s) / max(len(clips), 1):.2f} s per clip, "
          f"{(dagster_s - core_s) / max(report.runs, 1):.2f} s per run)")
    ours = {"questions": core.questions, "items": core.items, "responses": core.responses,
            "verdicts": core.verdicts, "scores": core.scores}
    same = True
    print("  rows                  Dagster      core")
    for name, theirs in tables.items():
        match = len(theirs) == len(ours[name])
        same &= match
        print(f"  {name:<18} {len(theirs):>10,} {len(ours[name]):>9,}  {'same' if match else 'DIFFERENT'}")
    correct_d = tables["verdicts"].groupby("responder")["correct"].sum().astype(int).to_dict()
    correct_c = core.verdicts.groupby("responder")["correct"].sum().astype(int).to_dict()
    same &= correct_d == correct_c
    print(f"  correct verdicts per responder: Dagster {correct_d}, core {correct_c}")
    print(f"  same number of questions and verdicts: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
