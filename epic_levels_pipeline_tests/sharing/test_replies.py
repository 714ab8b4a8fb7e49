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


def test_two_imported_models_are_compared_on_the_same_items(project, offline_bank, tmp_path):
    """Two replies files imported under two NAMEs (perfect, shuffled) are two models of responder external: each
    clip's pair_partials hold the pair, and paired_comparisons (from the partials, as from every verdict) compares
    them item by item (kind model), as external/NAME, per level x condition x format."""
    from epic_levels_pipeline.scoring.metrics import partials as P
    from epic_levels_pipeline.scoring.metrics.tables import paired_comparisons

    paths, out = project
    lines = perfect_lines(out)
    assert main(["import-replies", str(write_jsonl(tmp_path / "p.jsonl", lines)), "--model", "perfect"]) == 0
    assert main(["import-replies", str(write_jsonl(tmp_path / "s.jsonl", shuffled(lines, offline_bank["items"]))),
                 "--model", "shuffled"]) == 0
    stored, items = stored_models(paths.data), offline_bank["items"]
    clips = sorted(items["clip_key"].unique())[:4]
    v = pd.concat([verdicts(external_responses(k, items[items["clip_key"] == k], stored), items[items["clip_key"] == k])
                   for k in clips], ignore_index=True)
    table = P.paired_from_partials(P.combine("pair_partials", *[P.pair_partials(v[v["clip_key"] == k]) for k in clips]),
                                   n_boot=100)
    reference = paired_comparisons(v, n_boot=100)
    pd.testing.assert_frame_equal(table, reference, check_dtype=False, rtol=0, atol=1e-12)
    models = table[table["kind"] == "model"].set_index(["level", "condition", "format"])
    assert set(zip(models["a"], models["b"])) == {("external/perfect", "external/shuffled")}
    for condition in ("clip", "no_clip"):
        top = models.loc[("*", condition, "*")]
        assert top["accuracy_a"] == 1.0 and top["only_b"] == 0 and top["diff"] > 0.5
        assert top["diff_ci_low"] > 0 and top["mcnemar_p"] == 2.0 ** (1 - len(clips))  # every clip leans to A
    assert set(models.index.get_level_values("format")) >= {"*", "yes_no", "multiple_choice", "open"}
