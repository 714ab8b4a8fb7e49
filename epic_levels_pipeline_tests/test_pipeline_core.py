"""The pure core runs the whole offline pipeline (no Dagster) on bundled clips, with a perfect oracle."""

from pathlib import Path

import pytest

from epic_levels_pipeline.annotations.clips import Clip
from epic_levels_pipeline.formats.registry import ITEM_FORMATS as FORMATS
from epic_levels_pipeline.pipeline import CoreResult, run_core
from epic_levels_pipeline.settings import Paths

ROOT = Path(__file__).resolve().parents[1]
# Two responders keep the scored tables quick (tables.scores costs per group, whatever n_boot is).
RESPONDERS = ("oracle", "chance")
KEYS = ["epic_sounds__P09_08__45-75", "epic_sounds__P02_133__15-45", "hd_epic__P09-20240623-120359__1440-1470"]


@pytest.fixture(scope="module")
def result() -> CoreResult:
    return run_core(Paths(ROOT), [Clip.from_key(k) for k in KEYS], responders=RESPONDERS, n_boot=50)


def test_questions_for_every_clip(result):
    per_clip = result.questions.groupby("clip_key").size()
    for key in KEYS:
        assert per_clip.get(key, 0) > 0, f"no questions for {key}"
    assert set(result.items["question_id"]) == set(result.questions["question_id"])


def test_oracle_is_perfect_under_clip_in_every_format(result):
    s = result.scores
    top = s[(s["responder"] == "oracle") & (s["condition"] == "clip") & (s["dataset"] == "*")
            & (s["level"] == "*") & (s["subtype"] == "*") & (s["format"] != "*")]
    formats = set(top["format"])
    assert {"yes_no", "multiple_choice", "statements", "open_with_reason"} <= formats <= set(FORMATS)
    assert formats & {"open", "option_judgement"}
    for row in top.itertuples():
        assert row.n > 0
        assert row.chance_corrected == pytest.approx(1.0), (row.format, row.accuracy, row.chance)


def test_tables_cover_every_response(result):
    assert len(result.verdicts) == len(result.responses) > 0
    assert set(result.responses["responder"]) == set(RESPONDERS)
    # epic_sounds clips are asked under clip, no_clip and silenced; hd_epic under clip and no_clip.
    by = result.responses.groupby("dataset")["condition"].agg(set)
    assert by["epic_sounds"] == {"clip", "no_clip", "silenced"}
    assert by["hd_epic"] == {"clip", "no_clip"}
    assert len(result.paired) and len(result.shortcut_audit) and len(result.over_marking.columns)


def test_unknown_responder_is_refused():
    with pytest.raises(ValueError, match="unknown offline responders"):
        run_core(Paths(ROOT), [], responders=("oracle", "psychic"))
