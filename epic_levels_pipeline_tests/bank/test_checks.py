"""The blocking checks find the same problems whatever the frame looks like: columns in another order, extra
columns, lists read back from Parquet as arrays; and each tampering is caught with its question named."""

import json

import pandas as pd

from epic_levels_pipeline.bank.checks import key_problems, level_problems, option_problems
from epic_levels_pipeline.bank.clip_view import ClipView
from epic_levels_pipeline.annotations.clips import Clip
from epic_levels_pipeline.annotations.clip_rows import clip_annotations
from epic_levels_pipeline.annotations.clip_keys import read_manifest
from epic_levels_pipeline.bank.build import build_bank
from epic_levels_pipeline.formats.items import build_items, statement_truth_problems
from epic_levels_pipeline.storage.parquet import read_parquet, write_parquet

from ..conftest import ROOT


def _clip(bundled, dataset):
    ann, cat = bundled
    clip = next(c for c in read_manifest(ROOT / "data" / "clips.csv") if c.dataset == dataset)
    rows = clip_annotations(ann, clip)
    return clip, ClipView(clip, rows, cat), build_bank(clip, rows, cat).questions


def _tampered(questions: pd.DataFrame) -> pd.DataFrame:
    q = questions.copy()
    q.loc[0, "answer_index"] = (int(q.loc[0, "answer_index"]) + 1) % 4  # the key is no longer that option
    q.loc[1, "level"] = "L4" if q.loc[1, "level"] != "L4" else "L1"  # the level disagrees with the subtype
    options = list(q.loc[2, "options"])
    q.at[2, "options"] = [options[0], options[0]] + options[2:]  # two equal options
    return q


def _all_problems(questions, view):
    return key_problems(questions, view), level_problems(questions), option_problems(questions)


def test_checks_name_each_tampered_question_in_any_column_order(bundled, tmp_path):
    for dataset in ("epic_sounds", "hd_epic"):
        clip, view, questions = _clip(bundled, dataset)
        assert len(questions) >= 3 and _all_problems(questions, view) == ([], [], [])
        q = _tampered(questions)
        keys, levels, options = _all_problems(q, view)
        ids = list(q["question_id"])
        assert any(p.startswith(f"{ids[0]}: the key ") for p in keys), keys
        assert any(p.startswith(f"{ids[1]}: subtype ") for p in levels), levels
        assert any(p.startswith(f"{ids[2]}: options ") for p in options), options
        reordered = q[list(reversed(q.columns))].assign(extra=1)
        assert _all_problems(reordered, view) == (keys, levels, options)
        write_parquet(q, tmp_path / f"{dataset}.parquet")
        assert _all_problems(read_parquet([tmp_path / f"{dataset}.parquet"]), view) == (keys, levels, options)


def test_statement_truth_check_names_a_flipped_statement(bundled):
    clip, view, questions = _clip(bundled, "epic_sounds")
    items, _ = build_items(questions, view, bundled[1])
    assert statement_truth_problems(items, view, questions) == []
    row = items.index[items["format"] == "statements"][0]
    statements = json.loads(items.at[row, "statements"])
    statements[0]["truth"] = not statements[0]["truth"]
    flipped = items.copy()
    flipped.at[row, "statements"] = json.dumps(statements)
    problems = statement_truth_problems(flipped, view, questions)
    assert problems and problems[-1].startswith(f"{items.at[row, 'item_id']} A: stored truth "), problems
    assert statement_truth_problems(flipped[list(reversed(flipped.columns))], view, questions) == problems
