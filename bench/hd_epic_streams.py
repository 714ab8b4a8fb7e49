"""Benchmark: HD-EPIC sound and action questions from HD-EPIC's own sounds and narrations, per level, with
their text-only prior rows (blind / anti-prior) and the presence oracle.

The staged and bundled files lack ``HD_EPIC_Sounds.csv`` and ``HD_EPIC_Narrations.pkl``, so this writes the
tests' files in the documented schema (``epic_levels_pipeline_tests/annotations/hd_epic_files.py``: seeded
sounds in EPIC-SOUNDS classes and narrations in HD-EPIC classes) beside a copy of the bundled annotations,
for the bundled HD-EPIC windows (default: the manifest's 13, the tests' files) or ``--windows N`` evenly
spaced 30-s windows of the bundled HD-EPIC videos; builds each window's bank and items with the default
configuration, runs the blocking checks on them, and prints the questions per dataset × subtype × level,
the prior audit rows of the HD-EPIC sound and action cells (``scoring.metrics.tables.prior_audit``,
clip-clustered 95 % intervals; * = n ≥ 20 and the interval excludes chance) and the presence oracle per cell.
The files are synthetic: the priors show that the cells are audited and how the distractor rules behave on
them, not how real HD-EPIC sounds would score.

Usage (from the repo root): ``python bench/hd_epic_streams.py [--windows N] [--seed S]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import pandas as pd  # noqa: E402

from epic_levels_pipeline.annotations.catalogue import build_catalogue  # noqa: E402
from epic_levels_pipeline.annotations.clips import all_windows  # noqa: E402
from epic_levels_pipeline.annotations.clip_rows import iter_clips_annotations  # noqa: E402
from epic_levels_pipeline.annotations.readers import load_annotations  # noqa: E402
from epic_levels_pipeline.bank.build import build_bank  # noqa: E402
from epic_levels_pipeline.bank.checks import key_problems, level_problems, option_problems, shortcut_rates  # noqa: E402
from epic_levels_pipeline.bank.clip_view import ClipView  # noqa: E402
from epic_levels_pipeline.bank.subtypes import SUBTYPES  # noqa: E402
from epic_levels_pipeline.formats.items import build_items, format_problems, statement_truth_problems  # noqa: E402
from epic_levels_pipeline.scoring.metrics.tables import PRIOR_MIN_N, prior_audit  # noqa: E402
from epic_levels_pipeline_tests.annotations.hd_epic_files import bundled_hd_epic_clips, write_streams  # noqa: E402

SOUND_AND_ACTION = tuple(name for name, s in SUBTYPES.items() if "hd_epic" in s.also_on)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--windows", type=int, default=None,
                    help="evenly spaced windows of the bundled HD-EPIC videos (default: the manifest's HD-EPIC clips)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the written sounds and narrations")
    args = ap.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "annotations"
        import shutil

        shutil.copytree(REPO / "data" / "annotations", root)
        if args.windows is None:
            clips = bundled_hd_epic_clips()
        else:
            every = all_windows(load_annotations(root), "hd_epic")
            step = max(len(every) // args.windows, 1)
            clips = every[::step][:args.windows]
        sounds_path, narrations_path = write_streams(root, clips, args.seed)
        ann = load_annotations(root)
    print(f"wrote {sounds_path.name} ({(ann.sounds['source_file'] == 'HD_EPIC_Sounds.csv').sum():,} sounds) and "
          f"{narrations_path.name} ({(ann.narrations['source_file'] == 'HD_EPIC_Narrations.pkl').sum():,} narration "
          f"rows) for {len(clips):,} HD-EPIC windows of {len({c.video_id for c in clips})} videos")
    cat = build_catalogue(ann)
    questions, items, drops, problems = [], [], Counter(), 0
    for clip, rows in iter_clips_annotations(ann, clips):
        bank = build_bank(clip, rows, cat)
        view = ClipView(clip, rows, cat)
        its = build_items(bank.questions, view, cat)[0]
        problems += len(key_problems(bank.questions, view) + level_problems(bank.questions)
                        + option_problems(bank.questions) + format_problems(its, bank.questions)
                        + statement_truth_problems(its, view, bank.questions))
        drops.update(bank.drops)
        if len(bank.questions):
            questions.append(bank.questions)
            items.append(its)
    q = pd.concat(questions, ignore_index=True)
    it = pd.concat(items, ignore_index=True)
    print(f"questions: {len(q):,} over {q['clip_key'].nunique():,} clips; blocking-check problems: {problems} "
          f"({time.perf_counter() - started:.1f} s)")
    primary = q[[SUBTYPES[s].strategy == d for s, d in zip(q["subtype"], q["distractor_strategy"])]]
    table = primary.assign(kind=primary["subtype"].map(lambda s: "sound / action" if s in SOUND_AND_ACTION else "HD-EPIC"))
    print("\nbase questions per level (primary distractor strategy; the leaky absent_from_clip copies not counted):")
    print(table.pivot_table(index=["dataset", "kind", "subtype"], columns="level", values="question_id",
                            aggfunc="count", fill_value=0).to_string())
    print(table.groupby(["kind", "level"]).size().rename("questions").to_string())

    priors = prior_audit(q, it)
    cells = priors[priors["subtype"].isin(SOUND_AND_ACTION)]
    print(f"\ntext-only priors of the HD-EPIC sound and action cells (rate [95 % clip-clustered interval]; * = n ≥ "
          f"{PRIOR_MIN_N} and the interval excludes chance):")
    print(f"  {'dataset · subtype · strategy · format':<76}{'n':>5}{'clips':>6}{'chance':>7}  {'blind':<22}{'anti-prior':<22}")
    flagged = judged = 0
    for key, group in cells.groupby(["dataset", "subtype", "distractor_strategy", "format"], sort=True):
        by = group.set_index("prior")
        n, chance = int(by["n"].iloc[0]), float(by["chance"].iloc[0])
        out = []
        for prior in ("blind", "anti_prior"):
            r = by.loc[prior]
            mark = "*" if n >= PRIOR_MIN_N and not r["ci_low"] <= chance <= r["ci_high"] else " "
            flagged += mark == "*"
            out.append(f"{r['rate']:.2f} [{r['ci_low']:.2f}, {r['ci_high']:.2f}]{mark}")
        judged += 2 * (n >= PRIOR_MIN_N)
        print(f"  {' · '.join(key):<76}{n:>5}{int(by['n_clips'].iloc[0]):>6}{chance:>7.2f}  {out[0]:<22}{out[1]:<22}")
    print(f"  rows flagged: {flagged} of {judged} judged (about {0.05 * judged:.1f} expected by chance alone at 95 % each)")
    rates = shortcut_rates(q)
    rates = rates[rates["subtype"].isin(SOUND_AND_ACTION)]
    print("\npresence oracle of those cells (share of questions where it singles out the key; expected rate):")
    for r in rates.itertuples():
        print(f"  {r.dataset} · {r.subtype} · {r.distractor_strategy}: n {r.n}, {r.singles_out_key:.2f}, "
              f"{r.presence_oracle_rate:.2f}")
    print(f"\ndrop reasons of those subtypes (top 10 of {sum(1 for k in drops if k.split(':')[0].split(' [')[0] in SOUND_AND_ACTION)}):")
    for reason, k in [(r, k) for r, k in drops.most_common() if r.split(":")[0].split(" [")[0] in SOUND_AND_ACTION][:10]:
        print(f"  {k:>6,}  {reason}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
