"""Benchmark: the shuffled null through the ``scores`` table, at this checkout or at an earlier commit.

The bundled bank's right replies (the export's ``answer`` of every item, under every condition it is asked under)
are moved to other items (seeded), stored as an imported model's replies would be, and scored by the pipeline's
own path: ``external_responses`` per clip → ``verdicts`` (no judge) → ``scores``; printed: the pooled
chance-corrected score (``dataset = level = subtype = format = '*'``) per seed × condition, and the mean.

``--within format``: replies moved within format × condition (the null as it was); ``form``: within format × stated
reply form × condition (``sharing/null.py``, the null now; not at commits before it). ``--at COMMIT`` runs this
script on that commit's code (``git archive`` into a temporary folder; the bundled data as it was then), e.g.
``--at e90579e --within format`` for the null before it kept replies in their stated form. The script uses only
what the package has had since then.

Usage (from the repo root): ``python bench/null_through_scores.py [--seeds 4] [--within form|format] [--at COMMIT]``.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import pandas as pd  # noqa: E402

import epic_levels_pipeline  # noqa: E402
from epic_levels_pipeline.annotations.catalogue import build_catalogue  # noqa: E402
from epic_levels_pipeline.annotations.clip_keys import read_manifest  # noqa: E402
from epic_levels_pipeline.annotations.clip_rows import clip_annotations  # noqa: E402
from epic_levels_pipeline.annotations.readers import load_annotations  # noqa: E402
from epic_levels_pipeline.bank.build import build_bank  # noqa: E402
from epic_levels_pipeline.bank.clip_view import ClipView  # noqa: E402
from epic_levels_pipeline.formats.items import build_items  # noqa: E402
from epic_levels_pipeline.scoring.metrics.tables import scores  # noqa: E402
from epic_levels_pipeline.scoring.verdicts import verdicts  # noqa: E402
from epic_levels_pipeline.sharing.export import answer_reply  # noqa: E402
from epic_levels_pipeline.sharing.replies import external_responses  # noqa: E402

try:
    from epic_levels_pipeline.responses.conditions import conditions_for  # noqa: E402
except ImportError:  # before the module of its own
    from epic_levels_pipeline.responses.offline import conditions_for  # noqa: E402
try:
    from epic_levels_pipeline.sharing.null import shuffled_replies  # noqa: E402
except ImportError:  # before sharing/null.py: the one null there was, within format × condition
    shuffled_replies = None

TOP = {"dataset": "*", "level": "*", "subtype": "*", "format": "*", "distractor_strategy": "*"}


def bank_items(source: Path, clips) -> pd.DataFrame:
    """The items of every clip ``clips(annotations)`` names, built from the annotation files under ``source``."""
    ann = load_annotations(source)
    cat = build_catalogue(ann)
    frames = []
    for clip in clips(ann):
        rows = clip_annotations(ann, clip)
        bank = build_bank(clip, rows, cat)
        if len(bank.questions):
            frames.append(build_items(bank.questions, ClipView(clip, rows, cat), cat)[0])
    return pd.concat(frames, ignore_index=True)


def within_format(lines: list[dict], items: pd.DataFrame, seed: int) -> list[dict]:
    """Replies permuted among the lines of one format × condition (groups in sorted order, lines by item id)."""
    fmt = dict(zip(items["item_id"], items["format"]))
    groups: dict[tuple, list[int]] = {}
    for n, line in enumerate(lines):
        groups.setdefault((fmt[line["item_id"]], "", line["condition"]), []).append(n)
    rng, moved = random.Random(seed), [dict(line) for line in lines]
    for key in sorted(groups):
        positions = sorted(groups[key], key=lambda n: lines[n]["item_id"])
        replies = [lines[n]["reply"] for n in positions]
        rng.shuffle(replies)
        for n, reply in zip(positions, replies):
            moved[n]["reply"] = reply
    return moved


def pooled(items: pd.DataFrame, lines: list[dict]) -> pd.DataFrame:
    """The pipeline's pooled scores of ``lines`` imported as one model's replies, per condition."""
    clip_of = dict(zip(items["item_id"], items["clip_key"]))
    stored = {"null": pd.DataFrame([{"item_id": x["item_id"], "clip_key": clip_of[x["item_id"]],
                                     "condition": x["condition"], "reply": x["reply"], "source": "null.jsonl",
                                     "source_sha256": "0", "line": n + 1} for n, x in enumerate(lines)])}
    responses = pd.concat([external_responses(k, g, stored) for k, g in items.groupby("clip_key")], ignore_index=True)
    s = scores(verdicts(responses, items), n_boot=20)
    top = s[(s[list(TOP)] == pd.Series(TOP)).all(axis=1)]
    return top[["condition", "n", "accuracy", "chance", "chance_corrected", "n_unparsed", "n_undecided"]]


def here(seeds: int, within: str, label: str | None) -> None:
    started = time.perf_counter()
    items = bank_items(REPO / "data" / "annotations", lambda ann: read_manifest(REPO / "data" / "clips.csv"))
    lines = [{"item_id": i.item_id, "condition": c, "reply": answer_reply(i)}
             for i in items.itertuples(index=False) for c in conditions_for(i.audio_annotated)]
    if within == "form" and shuffled_replies is None:
        raise SystemExit("--within form needs sharing/null.py, which this commit does not have")
    commit = label or subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                                     text=True).stdout.strip()
    print(f"{commit} (the package at {Path(epic_levels_pipeline.__file__).parent}): the bundled bank, {items['clip_key'].nunique()} clips, {len(items)} items, {len(lines)} right "
          f"replies; moved within {within} x condition")
    rows = []
    for seed in range(seeds):
        moved = (shuffled_replies(lines, items, seed, within=within) if shuffled_replies is not None
                 else within_format(lines, items, seed))
        rows.append(pooled(items, moved).assign(seed=seed))
    table = pd.concat(rows, ignore_index=True)
    wide = table.pivot_table(index="seed", columns="condition", values="chance_corrected", aggfunc="first")
    with pd.option_context("display.width", 200):
        print("\npooled chance-corrected (every format; undecided left out) per seed:")
        print(wide.round(3).to_string())
        cells = wide.drop(columns="*", errors="ignore").to_numpy().ravel()
        print(f"\nseed x condition cells: {len(cells)}, min {cells.min():.3f}, max {cells.max():.3f}, "
              f"mean {cells.mean():.3f}")
        print("\nmean over seeds:")
        print(table.groupby("condition")[["n", "chance_corrected", "n_unparsed", "n_undecided"]].mean().round(3)
              .to_string())
    print(f"\n({time.perf_counter() - started:.0f} s)")


def at(commit: str, argv: list[str]) -> int:
    """This script run on ``commit``'s code and data, in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="bench-null-") as tmp:
        archive = subprocess.run(["git", "-C", str(REPO), "archive", commit], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        (Path(tmp) / "bench").mkdir(exist_ok=True)
        shutil.copy(__file__, Path(tmp) / "bench" / Path(__file__).name)
        code = subprocess.run([sys.executable, str(Path(tmp) / "bench" / Path(__file__).name), *argv,
                               "--label", commit]).returncode
    return code


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--within", choices=("form", "format"), default="form")
    ap.add_argument("--at", default=None, help="a commit: run on its code and bundled data")
    ap.add_argument("--label", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.at:
        return at(args.at, ["--seeds", str(args.seeds), "--within", args.within])
    here(args.seeds, args.within, args.label)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
