"""One grammar for the command line: comma-separated lists everywhere (the former space-separated ``--clips A B``
still read, with a deprecation warning), help on every option, ``--version``, the stated exit codes, and the
options the first-hour review found missing (``report --out``, ``estimate --endpoint``, ``--annotations`` on the
commands that read the project's data)."""

from __future__ import annotations

import argparse

import pytest

from epic_levels_pipeline import cli
from epic_levels_pipeline.cli import run as run_command
from epic_levels_pipeline.orchestration import local as orchestrate
from epic_levels_pipeline.orchestration.local import RunReport

CLIPS = ["epic_sounds__P09_08__45-75", "epic_sounds__P02_133__15-45"]


@pytest.fixture
def seen(monkeypatch) -> dict:
    """What ``epic-levels run`` hands to the pipeline, without running it."""
    seen = {}

    def fake_run(paths, clip_keys=None, run_config=None):
        seen["clips"] = clip_keys
        return RunReport(clips=clip_keys or [])

    monkeypatch.setattr(orchestrate, "run_pipeline", fake_run)
    monkeypatch.setattr(run_command, "print_summary", lambda *args: None)
    return seen


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = cli.build_parser()
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def test_clips_are_comma_separated_and_the_space_separated_form_still_works_with_a_warning(seen, capsys):
    assert cli.main(["run", "--clips", ",".join(CLIPS)]) == 0
    assert seen["clips"] == CLIPS and "deprecated" not in capsys.readouterr().err
    assert cli.main(["run", "--clips", *CLIPS, "--responders", "oracle"]) == 0
    assert seen["clips"] == CLIPS
    err = capsys.readouterr().err
    assert "space-separated values are deprecated" in err and f"--clips {','.join(CLIPS)}" in err
    assert cli.main(["run", "--clips"]) == 0 and seen["clips"] is None  # no value: every clip, as before


def test_every_option_of_every_command_has_help_and_every_list_option_says_comma_separated():
    for name, command in _commands().items():
        for action in command._actions:
            assert action.help, (name, action.dest)
            if action.dest in ("clips", "models", "responders", "datasets", "videos"):
                assert "comma-separated" in action.help, (name, action.dest)
    run = _commands()["run"]
    responders = next(a for a in run._actions if a.dest == "responders")
    assert "oracle, chance, presence, blind" in responders.help and responders.default == "oracle,chance,presence,blind"


def test_version_usage_errors_and_configuration_errors_exit_as_stated(capsys, tmp_path, monkeypatch):
    assert cli.main(["--version"]) == 0 and capsys.readouterr().out.startswith("epic-levels ")
    assert cli.main(["run", "--responders", "oracle,nobody"]) == 2
    assert "unknown offline responders nobody" in capsys.readouterr().err
    assert cli.main(["no-such-command"]) == 2
    assert cli.main(["questions"]) == 2  # --clip is required
    assert cli.main(["questions", "--clip", "not a key"]) == 2  # a clip key that is not one: usage
    monkeypatch.setenv("EPIC_LEVELS_HOME", str(tmp_path))
    assert cli.main(["import-mcq", "--annotations", str(tmp_path)]) == 2  # no VQA files to import: configuration
    assert "no vqa-benchmark folder under the annotations root" in capsys.readouterr().err
    assert "Exit codes: 0 done; 1 findings" in cli.EPILOG and cli.build_parser().epilog == cli.EPILOG


def test_report_writes_where_out_says(project, tmp_path, capsys):
    out = tmp_path / "elsewhere"
    assert cli.main(["report", "--out", str(out)]) == 0
    assert (out / "report.html").exists() and (out / "report.md").exists()
    assert str(out / "report.html") in capsys.readouterr().out


def test_estimate_takes_an_endpoint_and_clips(monkeypatch):
    import epic_levels_pipeline.estimate as core

    asked = {}

    def fake_estimate(paths, models, **kwargs):
        asked.update(kwargs, models=models)
        raise ValueError("stop here")

    monkeypatch.setattr(core, "estimate", fake_estimate)
    assert cli.main(["estimate", "--models", "vllm/m", "--endpoint", "http://127.0.0.1:9/v1",
                     "--clips", CLIPS[0]]) == 2
    assert asked["endpoint"] == "http://127.0.0.1:9/v1" and [c.key for c in asked["clips"]] == CLIPS[:1]


@pytest.mark.parametrize("command", ["run", "validate", "windows", "media", "questions", "captions", "report",
                                     "estimate", "import-mcq", "export"])
def test_every_command_that_reads_the_project_data_takes_annotations(command):
    assert "--annotations" in _commands()[command]._option_string_actions
