"""``judges = [...]`` in the models file: validated before any call; the run's judges and whose verdict counts."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from epic_levels_pipeline.defs.evaluation import EvaluationResource
from epic_levels_pipeline.responses.models_config import ModelConfigError, load_models_file

ENTRIES = """
[models.local-a]
provider = "vllm"
model = "judge-a"
endpoint = "http://127.0.0.1:8001/v1"

[models.local-b]
provider = "vllm"
model = "judge-b"
endpoint = "http://127.0.0.1:8002/v1"

[models.asked]
provider = "vllm"
model = "m"
endpoint = "http://127.0.0.1:8003/v1"
"""


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for var in ("EPIC_LEVELS_JUDGE_MODEL", "EPIC_LEVELS_MODEL_CONFIG", "EPIC_LEVELS_MODELS"):
        monkeypatch.delenv(var, raising=False)


def write(tmp_path: Path, head: str) -> Path:
    path = tmp_path / "models.toml"
    path.write_text(head + "\n" + ENTRIES)
    return path


def test_judges_are_read_and_checked(tmp_path):
    f = load_models_file(write(tmp_path, 'judge = "majority"\njudges = ["local-a", "local-b", "openai/gpt-4o-mini"]'))
    assert f.judge == "majority" and f.judges == ("local-a", "local-b", "openai/gpt-4o-mini")
    for head, message in (('judge = "majority"\njudges = ["local-a"]', "needs at least two judges"),
                          ('judges = ["local-a", "nope"]', "'nope' is not a [models.NAME]"),
                          ('judges = ["local-a", "local-a"]', "local-a listed more than once"),
                          ('judges = "local-a"', "must be a list")):
        with pytest.raises(ModelConfigError, match=r"models\.toml: (judges|judge): .*" + message.replace("[", r"\[")
                           .replace("]", r"\]")):
            load_models_file(write(tmp_path, head))


def test_the_panel_of_a_run(tmp_path):
    path = write(tmp_path, 'judge = "local-b"\njudges = ["local-a"]')
    panel, verdict = EvaluationResource(model_config_file=str(path), models="").judge_panel()
    assert [name for name, *_ in panel] == ["local-b", "local-a"] and verdict == "local-b"  # the judge leads
    path = write(tmp_path, 'judges = ["local-a", "local-b"]')
    panel, verdict = EvaluationResource(model_config_file=str(path), models="").judge_panel()
    assert [name for name, *_ in panel] == ["local-a", "local-b"] and verdict == "local-a"  # else the first
    path = write(tmp_path, 'judge = "majority"\njudges = ["local-a", "local-b"]')
    assert EvaluationResource(model_config_file=str(path), models="").judge_panel()[1] == "majority"
    one = EvaluationResource(model_config_file=str(write(tmp_path, 'judge = "local-a"')), models="").judge_panel()
    assert [name for name, *_ in one[0]] == ["local-a"] and one[1] == "local-a"
    none = EvaluationResource(model_config_file=str(write(tmp_path, "")), models="").judge_panel()
    assert none == ([], "")


def test_a_judge_that_is_a_model_of_the_run_is_refused_unless_asked(tmp_path):
    path = write(tmp_path, 'evaluate = ["asked"]\njudges = ["local-a", "asked"]')
    with pytest.raises(dg.Failure, match="judge asked is also an evaluated model"):
        EvaluationResource(model_config_file=str(path), models="asked").judge_panel()
    panel, _ = EvaluationResource(model_config_file=str(path), models="asked", allow_self_judge=True).judge_panel()
    assert [own for *_, own in panel] == [False, True]
