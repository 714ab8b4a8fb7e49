"""The question-bank benchmark tallies a clip's questions from column lists read without building a Series:
they equal ``frame[name].tolist()`` for every column of real question frames, an empty one and frames of
other column types."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from epic_levels_pipeline.annotations.clip_rows import clip_annotations
from epic_levels_pipeline.annotations.clip_keys import read_manifest
from epic_levels_pipeline.bank.build import build_bank

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_question_bank", ROOT / "bench" / "question_bank.py")
    module = sys.modules.setdefault(spec.name, importlib.util.module_from_spec(spec))  # (its dataclasses look it up)
    spec.loader.exec_module(module)
    return module


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(type(x) is type(y) and (x is y or pd.isna(x) is pd.isna(y) is True or x == y)
                                    for x, y in zip(a, b))


def test_column_lists_read_the_table_the_bank_writes(bundled):
    """The bench tallies a bank's Arrow table (``Bank.question_table``): each column's list is the readers'
    frame column, value for value, on real banks and on an empty one."""
    column_list = _bench().column_list
    ann, cat = bundled
    banks = [build_bank(clip, clip_annotations(ann, clip), cat) for clip in read_manifest(ROOT / "data" / "clips.csv")[:4]]
    assert any(len(b.questions) for b in banks)
    for bank in banks:
        for name in ("subtype", "level", "distractor_strategy", "answer_index", "can_stand_alone"):
            assert _same(column_list(bank.question_table, name), bank.questions[name].tolist()), name
