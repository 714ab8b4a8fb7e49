"""The export: loads with ``datasets``, one row per item, answers the rules score correct, same bytes twice."""

import json

import datasets
import pandas as pd
import pytest

from epic_levels_pipeline.cli import main
from epic_levels_pipeline.formats.registry import rule_verdict
from epic_levels_pipeline.sharing.export import EXPORT_COLUMNS, ExportError, export_from_store, load_export
from epic_levels_pipeline.storage.table_store import TableStore


def _files(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_loads_with_datasets_one_row_per_item(exported, offline_bank, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    _, out = exported
    items = offline_bank["items"]
    for fmt, expected in items.groupby("format").size().items():
        loaded = datasets.load_dataset(str(out), fmt, cache_dir=str(tmp_path / "hf"))
        assert sum(len(split) for split in loaded.values()) == expected, fmt
        assert set(loaded) == set(items.loc[items["format"] == fmt, "dataset"])
        first = next(iter(loaded.values()))
        assert list(first.features) == EXPORT_COLUMNS
        assert set(first["format"]) == {fmt}


def test_prompts_are_the_items_and_answers_score_correct(exported, offline_bank):
    _, out = exported
    rows = load_export(out)
    items = offline_bank["items"].set_index("item_id")
    assert len(rows) == len(items) and rows["item_id"].is_unique
    by_id = {i.item_id: i for i in offline_bank["items"].itertuples(index=False)}
    verdicts = [rule_verdict(by_id[r.item_id], r.answer) for r in rows.itertuples(index=False)]
    assert all(v[1] is True and v[2] == "rule" for v in verdicts)
    assert (rows.set_index("item_id")["prompt"] == items.loc[rows["item_id"], "prompt"]).all()
    mc = rows[rows["format"] == "multiple_choice"].iloc[0]
    assert list(mc["options"]) == list(items.loc[mc["item_id"], "options"])
    jsonl = [json.loads(line) for f in sorted((out / "jsonl").rglob("*.jsonl")) for line in f.read_text().splitlines()]
    assert sorted(r["item_id"] for r in jsonl) == sorted(rows["item_id"])


def test_clips_csv_and_card(exported, offline_bank):
    _, out = exported
    clips = pd.read_csv(out / "clips.csv")
    assert list(clips.columns[:4]) == ["dataset", "video_id", "start", "end"]
    assert set(clips["clip_id"]) == set(offline_bank["items"]["clip_key"])
    card = (out / "README.md").read_text()
    assert card.startswith("---\nlicense: cc-by-nc-4.0\n")
    for needle in ("configs:", "dataset_info:", "EPIC-KITCHENS-100", "EPIC-SOUNDS", "HD-EPIC", "| level | subtype |"):
        assert needle in card
    assert "&id" not in card  # no YAML anchors


def test_same_bank_same_bytes(exported, tmp_path, capsys, monkeypatch):
    paths, out = exported
    monkeypatch.setenv("EPIC_LEVELS_HOME", str(paths.root))
    assert main(["export", "--out", str(tmp_path / "again")]) == 0
    assert "items to" in capsys.readouterr().out
    first, second = _files(out), _files(tmp_path / "again")
    assert first.keys() == second.keys() and first == second


def test_nothing_materialized_says_which_run(tmp_path):
    with pytest.raises(ExportError, match="epic-levels run"):
        export_from_store(TableStore(tmp_path / "assets"), tmp_path / "out")
