"""Replies from another harness: checked line by line, stored, scored like a model called here."""

import json

import pandas as pd
import pytest

from epic_levels_pipeline.cli import main
from epic_levels_pipeline.scoring.metrics.tables import scores
from epic_levels_pipeline.scoring.verdicts import verdicts
from epic_levels_pipeline.sharing.export import load_export
from epic_levels_pipeline.sharing.null import shuffled_replies
from epic_levels_pipeline.sharing.replies import external_responses, stored_models


def perfect_lines(out) -> list[dict]:
    """One reply per item × condition: the export's answer column."""
    return [{"item_id": r.item_id, "condition": c, "reply": r.answer}
            for r in load_export(out).itertuples(index=False) for c in r.conditions]


def shuffled(lines: list[dict], items, seed: int = 0) -> list[dict]:
    """The same replies moved to other items of the same format, stated reply form and condition."""
    return shuffled_replies(lines, items, seed)


def write_jsonl(path, lines):
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def scored(paths, items) -> pd.DataFrame:
    """The graph's path for one project's stored replies: responses per clip → verdicts → scores (no judge)."""
    stored = stored_models(paths.data)
    responses = pd.concat([external_responses(k, g, stored) for k, g in items.groupby("clip_key")], ignore_index=True)
    s = scores(verdicts(responses, items), n_boot=20)
    return s[(s["dataset"] == "*") & (s["level"] == "*") & (s["subtype"] == "*") & (s["distractor_strategy"] == "*")]


@pytest.fixture
def project(exported, tmp_path, monkeypatch):
    paths, out = exported
    monkeypatch.setenv("EPIC_LEVELS_HOME", str(paths.root))
    yield paths, out
    for f in (paths.data / "replies").glob("*.parquet"):
        f.unlink()


def test_perfect_replies_score_one_and_shuffled_near_zero(project, offline_bank, tmp_path, capsys):
    paths, out = project
    lines = perfect_lines(out)
    assert main(["import-replies", str(write_jsonl(tmp_path / "perfect.jsonl", lines)), "--model", "perfect"]) == 0
    assert "imported" in capsys.readouterr().out
    table = scored(paths, offline_bank["items"])
    assert set(table["format"]) >= {"yes_no", "multiple_choice", "statements", "open", "option_judgement",
                                    "open_with_reason"}
    assert (table["chance_corrected"] == 1.0).all() and (table["n_skipped"] == 0).all()
    assert set(table["responder"]) == {"external"} and set(table["model"]) == {"perfect"}

    assert main(["import-replies", str(write_jsonl(tmp_path / "s.jsonl", shuffled(lines, offline_bank["items"]))), "--model", "perfect"]) == 0
    table = scored(paths, offline_bank["items"]).set_index(["condition", "format"])
    for condition in ("clip", "no_clip"):
        pooled = table.loc[(condition, "*"), "chance_corrected"]
        assert abs(pooled) <= 0.1, (condition, pooled)
        for fmt in ("yes_no", "multiple_choice", "statements", "option_judgement"):
            assert abs(table.loc[(condition, fmt), "chance_corrected"]) <= 0.1, (condition, fmt)


def test_csv_replies(project, offline_bank, tmp_path):
    paths, out = project
    pd.DataFrame(perfect_lines(out)[:40]).to_csv(tmp_path / "r.csv", index=False)
    assert main(["import-replies", str(tmp_path / "r.csv"), "--model", "part"]) == 0
    stored = stored_models(paths.data)["part"]
    assert len(stored) == 40 and stored["source_sha256"].nunique() == 1
    rows = external_responses(stored["clip_key"].iloc[0], offline_bank["items"].query(
        f"clip_key == '{stored['clip_key'].iloc[0]}'"), {"part": stored})
    assert set(rows["status"]) == {"ok", "skipped"} and set(rows["provider"]) == {"external"}


def test_bad_lines_named_and_nothing_written(project, tmp_path, capsys):
    paths, out = project
    good = perfect_lines(out)[:3]
    lines = [json.dumps(good[0]), json.dumps(good[1]), json.dumps(good[0]),
             json.dumps({"item_id": "nope", "condition": "clip", "reply": "Answer: A"}),
             json.dumps({"item_id": good[2]["item_id"], "reply": "x"}), "{not json",
             json.dumps({**good[2], "condition": "dark"})]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert main(["import-replies", str(path), "--model", "bad"]) == 1
    err = capsys.readouterr().err
    for n, word in ((3, "duplicate"), (4, "unknown item_id"), (5, "missing condition"), (6, "not JSON"),
                    (7, "condition 'dark'")):
        assert f"{path}:{n}: " in err and word in err.split(f"{path}:{n}: ")[1].splitlines()[0]
    assert f"{path}:1:" not in err and "nothing imported" in err
    assert "bad" not in stored_models(paths.data)
