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
