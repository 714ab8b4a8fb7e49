"""Benchmark: the question bank of every 30-second window of every video in the full staged annotations.

Loads the staged files (default ``<repo>/../shared/data``) once, builds the catalogue once, then for every
tumbling 30-second window (``clips.all_windows``) of ``epic_sounds`` and ``hd_epic`` videos runs
``clip_annotations`` and ``build_bank`` with the default configuration. Prints: clips, questions by
dataset × level, questions by subtype, the 15 most frequent drop reasons, seconds per stage, peak memory,
and the ratio of total time to the time spent only reading the files' bytes and to loading and validating
them (both measured in the same process). The rows of the windows come from one interval join per table
(``clips.iter_clips_annotations``, a batch of windows at a time).

It also reports how many ``epic_sounds`` windows have a ``low_sound_object`` question — a sound class heard
once whose moment has exactly one handled object, with distractors and a verified key (the design
expects roughly 600 of ~1,440 windows) — and how many had such a moment at all (a draft, kept or dropped).

``--limit N`` takes the first N windows per dataset, ``--dataset`` one dataset, ``--workers N`` runs the
windows in N forked processes, in tasks of 64 windows taken by whichever is free (the default, 1, is the
single-process figure). Progress is printed every
200 clips (single process). Skips cleanly (exit 0) when the staged files are absent.

Usage (from the repo root): ``python bench/question_bank.py [--limit N] [--dataset epic_sounds|hd_epic]
[--source DIR] [--workers N] [--trace-memory]``.
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing
import resource
import sys
import time
import tracemalloc
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from epic_levels_pipeline.annotations.readers import discover, load_annotations  # noqa: E402
from epic_levels_pipeline.annotations.catalogue import build_catalogue  # noqa: E402
from epic_levels_pipeline.annotations.clip_rows import ClipRowsIndex, iter_clips_annotations  # noqa: E402
from epic_levels_pipeline.annotations.clips import all_windows  # noqa: E402
from epic_levels_pipeline.bank.build import build_bank  # noqa: E402
from epic_levels_pipeline.bank.subtypes import BankConfig  # noqa: E402

DATASETS = ("epic_sounds", "hd_epic")
CUE_SUBTYPE = "low_sound_object"
PROGRESS_EVERY = 200


def maxrss_mib(who: int = resource.RUSAGE_SELF) -> float:
    rss = resource.getrusage(who).ru_maxrss
    return rss / 1024 / 1024 if sys.platform == "darwin" else rss / 1024


def has_draft(drops: Counter, subtype: str) -> bool:
    """A drop counted after generation (distractors, solver, cap) means the generator made a draft."""
    return any(k.startswith(f"{subtype} [") or k.startswith(f"{subtype}: over the per-clip cap") for k in drops)


@dataclass
class Tally:
    """What the loop over windows counts (summed over the workers of a parallel run)."""

    by_level: Counter = field(default_factory=Counter)
    by_subtype: Counter = field(default_factory=Counter)
    drops: Counter = field(default_factory=Counter)
    clips_with_questions: Counter = field(default_factory=Counter)
    cue_by_strategy: Counter = field(default_factory=Counter)
    stage: Counter = field(default_factory=Counter)
    cue_windows: int = 0
    cue_drafts: int = 0
    n_clips: int = 0
    n_questions: int = 0

    def add(self, other: "Tally") -> None:
        for name in ("by_level", "by_subtype", "drops", "clips_with_questions", "cue_by_strategy", "stage"):
            getattr(self, name).update(getattr(other, name))
        for name in ("cue_windows", "cue_drafts", "n_clips", "n_questions"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def column_list(table, name: str) -> list:
    """One column of a bank's Arrow table (``Bank.question_table``) as a list: the tallies read the table the
    bank writes, not the frame made for readers."""
    return table.column(name).to_pylist()


def run_windows(ann, cat, config, windows: dict, total_clips: int, loop_started: float, progress: bool = True,
                index: ClipRowsIndex | None = None) -> Tally:
    """Join and bank every window in this process (``index``: the tables' interval indexes, when built already)."""
    tally = Tally()
    stage = tally.stage
    by_level, by_subtype, drops = tally.by_level, tally.by_subtype, tally.drops
    clips_with_questions, cue_by_strategy = tally.clips_with_questions, tally.cue_by_strategy
    for ds in windows:
        t0 = time.perf_counter()
        for clip, rows in iter_clips_annotations(ann, windows[ds], index=index):
            t1 = time.perf_counter()
            bank = build_bank(clip, rows, cat, config)
            t2 = time.perf_counter()
            stage["clip_annotations"] += t1 - t0
            stage["build_bank"] += t2 - t1
            t0 = t2
            q = bank.question_table
            tally.n_clips += 1
            tally.n_questions += q.num_rows
            drops.update(bank.drops)
            subtypes = column_list(q, "subtype")  # (the tallies are the bench's work, not the bank's: kept cheap)
            if subtypes:
                clips_with_questions[ds] += 1
                by_level.update((ds, lv) for lv in column_list(q, "level"))
                by_subtype.update(subtypes)
            if ds == "epic_sounds":
                has_question = CUE_SUBTYPE in subtypes
                tally.cue_windows += has_question
                if has_question:
                    cue_by_strategy.update({s for t, s in zip(subtypes, column_list(q, "distractor_strategy")) if t == CUE_SUBTYPE})
                tally.cue_drafts += has_question or has_draft(bank.drops, CUE_SUBTYPE)
            if progress and tally.n_clips % PROGRESS_EVERY == 0:
                elapsed = time.perf_counter() - loop_started
                rate = tally.n_clips / elapsed
                print(f"  progress: {tally.n_clips:,}/{total_clips:,} clips, {tally.n_questions:,} questions, {elapsed:.0f} s "
                      f"({rate:.1f} clips/s, ~{(total_clips - tally.n_clips) / rate:.0f} s to go)", flush=True)
    return tally


_SHARED: dict = {}  # the parent's tables, catalogue and interval index, inherited by forked workers (never pickled)
CHUNK = 64  # windows per task of a parallel run: small enough to balance the workers, large enough to batch the join


def _work(windows: dict) -> Tally:
    ann, cat, config, index = _SHARED["ann"], _SHARED["cat"], _SHARED["config"], _SHARED["index"]
    return run_windows(ann, cat, config, windows, 0, time.perf_counter(), progress=False, index=index)


def run_parallel(ann, cat, config, windows: dict, workers: int) -> Tally:
    """The same loop in ``workers`` forked processes. The tables, the catalogue and the tables' interval
    index are the parent's, built once and shared by fork; the windows go out in tasks of :data:`CHUNK`
    consecutive windows of one dataset, taken by whichever worker is free (windows differ in cost by video,
    so equal shares would leave one worker idle at the end). Stage seconds are summed over the workers
    (CPU-side), the loop's wall time is the caller's."""
    index = ClipRowsIndex(ann)
    index.rows([clips[0] for clips in windows.values() if clips])  # every table's interval index, before the fork
    _SHARED.update(ann=ann, cat=cat, config=config, index=index)
    tasks = [{ds: clips[i:i + CHUNK]} for ds, clips in windows.items() for i in range(0, len(clips), CHUNK)]
    tally = Tally()
    gc.freeze()  # the parent's objects stay out of the workers' collections (fewer copied pages)
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            for part in pool.imap_unordered(_work, tasks):
                tally.add(part)
    finally:
        gc.unfreeze()
        _SHARED.clear()
    return tally


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--limit", type=int, default=None, help="windows per dataset (default: all)")
    ap.add_argument("--dataset", choices=DATASETS, action="append", help="only this dataset (repeatable)")
    ap.add_argument("--workers", type=int, default=1,
                    help="forked worker processes over the windows (default 1: the single-process figure)")
    ap.add_argument("--trace-memory", action="store_true",
                    help="also trace Python allocations (tracemalloc; slows the run about 2-3x)")
    args = ap.parse_args(argv)
    source = Path(args.source)
    if not source.is_dir():
        print(f"skipped: staged annotation files not found at {source} (nothing to benchmark)")
        return 0
    files, _ = discover([source])
    if not files:
        print(f"skipped: no annotation files under {source}")
        return 0
    datasets = tuple(args.dataset or DATASETS)
    if args.trace_memory:
        tracemalloc.start()

    started = time.perf_counter()
    t = time.perf_counter()
    n_bytes = sum(len(f.read_bytes()) for f in files)
    read_s = time.perf_counter() - t
    t = time.perf_counter()
    ann = load_annotations(source)
    load_s = time.perf_counter() - t
    t = time.perf_counter()
    cat = build_catalogue(ann)
    catalogue_s = time.perf_counter() - t
    config = BankConfig()
    print(f"source: {source} ({len(files)} files, {n_bytes / 2**20:.1f} MiB read in {read_s * 1000:.1f} ms); "
          f"load {load_s:.2f} s, catalogue {catalogue_s:.2f} s")

    windows = {}
    for ds in datasets:
        all_ds = all_windows(ann, ds)
        windows[ds] = all_ds[: args.limit] if args.limit is not None else all_ds
        print(f"{ds}: {len(all_ds):,} windows in the staged annotations; running {len(windows[ds]):,}")

    total_clips = sum(len(w) for w in windows.values())
    loop_started = time.perf_counter()
    if args.workers > 1:
        tally = run_parallel(ann, cat, config, windows, args.workers)
    else:
        tally = run_windows(ann, cat, config, windows, total_clips, loop_started)
    by_level, by_subtype, drops = tally.by_level, tally.by_subtype, tally.drops
    clips_with_questions, cue_by_strategy, stage = tally.clips_with_questions, tally.cue_by_strategy, tally.stage
    cue_windows, cue_drafts, n_clips, n_questions = tally.cue_windows, tally.cue_drafts, tally.n_clips, tally.n_questions
    loop_s = time.perf_counter() - loop_started
    total_s = time.perf_counter() - started
    traced_peak = None
    if args.trace_memory:
        traced_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()

    print(f"\nclips: {n_clips:,} ({', '.join(f'{ds} {len(windows[ds]):,}' for ds in datasets)}); "
          f"with at least one question: {', '.join(f'{ds} {clips_with_questions[ds]:,}' for ds in datasets)}")
    print(f"questions: {n_questions:,} ({n_questions / max(n_clips, 1):.1f} per clip)")

    print("\nquestions by dataset × level:")
    levels = sorted({lv for _, lv in by_level})
    print(f"  {'dataset':<12}" + "".join(f"{lv:>8}" for lv in levels) + f"{'total':>9}")
    for ds in datasets:
        counts = [by_level[(ds, lv)] for lv in levels]
        print(f"  {ds:<12}" + "".join(f"{c:>8,}" for c in counts) + f"{sum(counts):>9,}")

    print("\nquestions by subtype:")
    for name, n in sorted(by_subtype.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {n:>8,}  {name}")

    print(f"\ndrop reasons (top 15 of {len(drops)}; {sum(drops.values()):,} drops in all):")
    for reason, n in drops.most_common(15):
        print(f"  {n:>8,}  {reason}")

    if "epic_sounds" in datasets:
        n_es = len(windows["epic_sounds"])
        print(f"\nepic_sounds windows with a {CUE_SUBTYPE} question (a sound class heard once, exactly one object "
              f"handled at its moment, key verified): {cue_windows:,} of {n_es:,} ({cue_windows / max(n_es, 1):.0%}); "
              f"design expects roughly 600 of ~1,440")
        print(f"  windows with such a moment at all (a draft, kept or dropped later): {cue_drafts:,}")
        for strategy, n in sorted(cue_by_strategy.items()):
            print(f"  windows with one under distractor strategy {strategy}: {n:,}")

    print("\nfigures:")
    print(f"  seconds: total {total_s:.1f} (read files {read_s:.3f}, load {load_s:.2f}, catalogue {catalogue_s:.2f}, "
          f"clips {loop_s:.1f}: clip_annotations {stage['clip_annotations']:.1f} + build_bank {stage['build_bank']:.1f})")
    print(f"  per clip: {loop_s / max(n_clips, 1) * 1000:.1f} ms ({n_clips / max(loop_s, 1e-9):.1f} clips/s)")
    print(f"  ratio total time / reading the files' bytes: {total_s / read_s:,.0f}x")
    print(f"  ratio total time / loading and validating the files (same process): {total_s / load_s:,.1f}x "
          f"(bank only, clips loop / load: {loop_s / load_s:,.1f}x)")
    print(f"  peak resident memory (ru_maxrss): {maxrss_mib():.0f} MiB"
          + (f"; largest worker {maxrss_mib(resource.RUSAGE_CHILDREN):.0f} MiB" if args.workers > 1 else ""))
    if args.workers > 1:
        print(f"  {args.workers} worker processes: clip_annotations and build_bank are seconds summed over the workers")
    if traced_peak is not None:
        print(f"  peak traced Python allocation (tracemalloc): {traced_peak / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
