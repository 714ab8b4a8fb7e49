"""``epic-levels run`` passes its flags as run configuration, never through the process environment."""

import os

from epic_levels_pipeline import cli, orchestrate
from epic_levels_pipeline.orchestrate import RunReport


def _capture_run(monkeypatch) -> dict:
    seen = {}

    def fake_run(paths, clip_keys=None, run_config=None):
        seen["config"] = run_config
        return RunReport(clips=[])

    monkeypatch.setattr(orchestrate, "run_pipeline", fake_run)
    monkeypatch.setattr(cli, "_print_summary", lambda paths: None)
    monkeypatch.delenv("EPIC_LEVELS_JUDGE_MODEL", raising=False)
    return seen


def test_run_flags_become_the_evaluation_resources_config(monkeypatch):
    seen = _capture_run(monkeypatch)
    before = dict(os.environ)
    assert cli.main(["run", "--responders", "oracle", "--models", "m1,m2"]) == 0
    assert dict(os.environ) == before
    assert seen["config"] == {"resources": {"evaluation": {"config": {
        "responders": "oracle", "models": "m1,m2", "judge_model": "m1"}}}}


def test_batch_media_resolution_and_fps_flags_become_run_config(monkeypatch):
    seen = _capture_run(monkeypatch)
    assert cli.main(["run", "--models", "m1", "--batch", "--media-resolution", "low", "--fps", "0.5"]) == 0
    assert seen["config"]["resources"]["evaluation"]["config"] == {
        "responders": "oracle,chance,presence,blind", "models": "m1", "judge_model": "m1", "batch": True,
        "media_resolution": "low", "fps": 0.5}
