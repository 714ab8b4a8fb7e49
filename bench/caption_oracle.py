"""Benchmark: the caption oracle's self-test over every 30-second window of the staged files.

Each window goes through the functions the caption assets call (``caption_references`` →
``caption_responses`` with the ``oracle`` under ``clip`` → ``caption_alignments``) and is judged by the
``oracle_scores_one`` rule (:func:`~epic_levels_pipeline.captions.track.oracle_problems`) and by the
reference check (``reference_structure_valid``). Prints, per dataset, the windows and how many miss 1.0
or have reference problems, the first failing windows with their metrics, and the seconds taken.

Usage (from the repo root): ``python bench/caption_oracle.py [--source DIR] [--windows N]`` (default: the
staged files at ``<repo>/../shared/data``, every window; ``N`` spreads N windows evenly, as
``bench/orchestration.py --staged N`` does). Skips cleanly without the staged files.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from epic_levels_pipeline.annotations.catalogue import build_catalogue  # noqa: E402
from epic_levels_pipeline.annotations.clips import all_windows  # noqa: E402
from epic_levels_pipeline.annotations.clip_rows import iter_clips_annotations  # noqa: E402
from epic_levels_pipeline.annotations.readers import load_annotations  # noqa: E402
from epic_levels_pipeline.captions import caption_alignments, caption_references, caption_responses  # noqa: E402
from epic_levels_pipeline.captions.track import oracle_problems, reference_metadata  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", default=str(REPO.parent / "shared" / "data"), help="the staged annotation files")
    ap.add_argument("--windows", type=int, default=None, help="N windows spread over both datasets (default: all)")
    ap.add_argument("--show", type=int, default=10, help="failing windows to print")
    args = ap.parse_args()
    if not Path(args.source).is_dir():
        print(f"skipped: staged annotation files not found at {args.source} (nothing to check)")
        return 0
    warnings.filterwarnings("ignore")
    t0 = time.perf_counter()
    ann = load_annotations(Path(args.source))
    cat = build_catalogue(ann)
    windows = all_windows(ann, "epic_sounds") + all_windows(ann, "hd_epic")
    if args.windows is not None and args.windows < len(windows):
        windows = [windows[i * len(windows) // args.windows] for i in range(args.windows)]
    load_s = time.perf_counter() - t0
    seen, missed, invalid, metrics = Counter(), Counter(), Counter(), Counter()
    shown = 0
    t1 = time.perf_counter()
    for clip, rows in iter_clips_annotations(ann, windows):
        seen[clip.dataset] += 1
        structure_problems = reference_metadata(clip, rows, cat)["problems"]
        refs = caption_references(clip, rows, cat)
        _, scored = caption_alignments(refs, caption_responses(clip, refs, cat, ("oracle",), conditions=["clip"]), cat)
        problems = oracle_problems(scored)
        invalid[clip.dataset] += bool(structure_problems)
        missed[clip.dataset] += bool(problems)
        metrics.update(p.split(": ", 1)[1].split(" = ")[0] for p in problems)
        if (problems or structure_problems) and shown < args.show:
            shown += 1
            print("  " + "; ".join((structure_problems + problems)[:4]))
    run_s = time.perf_counter() - t1
    for dataset in sorted(seen):
        print(f"{dataset}: {seen[dataset]} windows, oracle < 1.0 on {missed[dataset]}, "
              f"reference problems on {invalid[dataset]}")
    print(f"total: {sum(seen.values())} windows, oracle < 1.0 on {sum(missed.values())}, "
          f"reference problems on {sum(invalid.values())}")
    if metrics:
        print("metrics missed (window × matcher): " + ", ".join(f"{m} {n}" for m, n in metrics.most_common()))
    print(f"load {load_s:.1f} s, windows {run_s:.1f} s ({1000 * run_s / max(sum(seen.values()), 1):.1f} ms per window)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
