"""Benchmark: HD-EPIC's VQA benchmark by its authors' protocol on the whole staged set, offline responders.

Imports every staged VQA file (default ``<repo>/../shared/data``, the HD-EPIC folder's ``vqa-benchmark/``; skipped
cleanly when absent), asks each question's ``official_mcq`` item of the offline responders (``oracle``, ``chance``,
``blind``) under ``clip`` and ``no_clip``, and prints ``vqa_official_scores``: in the published table's layout
beside the authors' rows, then per question type (the oracle must be 1.000 in every type, chance near 0.20).

Then the two letter rules side by side on a replies file: ``--replies FILE`` (JSONL of ``item_id``, ``condition``,
``reply`` for ``official_mcq`` items), else one the bench writes to ``data/cache/bench/vqa_letter_replies.jsonl``: every
question's key letter in one of several styles (``B``, ``b``, ``(B) <choice>``, ``Answer: B``, ``The answer is B``,
``b.``), the style drawn per question, seeded. Printed per style: accuracy by the authors' rule (first A–Z as
written) and by lmms-eval's (upper-cased first letter), and how many replies each could not read.

Usage (from the repo root): ``python bench/vqa_official.py [--source DIR] [--replies FILE]``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import pandas as pd  # noqa: E402

from epic_levels_pipeline.imports.vqa_official import FORMAT, official_partials, official_scores  # noqa: E402
from epic_levels_pipeline.imports.vqa_source import answer_pools, find_vqa_folder, load_source  # noqa: E402
from epic_levels_pipeline.reporting.vqa_sections import published_layout  # noqa: E402
from epic_levels_pipeline.responses.imported import imported_responses  # noqa: E402

STYLES = {"bare": "{L}", "lowercase": "{l}", "parenthesised with the choice": "({L}) {choice}",
          "answer line": "Answer: {L}", "sentence": "The answer is {L}", "lowercase with a stop": "{l}."}


def letter_replies(items: pd.DataFrame, seed: int = 0) -> list[dict]:
    """Every official item's key under ``clip``, written in a style drawn per question (seeded)."""
    rng = random.Random(seed)
    out = []
    for item in items.itertuples(index=False):
        style = rng.choice(sorted(STYLES))
        letter = item.expected
        choice = item.options[ord(letter) - ord("A")]
        out.append({"item_id": item.item_id, "condition": "clip", "style": style,
                    "reply": STYLES[style].format(L=letter, l=letter.lower(), choice=choice)})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--replies", default=None, help="JSONL replies to official_mcq items (default: written here)")
    args = ap.parse_args(argv)
    source = Path(args.source)
    if find_vqa_folder(source) is None:
        print(f"skipped: no HD-EPIC vqa-benchmark/ folder under {source}")
        return 0
    started = time.perf_counter()
    src = load_source(source)
    items = src.items[src.items["format"] == FORMAT].reset_index(drop=True)
    responses = imported_responses(items, ["oracle", "chance", "blind"], answer_pools(src.questions))
    partials = pd.concat([official_partials(g, items) for _, g in responses.groupby("clip_key")], ignore_index=True)
    scores = official_scores(partials)
    print(f"{len(src.questions)} questions of {items['prototype'].nunique()} question types over "
          f"{items['clip_key'].nunique()} videos; {len(responses)} replies ({time.perf_counter() - started:.1f} s)\n")
    with pd.option_context("display.width", 220, "display.max_columns", 30, "display.max_colwidth", 90):
        print("the published layout (% accuracy; 'published' rows are the authors' figures, not this run's):")
        print(published_layout(scores).to_string(index=False))
        print("\nheadline and pooled (accuracy [95 % interval over videos]):")
        top = scores[scores["aggregate"].isin(["headline", "pooled"])]
        print(top[["responder", "condition", "aggregate", "n", "accuracy", "ci_low", "ci_high", "n_unreadable",
                   "accuracy_lmms", "note"]].round(3).to_string(index=False))
        types = scores[scores["aggregate"] == "type"].pivot_table(
            index="question_type", columns=["responder", "condition"], values="accuracy", aggfunc="first")
        print("\nper question type (accuracy by the authors' rule):")
        print(types.round(3).to_string())
        n = scores[(scores["aggregate"] == "type")].drop_duplicates("question_type").set_index("question_type")["n"]
        print(f"\nquestions per type: {n.min()}–{n.max()}")

        if args.replies:
            lines = [json.loads(line) for line in Path(args.replies).read_text().splitlines() if line.strip()]
        else:
            lines = letter_replies(items)
            out = REPO / "data" / "cache" / "bench" / "vqa_letter_replies.jsonl"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text("".join(json.dumps(line) + "\n" for line in lines))
            print(f"\nwrote {len(lines)} replies in {len(STYLES)} styles to {out}")
        replies = pd.DataFrame(lines)
        info = items.set_index("item_id")
        replies = replies.assign(clip_key=info.loc[replies["item_id"], "clip_key"].to_numpy(), format=FORMAT,
                                 responder="replies", model="file", status="ok")
        if "style" not in replies:
            replies["style"] = "(file)"
        rows = []
        for style, g in replies.groupby("style"):
            p = official_partials(g, items)
            s = p[["n", "correct", "n_unreadable", "correct_lmms", "n_unreadable_lmms"]].sum()
            rows.append({"style": style, "example": g["reply"].iloc[0], "n": int(s["n"]),
                         "authors' rule": s["correct"] / s["n"], "unreadable": int(s["n_unreadable"]),
                         "lmms-eval": s["correct_lmms"] / s["n"], "unreadable (lmms)": int(s["n_unreadable_lmms"])})
        whole = official_scores(official_partials(replies, items), n_boot=200)
        print("\nthe two letter rules on the replies (every reply names the key letter, in its style):")
        print(pd.DataFrame(rows).round(3).to_string(index=False))
        print(whole[whole["aggregate"].isin(["headline", "pooled"])][
            ["aggregate", "n", "accuracy", "n_unreadable", "accuracy_lmms", "n_unreadable_lmms"]].round(3).to_string(index=False))
    print(f"\n({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
