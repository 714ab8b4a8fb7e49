"""Benchmark: what the caption track's alignment and scoring cost, beside the QA scoring of the same clips.

For every bundled clip (``data/clips.csv``) the caption references and the offline caption responders'
replies (every condition of the clip) are built first (not timed); then timed:

- ``align + score``: :func:`caption_alignments` (both matchers, label rules) and :func:`caption_scores`;
- ``sweep``: :func:`caption_threshold_sensitivity` (12 threshold settings, greedy);
- ``QA scoring``: the verdicts of the QA track's offline responses of the same clips and the scored
  tables (``pipeline.run_core``'s ``verdicts`` + ``tables`` stages, the same clips and responders).

Prints seconds, the number of responses and aligned rows, and the ratio caption / QA scoring.
Usage (from the repo root): ``python bench/captions.py [--clips N] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import pandas as pd  # noqa: E402

from epic_levels_pipeline.annotations.readers import load_annotations  # noqa: E402
from epic_levels_pipeline.captions import (caption_alignments, caption_references, caption_responses,  # noqa: E402
                                           caption_scores, caption_threshold_sensitivity)
from epic_levels_pipeline.captions.responders import OFFLINE_RESPONDERS  # noqa: E402
from epic_levels_pipeline.annotations.catalogue import build_catalogue  # noqa: E402
from epic_levels_pipeline.annotations.clip_rows import clip_annotations  # noqa: E402
from epic_levels_pipeline.annotations.clip_keys import read_manifest  # noqa: E402
from epic_levels_pipeline.pipeline import run_core  # noqa: E402
from epic_levels_pipeline.settings import Paths  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=None, help="first N clips of the manifest (default: all)")
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions; the best is reported")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    paths = Paths(REPO)
    clips = read_manifest(paths.manifest)[: args.clips]
    ann = load_annotations(paths.annotations)
    cat = build_catalogue(ann)

    refs, resps = [], []
    for clip in clips:
        rows = clip_annotations(ann, clip)
        r = caption_references(clip, rows, cat)
        refs.append(r)
        resps.append(caption_responses(clip, r, cat, OFFLINE_RESPONDERS, streams=rows["stream"]))
    refs, resps = pd.concat(refs, ignore_index=True), pd.concat(resps, ignore_index=True)
    caption_alignments(refs, resps[:20], cat)                   # warm-up (label rules are built once)

    align_s, sweep_s, qa_s = [], [], []
    for _ in range(args.repeat):
        t = time.perf_counter()
        alignments, scored = caption_alignments(refs, resps, cat)
        caption_scores(scored)
        align_s.append(time.perf_counter() - t)
        t = time.perf_counter()
        caption_threshold_sensitivity(refs, resps, cat)
        sweep_s.append(time.perf_counter() - t)
        core = run_core(paths, clips, annotations=ann, catalogue=cat)      # the default bootstrap, as in the graph
        qa_s.append(core.seconds["verdicts"] + core.seconds["tables"])
    a, s, q = min(align_s), min(sweep_s), min(qa_s)
    print(f"clips: {len(clips)}  caption responders: {len(OFFLINE_RESPONDERS)}  responses: {len(resps)}  "
          f"alignment rows: {len(alignments)}")
    print(f"caption align + score: {a:7.3f} s  ({1000 * a / len(resps):.2f} ms per response, both matchers)")
    print(f"caption threshold sweep: {s:7.3f} s  (12 settings)")
    print(f"QA scoring (verdicts + tables) of the same clips: {q:7.3f} s  "
          f"({len(core.verdicts)} verdicts)")
    print(f"ratio caption align + score / QA scoring: {a / q:.2f}   with the sweep: {(a + s) / q:.2f}")


if __name__ == "__main__":
    main()
