"""Benchmark: text-only priors on clips that are not in the repository.

Loads the full staged annotations (default ``<repo>/../shared/data``), builds the catalogue from them, takes a
seeded sample of 30-second windows (``clips.all_windows``) of each dataset whose video is not one of the
bundled clips' videos (``data/clips.csv``), builds each window's bank and items with the default
configuration, and prints per subtype × distractor strategy × format (multiple choice, yes/no) the rate of
the ``blind`` prior (picks the most frequent option) and the ``anti_prior`` (the least frequent), with
clip-clustered 95 % intervals (``scoring.metrics.tables.prior_audit``; also clustered by video, as windows of one
video share its kitchen), flagging groups with n ≥ 20 whose
interval excludes chance, and which of those flags survive Holm's correction over every judged row (with
some 100 rows at 95 % each, about five flags are expected by chance alone); and the presence oracle per subtype × strategy. Also the questions kept per
dataset × level and the top drop reasons. The priors never see the clip, so they are the same under every
condition (``no_clip`` included).

Usage (from the repo root): ``python bench/option_priors.py [--windows N] [--seed S] [--source DIR]``.
Skips cleanly (exit 0) when the staged files are absent. By default every window of those videos is
audited (4,749 windows, about 5 minutes). A sample (``--windows 300``: 300 per dataset, about a minute)
has some 100 rows at 95 % each, so several of its intervals miss the all-window value by chance: the
seed-12 sample puts ``hd_epic · low_object_moment · same_clip_other_moments`` anti-prior at 0.32 where
every window gives 0.25.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
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
from epic_levels_pipeline.bank.checks import option_problems, shortcut_rates  # noqa: E402
from epic_levels_pipeline.bank.clip_view import ClipView  # noqa: E402
from epic_levels_pipeline.formats.items import build_items  # noqa: E402
from epic_levels_pipeline.scoring.metrics.tables import PRIOR_MIN_N, prior_audit, prior_shortcuts_holm  # noqa: E402

DATASETS = ("epic_sounds", "hd_epic")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--windows", type=int, default=None,
                    help="windows sampled per dataset (default: every window of videos not in the repository)")
    ap.add_argument("--seed", type=int, default=12)
    args = ap.parse_args(argv)
    source = Path(args.source)
    if not source.is_dir() or not discover([source])[0]:
        print(f"skipped: staged annotation files not found at {source}")
        return 0
    started = time.perf_counter()
    ann = load_annotations(source)
    cat = build_catalogue(ann)
    bundled_videos = {c.video_id for c in read_manifest(REPO / "data" / "clips.csv")}
    questions, items, drops = [], [], Counter()
    rng = random.Random(args.seed)
    for ds in DATASETS:
        pool = [c for c in all_windows(ann, ds) if c.video_id not in bundled_videos]
        sample = pool if args.windows is None else rng.sample(pool, min(args.windows, len(pool)))
        print(f"{ds}: {len(pool):,} windows of videos not in the repository; sampled {len(sample):,}")
        for clip in sample:
            rows = clip_annotations(ann, clip)
            bank = build_bank(clip, rows, cat)
            drops.update(bank.drops)
            if len(bank.questions):
                questions.append(bank.questions)
                items.append(build_items(bank.questions, ClipView(clip, rows, cat), cat)[0])
    q = pd.concat(questions, ignore_index=True)
    it = pd.concat(items, ignore_index=True)
    print(f"\nquestions: {len(q):,} over {q['clip_key'].nunique():,} clips ({time.perf_counter() - started:.0f} s)")
    print(q.groupby(["dataset", "level"]).size().rename("questions").to_string())
    print(f"\nquestions with nested or duplicate options: {len({p.split(':')[0] for p in option_problems(q)})}")

    priors = prior_audit(q, it)
    by_video = prior_audit(q, it, cluster="video_id").set_index(
        ["dataset", "subtype", "distractor_strategy", "format", "prior"])
    wide = priors.pivot_table(index=["dataset", "subtype", "distractor_strategy", "format"], columns="prior",
                              values=["rate", "ci_low", "ci_high"], aggfunc="first")
    n = priors.drop_duplicates(["dataset", "subtype", "distractor_strategy", "format"]).set_index(
        ["dataset", "subtype", "distractor_strategy", "format"])[["n", "n_clips", "chance"]]
    print("\ntext-only priors (rate [95 % clip-clustered interval]; * = n ≥ "
          f"{PRIOR_MIN_N} and the interval excludes chance; † = also when clustered by video, as windows of one "
          "video share its kitchen; ‡ = also after Holm's correction over every judged row, clustered by clip):")
    print(f"  {'dataset · subtype · strategy · format':<72}{'n':>5}{'clips':>6}{'chance':>7}  {'blind':<24}{'anti-prior':<24}")
    flagged = flagged_video = 0
    holm = set(prior_shortcuts_holm(priors)[["dataset", "subtype", "distractor_strategy", "format", "prior"]]
               .itertuples(index=False, name=None))  # on the clip-clustered intervals, as the check
    for key, row in n.iterrows():
        cells = []
        for prior in ("blind", "anti_prior"):
            rate, low, high = (wide.loc[key, (m, prior)] for m in ("rate", "ci_low", "ci_high"))
            v = by_video.loc[(*key, prior)]
            judged = row["n"] >= PRIOR_MIN_N
            mark = "*" if judged and not low <= row["chance"] <= high else " "
            mark += "†" if judged and not v["ci_low"] <= row["chance"] <= v["ci_high"] else " "
            flagged += mark[0] == "*"
            flagged_video += mark[1] == "†"
            mark += "‡" if (*key, prior) in holm else " "
            cells.append(f"{rate:.2f} [{low:.2f}, {high:.2f}]{mark}")
        print(f"  {' · '.join(key):<72}{int(row['n']):>5}{int(row['n_clips']):>6}{row['chance']:>7.2f}  "
              f"{cells[0]:<24}{cells[1]:<24}")
    judged_rows = int((priors["n"] >= PRIOR_MIN_N).sum())
    print(f"  rows flagged: {flagged} clustered by clip, {flagged_video} clustered by video, of {judged_rows} judged "
          f"(about {0.05 * judged_rows:.1f} expected by chance alone at 95 % each); "
          f"{len(holm)} after Holm's correction over the {judged_rows} (‡)")

    rates = shortcut_rates(q)
    print("\npresence oracle (share of questions where it singles out the key):")
    for r in rates.itertuples():
        print(f"  {r.dataset} · {r.subtype} · {r.distractor_strategy}: n {r.n}, {r.singles_out_key:.2f}")
    print(f"\ndrop reasons (top 12 of {len(drops)}):")
    for reason, k in drops.most_common(12):
        print(f"  {k:>7,}  {reason}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
