"""``epic-levels run`` passes its flags as run configuration, never through the process environment."""

import json
import os

import pytest

from epic_levels_pipeline import cli, preflight
from epic_levels_pipeline.cli import run as run_command
from epic_levels_pipeline.orchestration import local as orchestrate
from epic_levels_pipeline.orchestration.local import RunReport


@pytest.fixture
def seen(monkeypatch) -> dict:
    """What ``epic-levels run`` hands to the pipeline (``seen["config"]``), without running it."""
    seen = {}

    def fake_run(paths, clip_keys=None, run_config=None):
        seen["config"] = run_config
        return RunReport(clips=[])

    monkeypatch.setattr(orchestrate, "run_pipeline", fake_run)
    monkeypatch.setattr(run_command, "print_summary", lambda *args: None)
    monkeypatch.delenv("EPIC_LEVELS_JUDGE_MODEL", raising=False)
    monkeypatch.setattr(preflight, "model_problems", lambda plan, env: [])  # (the servers' side: test_model_preflight)
    return seen


@pytest.fixture
def declared(tmp_path, monkeypatch):
    """A models file declaring the given models (``EPIC_LEVELS_MODEL_CONFIG``)."""
    def write(*names: str) -> str:
        path = tmp_path / "models.toml"
        path.write_text(f"evaluate = {json.dumps(list(names))}\n")
        monkeypatch.setenv("EPIC_LEVELS_MODEL_CONFIG", str(path))
        return str(path)
    return write


def test_run_flags_become_the_evaluation_resources_config(seen, declared):
    declared("vllm/m1", "vllm/m2", "vllm/m3")
    before = dict(os.environ)
    assert cli.main(["run", "--responders", "oracle", "--models", "vllm/m1,vllm/m2"]) == 0
    assert dict(os.environ) == before
    # no judge unless one is named: undecided open replies stay undecided
    assert seen["config"] == {"resources": {"evaluation": {"config": {
        "responders": "oracle", "models": "vllm/m1,vllm/m2"}}}}


def test_a_model_that_is_not_configured_stops_the_run_before_it_starts(seen, declared, capsys):
    assert cli.main(["run", "--models", "m1"]) == 2
    assert "config" not in seen
    assert "model 'm1' is not declared: add it to evaluate = [...] in models.toml" in capsys.readouterr().err
    path = declared("vllm/m1")
    assert cli.main(["run", "--models", "m1"]) == 2
    err = capsys.readouterr().err
    assert f"model 'm1' is not declared: add it to evaluate = [...] in {path}" in err
    assert "and define it as [models.m1]" in err and "config" not in seen


def test_endpoint_and_judge_flags_are_run_config_not_environment(seen, declared, monkeypatch):
    declared("vllm/Qwen/Qwen2.5-Omni-7B")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # the judge's (a hosted API)
    before = dict(os.environ)
    assert cli.main(["run", "--models", "vllm/Qwen/Qwen2.5-Omni-7B", "--endpoint", "http://127.0.0.1:8000/v1",
                     "--judge", "openai/gpt-4o-mini"]) == 0
    assert dict(os.environ) == before
    assert seen["config"]["resources"]["evaluation"]["config"] == {
        "responders": "oracle,chance,presence,blind", "models": "vllm/Qwen/Qwen2.5-Omni-7B",
        "endpoint": "http://127.0.0.1:8000/v1", "judge_model": "openai/gpt-4o-mini"}


def test_batch_media_resolution_and_fps_flags_become_run_config(seen, declared, monkeypatch):
    declared("gemini/m1")
    monkeypatch.setenv("GEMINI_API_KEY", "test")
    assert cli.main(["run", "--models", "gemini/m1", "--batch", "--media-resolution", "low", "--fps", "0.5"]) == 0
    assert seen["config"]["resources"]["evaluation"]["config"] == {
        "responders": "oracle,chance,presence,blind", "models": "gemini/m1",
        "batch": True, "media_resolution": "low", "fps": 0.5}


def test_project_instance_touches_no_process_state(tmp_path, monkeypatch):
    """The project's instance is opened without changing the working directory or DAGSTER_HOME: the
    config's relative folders are resolved against the project root."""
    import os
    import shutil
    from pathlib import Path

    from epic_levels_pipeline.orchestration.local import project_instance
    from epic_levels_pipeline.settings import Paths

    root = tmp_path / "project"
    (root / "data").mkdir(parents=True)
    shutil.copy2(Path(__file__).resolve().parents[1] / "dagster.yaml", root / "dagster.yaml")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    with project_instance(Paths(root)) as instance:
        instance.add_dynamic_partitions("clips", ["epic_sounds__P09_08__45-75"])
        assert Path.cwd() == elsewhere and "DAGSTER_HOME" not in os.environ
    assert (root / "data" / "dagster" / "storage").is_dir()
    assert not (elsewhere / "data").exists()
    with project_instance(Paths(root)) as again:  # the same instance, opened again
        assert again.get_dynamic_partitions("clips") == ["epic_sounds__P09_08__45-75"]


def test_a_failed_run_prints_what_failed_and_where_and_no_table(monkeypatch, capsys):
    """Nothing stale shown as current: after a failure the command names each failed run, its failed steps and
    where to read them, and prints none of the warehouse's tables (they may be earlier runs')."""
    shown = []
    report = RunReport(clips=["epic_sounds__P09_08__45-75"], runs=2, failed=["annotation tables"],
                       run_ids=["run-a", "run-b"], failures={"annotation tables": "run-b"},
                       details={"run-b": ["annotation_tables: annotation files not valid"]})
    monkeypatch.setattr(orchestrate, "run_pipeline", lambda *a, **k: report)
    monkeypatch.setattr(run_command, "print_summary", lambda *args: shown.append(args))
    assert cli.main(["run"]) == 1
    out, err = capsys.readouterr()
    assert shown == []
    assert "annotation tables: run run-b" in err and "annotation_tables: annotation files not valid" in err
    assert "http://127.0.0.1:3000/runs/<run id>" in err and "No table is printed" in err
    assert "Question bank" not in out + err
