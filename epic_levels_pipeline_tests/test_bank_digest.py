"""Outputs are unchanged by refactoring: a digest of the bundled clips' bank, items and offline verdicts.

The fixture ``fixtures/bank_digest.json`` holds sha256 digests of what the offline pipeline produces for every
clip in ``data/clips.csv`` with the four offline responders: question ids, options and keys (questions), item
ids, formats, options and expected answers (items), and every verdict (item, condition, responder, reply,
parsed answer, correct, scored_by); and the questions again under ``distractor_rule="uniform_rank"``. A change of behaviour shows here as a digest that no longer matches; a
deliberate change re-records the fixture with ``python -m epic_levels_pipeline_tests.test_bank_digest``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).parent / "fixtures" / "bank_digest.json"
PARTS = {
    "questions": ["question_id", "options", "option_values", "answer", "answer_value", "answer_index"],
    "items": ["item_id", "question_id", "format", "base_format", "options", "option_values", "expected", "chance"],
    "verdicts": ["item_id", "condition", "responder", "reply", "parsed", "expected", "correct", "scored_by"],
}


def _digest(frame: pd.DataFrame, columns: list[str]) -> str:
    """sha256 over the rows' chosen columns in JSON (row order kept: it is part of the output)."""
    rows = frame[columns].astype(object).where(frame[columns].notna(), None).values.tolist()
    return hashlib.sha256(json.dumps(rows, default=str, sort_keys=True).encode()).hexdigest()


def compute(bundled=None, tables: dict[str, pd.DataFrame] | None = None) -> dict:
    """The digests of the offline run over every bundled clip (plus row counts, to read a failure by).
    ``bundled`` (annotations, catalogue) and ``tables`` (:func:`conftest.offline_tables` of them) are
    computed here unless given."""
    from epic_levels_pipeline.annotations.readers import load_annotations
    from epic_levels_pipeline.annotations.catalogue import build_catalogue
    from epic_levels_pipeline.annotations.clip_rows import clip_annotations
    from epic_levels_pipeline.annotations.clip_keys import read_manifest
    from epic_levels_pipeline.bank.build import build_bank

    from .conftest import offline_tables  # with the four offline responders (conftest.OFFLINE_RESPONDERS)

    if bundled is None:
        ann = load_annotations(ROOT / "data" / "annotations")
        bundled = ann, build_catalogue(ann)
    ann, cat = bundled
    tables = tables if tables is not None else offline_tables(ann, cat)
    out = {}
    for part, columns in PARTS.items():
        out[part] = {"rows": int(len(tables[part])), "sha256": _digest(tables[part], columns)}
    # The bank under distractor_rule="uniform_rank": the rule of the banks before the exchangeable default,
    # kept so that a user who names it gets those banks (its digest was theirs when the default changed).
    from epic_levels_pipeline.bank.subtypes import BankConfig

    ranked = pd.concat([build_bank(clip, clip_annotations(ann, clip), cat, BankConfig(distractor_rule="uniform_rank")).questions
                        for clip in read_manifest(ROOT / "data" / "clips.csv")], ignore_index=True)
    out["questions_uniform_rank"] = {"rows": int(len(ranked)), "sha256": _digest(ranked, PARTS["questions"])}
    return out


def test_bank_items_and_verdicts_match_the_recorded_digest(bundled, offline_bank):
    """On the session's offline bank (``conftest.offline_bank``, which the other tests read): the recorded one."""
    recorded = json.loads(FIXTURE.read_text())
    assert compute(bundled, offline_bank) == recorded


if __name__ == "__main__":
    FIXTURE.parent.mkdir(exist_ok=True)
    FIXTURE.write_text(json.dumps(compute(), indent=2) + "\n")
    print(f"recorded {FIXTURE}", file=sys.stderr)
