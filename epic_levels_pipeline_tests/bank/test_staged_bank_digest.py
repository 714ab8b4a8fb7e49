"""The bank over a 300-window sample of the full staged files is unchanged: every question column, every
distractor pool row and every drop counter, digested per clip and in all.

The sample is 150 evenly spaced tumbling 30-s windows (:func:`clips.all_windows`) of each dataset, their rows
from the interval join (:func:`clips.iter_clips_annotations`), the catalogue built from all staged files and the
default :class:`BankConfig`. The fixture ``fixtures/staged_bank_digest.json`` holds the totals, a sha256 over
everything and a short digest per clip (to say which clip moved). Skipped when the staged files
(``<repo>/../shared/data``) are absent. A deliberate change of bank behaviour re-records it with
``python -m epic_levels_pipeline_tests.bank.test_staged_bank_digest``.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys

import numpy as np
import pandas as pd
import pytest

from ..conftest import ROOT, STAGED

FIXTURE = ROOT / "epic_levels_pipeline_tests" / "fixtures" / "staged_bank_digest.json"
PER_DATASET = 150


def _plain(value):
    """A cell as plain JSON: numpy scalars as Python ones, nulls as None, lists element by element."""
    if value is None:
        return None
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if value is pd.NA:
        return None
    return value


def _rows(frame, columns) -> list:
    return [[_plain(v) for v in row] for row in zip(*(frame[c].tolist() for c in columns))] if len(frame) else []


def sample_windows(ann) -> list:
    from epic_levels_pipeline.annotations.clips import all_windows

    clips = []
    for dataset in ("epic_sounds", "hd_epic"):
        windows = all_windows(ann, dataset)
        step = max(len(windows) // PER_DATASET, 1)
        clips += windows[::step][:PER_DATASET]
    return clips


def compute(ann=None) -> dict:
    """The digest of the sample's banks, on the staged files ``ann`` (loaded here unless given)."""
    from epic_levels_pipeline.annotations.catalogue import build_catalogue
    from epic_levels_pipeline.annotations.clip_rows import iter_clips_annotations
    from epic_levels_pipeline.annotations.readers import load_annotations
    from epic_levels_pipeline.bank.tables import POOL_COLUMNS, QUESTION_COLUMNS
    from epic_levels_pipeline.bank.build import build_bank
    from epic_levels_pipeline.bank.subtypes import BankConfig

    ann = ann if ann is not None else load_annotations(STAGED)
    cat = build_catalogue(ann)
    config = BankConfig()
    total = hashlib.sha256()
    per_clip: dict[str, str] = {}
    counts = {"clips": 0, "questions": 0, "pool_rows": 0, "drops": 0, "drop_reasons": 0}
    for clip, rows in iter_clips_annotations(ann, sample_windows(ann)):
        bank = build_bank(clip, rows, cat, config)
        assert list(bank.questions.columns) == QUESTION_COLUMNS
        assert list(bank.pools.columns) == POOL_COLUMNS
        payload = json.dumps({
            "questions": _rows(bank.questions, QUESTION_COLUMNS),
            "pools": _rows(bank.pools, POOL_COLUMNS),
            "drops": sorted(bank.drops.items()),
        }, sort_keys=True, default=str).encode()
        total.update(clip.key.encode() + b"\0" + payload + b"\0")
        per_clip[clip.key] = hashlib.sha256(payload).hexdigest()[:12]
        counts["clips"] += 1
        counts["questions"] += len(bank.questions)
        counts["pool_rows"] += len(bank.pools)
        counts["drops"] += sum(bank.drops.values())
        counts["drop_reasons"] += len(bank.drops)
    return {"counts": counts, "sha256": total.hexdigest(), "per_clip": per_clip}


@pytest.mark.skipif(not STAGED.is_dir(), reason=f"staged annotation files not present at {STAGED}")
def test_staged_sample_bank_matches_the_recorded_digest(staged):
    recorded = json.loads(FIXTURE.read_text())
    got = compute(staged)
    moved = sorted(k for k in recorded["per_clip"] if got["per_clip"].get(k) != recorded["per_clip"][k])
    assert got["counts"] == recorded["counts"], moved[:10]
    assert not moved, f"{len(moved)} clips' banks changed, e.g. {moved[:10]}"
    assert got == recorded


if __name__ == "__main__":
    if not STAGED.is_dir():
        raise SystemExit(f"staged annotation files not present at {STAGED}")
    FIXTURE.write_text(json.dumps(compute(), indent=1, sort_keys=True) + "\n")
    print(f"recorded {FIXTURE}", file=sys.stderr)
