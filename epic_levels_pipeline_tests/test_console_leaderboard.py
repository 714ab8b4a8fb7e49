"""``epic-levels run`` ends with a compact leaderboard: one row per responder and model (three imported models are
three named rows, not three indistinguishable ``external`` rows), a column per level, best first, and says where the
report and the UI are."""

from __future__ import annotations

import pandas as pd

from epic_levels_pipeline.cli.run import print_leaderboard
from epic_levels_pipeline.reporting.sections import compact_leaderboard


def _scores() -> pd.DataFrame:
    rows = []
    cc = {("oracle", "offline"): 1.0, ("external", "model-a"): 0.4, ("external", "model-b"): 0.6,
          ("external", "model-c"): 0.2}
    for (responder, model), value in cc.items():
        for condition, shift in (("clip", 0.0), ("no_clip", -0.2)):
            for level, n in (("L1", 12), ("L2", 5), ("*", 17)):
                rows.append({"responder": responder, "model": model, "dataset": "*", "subtype": "*",
                             "distractor_strategy": "*", "format": "*", "condition": condition, "level": level,
                             "n": n, "n_clips": 3, "chance_corrected": value + shift, "ci_low": value - 0.1,
                             "ci_high": value + 0.1})
    return pd.DataFrame(rows)


def test_one_named_row_per_model_and_a_column_per_level_best_first():
    board = compact_leaderboard(_scores())
    assert list(board.columns) == ["responder", "model", "all", "n", "L1", "L2", "no_clip"]
    assert list(zip(board["responder"], board["model"])) == [
        ("oracle", "offline"), ("external", "model-b"), ("external", "model-a"), ("external", "model-c")]
    assert board.loc[1, "no_clip"] == 0.6 - 0.2 and board.loc[1, "n"] == 17


def test_the_printed_leaderboard_names_each_model(capsys):
    print_leaderboard(_scores())
    lines = capsys.readouterr().out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("responder"))
    assert lines[header].split() == ["responder", "model", "all", "n", "L1", "L2", "no_clip"]
    assert lines[header + 2].split()[:3] == ["external", "model-b", "0.600"]


def _paired() -> pd.DataFrame:
    rows = []
    for condition in ("clip", "no_clip"):
        for level in ("L1", "*"):
            for fmt in ("yes_no", "*"):
                rows.append({"responder": "*", "model": "*", "kind": "model", "condition": condition, "level": level,
                             "format": fmt, "a": "external/model-a", "b": "model-b", "n_pairs": 17, "both": 5,
                             "only_a": 2, "only_b": 6, "neither": 4, "diff": -4 / 17, "diff_ci_low": -0.45,
                             "diff_ci_high": 0.05, "mcnemar_p": 0.3125, "accuracy_a": 7 / 17, "accuracy_b": 11 / 17})
    rows.append({**rows[0], "kind": "format", "responder": "external", "model": "model-b", "a": "multiple_choice",
                 "b": "yes_no"})
    return pd.DataFrame(rows)


def test_one_line_per_pair_of_models_under_the_leaderboard(capsys):
    print_leaderboard(_scores(), _paired())
    lines = capsys.readouterr().out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("A "))
    assert lines[header].split() == ["A", "B", "diff", "95", "%", "interval", "p", "n"]
    assert lines[header + 1].split() == ["external/model-a", "model-b", "-0.235", "[-0.450,", "+0.050]", "0.312", "17"]
    assert len(lines) == header + 2  # the clip condition, all levels and formats: one line for the one pair


def test_no_model_pairs_print_no_comparison(capsys):
    print_leaderboard(_scores(), _paired().iloc[-1:])
    assert "Models compared" not in capsys.readouterr().out
