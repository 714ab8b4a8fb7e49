"""Benchmark: the shuffled null of imported replies, before and after it keeps replies in their stated form.

Builds the bundled bank (``data/clips.csv`` over ``data/annotations``), or with ``--staged N`` a seeded sample of
N 30-second windows per dataset of the staged annotations (default ``<repo>/../shared/data``; skipped cleanly
when absent), writes every item's right reply under every condition it is asked under
(:func:`epic_levels_pipeline.sharing.null.perfect_replies`), then for each seed moves the replies to other items
(:func:`~epic_levels_pipeline.sharing.null.shuffled_replies`) two ways:

- ``format``: within format × condition (the null before the fix);
- ``form``: within format × stated reply form × condition (the null now);

and prints the pooled chance-corrected scores per seed × condition (:func:`~epic_levels_pipeline.sharing.null.null_score`:
scope ``all`` = every format, ``closed`` = every format but the open answers; ``cc`` leaves undecided open replies
out, ``strict`` counts them wrong), the mean over seeds, and per format × answer type how many of the moved
replies are right beyond the format's chance (the answer prior the shuffle keeps).

Usage (from the repo root): ``python bench/shuffled_null.py [--seeds 4] [--staged N]``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import pandas as pd  # noqa: E402

from epic_levels_pipeline.annotations.catalogue import build_catalogue  # noqa: E402
from epic_levels_pipeline.annotations.clips import all_windows  # noqa: E402
from epic_levels_pipeline.annotations.clip_rows import clip_annotations  # noqa: E402
from epic_levels_pipeline.annotations.clip_keys import read_manifest  # noqa: E402
from epic_levels_pipeline.annotations.readers import discover, load_annotations  # noqa: E402
from epic_levels_pipeline.bank.build import build_bank  # noqa: E402
from epic_levels_pipeline.bank.clip_view import ClipView  # noqa: E402
from epic_levels_pipeline.formats.items import build_items  # noqa: E402
from epic_levels_pipeline.scoring.metrics.tables import primary_mask  # noqa: E402
from epic_levels_pipeline.sharing.null import RuleScorer, null_score, perfect_replies, shuffled_replies  # noqa: E402


def bank_items(source: Path, clips) -> pd.DataFrame:
    ann = load_annotations(source)
    cat = build_catalogue(ann)
    frames = []
    for clip in clips(ann):
        rows = clip_annotations(ann, clip)
        bank = build_bank(clip, rows, cat)
        if len(bank.questions):
            frames.append(build_items(bank.questions, ClipView(clip, rows, cat), cat)[0])
    return pd.concat(frames, ignore_index=True)


def excess(items: pd.DataFrame, lines: list[dict], scorer: RuleScorer) -> pd.DataFrame:
    """Per format × base format × answer type: moved replies counted, their accuracy, chance, and the right ones
    beyond chance (strict: undecided counted wrong)."""
    frame = pd.DataFrame(lines).merge(items[["item_id", "format", "base_format", "answer_type", "chance", "subtype",
                                             "distractor_strategy"]], on="item_id")
    frame = frame[primary_mask(frame)]
    frame["ok"] = [scorer(i, r)[1] for i, r in zip(frame["item_id"], frame["reply"])]
    g = frame.groupby(["format", "base_format", "answer_type"]).agg(n=("ok", "size"), accuracy=("ok", "mean"),
                                                                    chance=("chance", "mean"))
    g["right_beyond_chance"] = (g["accuracy"] - g["chance"]) * g["n"]
    return g


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--staged", type=int, default=0, help="windows sampled per dataset of the staged files (0: bundled)")
    ap.add_argument("--source", default=str(REPO.parent / "shared" / "data"))
    args = ap.parse_args(argv)
    started = time.perf_counter()
    if args.staged:
        source = Path(args.source)
        if not source.is_dir() or not discover([source])[0]:
            print(f"skipped: staged annotation files not found at {source}")
            return 0
        rng = random.Random(0)

        def clips(ann):
            out = []
            for ds in ("epic_sounds", "hd_epic"):
                pool = all_windows(ann, ds)
                out += rng.sample(pool, min(args.staged, len(pool)))
            return out
        items = bank_items(source, clips)
        what = f"{args.staged} staged windows per dataset"
    else:
        items = bank_items(REPO / "data" / "annotations", lambda ann: read_manifest(REPO / "data" / "clips.csv"))
        what = "the bundled bank"
    lines = perfect_replies(items)
    scorer = RuleScorer(items)
    print(f"{what}: {items['clip_key'].nunique()} clips, {len(items)} items, {len(lines)} replies "
          f"({time.perf_counter() - started:.0f} s)\n")
    tables = []
    for within in ("format", "form"):
        for seed in range(args.seeds):
            moved = shuffled_replies(lines, items, seed, within=within)
            tables.append(null_score(items, moved, scorer).assign(null=within, seed=seed))
    table = pd.concat(tables, ignore_index=True)
    wide = table.pivot_table(index=["null", "scope", "seed"], columns="condition",
                             values=["chance_corrected", "chance_corrected_strict"], aggfunc="first")
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print("pooled chance-corrected per seed (cc: undecided left out; strict: counted wrong):")
        print(wide.round(3).to_string())
        print("\nmean over seeds [min, max]:")
        summary = table.groupby(["null", "scope", "condition"]).agg(
            cc=("chance_corrected", "mean"), cc_min=("chance_corrected", "min"), cc_max=("chance_corrected", "max"),
            strict=("chance_corrected_strict", "mean"), unparsed=("n_unparsed", "mean"))
        print(summary.round(4).to_string())
        print("\nthe answer prior a form-keeping shuffle carries (seed 0; right replies beyond the format's chance):")
        print(excess(items, shuffled_replies(lines, items, 0), scorer).round(3).to_string())
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
