"""``epic-levels run`` passes its flags as run configuration, never through the process environment."""

import os

import pytest

from epic_levels_pipeline import cli, orchestrate
from epic_levels_pipeline.orchestrate import RunReport


@pytest.fixture
def seen(monkeypatch) -> dict:
    """What ``epic-levels run`` hands to the pipeline (``seen["config"]``), without running it."""
    seen = {}

    def fake_run(paths, clip_keys=None, run_config=None):
        seen["config"] = run_config
        return RunReport(clips=[])

    monkeypatch.setattr(orchestrate, "run_pipeline", fake_run)
    monkeypatch.setattr(cli, "_print_summary", lambda paths: None)
    return seen


def test_run_flags_become_the_evaluation_resources_config(monkeypatch, seen):
    monkeypatch.delenv("EPIC_LEVELS_JUDGE_MODEL", raising=False)
    before = dict(os.environ)
    assert cli.main(["run", "--responders", "oracle", "--models", "m1,m2"]) == 0
    assert dict(os.environ) == before
    assert seen["config"] == {"resources": {"evaluation": {"config": {
        "responders": "oracle", "models": "m1,m2", "judge_model": "m1"}}}}


def test_endpoint_and_judge_flags_are_run_config_not_environment(seen):
    before = dict(os.environ)
    assert cli.main(["run", "--models", "vllm/Qwen/Qwen2.5-Omni-7B", "--endpoint", "http://127.0.0.1:8000/v1",
                     "--judge", "openai/gpt-4o-mini"]) == 0
    assert dict(os.environ) == before
    assert seen["config"]["resources"]["evaluation"]["config"] == {
        "responders": "oracle,chance,presence,blind", "models": "vllm/Qwen/Qwen2.5-Omni-7B",
        "endpoint": "http://127.0.0.1:8000/v1", "judge_model": "openai/gpt-4o-mini"}
