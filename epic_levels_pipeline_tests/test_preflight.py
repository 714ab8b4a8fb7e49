"""The pre-flight (``preflight.py``): every input of a run checked before anything starts, one line per problem.

``epic-levels run`` exits 2 with those lines and writes nothing (no instance, no table); the same checks refuse
a run the UI or the daemon starts (``orchestration/test_dead_runs.py``). Each bad input below is one the
reliability probes fed to ``run`` on the code before the pre-flight (issue 41).
"""

from __future__ import annotations

import pytest

from epic_levels_pipeline import cli, preflight as preflight_module
from epic_levels_pipeline.annotations.clip_keys import read_manifest
from epic_levels_pipeline.errors import ManifestError
from epic_levels_pipeline.preflight import CHECKS, RunInputs, preflight

UNKNOWN_VIDEO = "epic_sounds,P99_99,0,30"  # no EPIC-SOUNDS or EPIC-KITCHENS-100 row has video P99_99
PAST_THE_END = "epic_sounds,P09_08,120,150"  # P09_08 lasts 126.460 s (EPIC_100_video_info.csv)


@pytest.fixture(autouse=True)
def no_models_env(monkeypatch):
    for name in ("EPIC_LEVELS_MODEL_CONFIG", "EPIC_LEVELS_ANNOTATIONS"):
        monkeypatch.delenv(name, raising=False)


def append(path, *lines):
    path.write_text(path.read_text() + "".join(f"{line}\n" for line in lines))


def checked(project, **kwargs):
    return preflight(RunInputs(project, **kwargs))


def test_the_bundled_project_passes(project):
    found = checked(project)
    assert found.ok and found.problems == [] and found.notes == []


@pytest.mark.parametrize("text, line", [
    ('[data]\nanotations = "data/annotations"\n', "[data].anotations: unknown key (known: annotations, media)"),
    ('[datta]\nmedia = "x"\n', "[datta]: unknown table (known tables: [data])"),
    ('annotations = "x"\n', "annotations: unknown key outside any table (known tables: [data])"),
    ('[data]\nmedia = 3\n', "[data].media: must be a string (a folder path)"),
    ('[data\n', "epic-levels.toml: "),
])
def test_every_problem_of_the_project_file_is_one_line(project, text, line):
    (project.root / "epic-levels.toml").write_text(text)
    found = checked(project)
    assert len(found.problems) == 1
    assert found.problems[0].startswith(str(project.root / "epic-levels.toml")) and line in found.problems[0]


def test_the_models_file_is_checked_by_its_own_loader(project):
    (project.root / "models.toml").write_text('[models.local]\nprovider = "vllm"\nmodel = "m"\nspeed = 3\n')
    found = checked(project)
    assert len(found.problems) == 1
    assert found.problems[0].startswith(f"{project.root / 'models.toml'}: [models.local].speed: unknown key (known: ")
    named = checked(project, evaluation={"model_config_file": str(project.root / "elsewhere.toml")})
    assert named.problems == [f"{project.root / 'elsewhere.toml'}: no such models file"]


def test_a_clip_whose_video_has_no_rows_names_file_row_and_video(project):
    append(project.manifest, UNKNOWN_VIDEO)
    row = len(project.manifest.read_text().splitlines())
    found = checked(project)
    assert found.problems == [
        f"{project.manifest}:{row}:video_id: video P99_99 has no rows in any epic_sounds annotation table (sounds, "
        "narrations); fix the row, remove it, or mark it deliberate (a `deliberate` column with yes) to keep it"]


def test_a_window_past_the_videos_end_is_refused(project):
    append(project.manifest, PAST_THE_END)
    found = checked(project)
    assert len(found.problems) == 1
    assert ":end_s: window 120-150 s of video P09_08 ends past the video's end (126.460 s)" in found.problems[0]


def test_a_row_marked_deliberate_is_kept_and_reported(project):
    lines = project.manifest.read_text().splitlines()
    lines[0] += ",deliberate"
    project.manifest.write_text("\n".join(lines + [UNKNOWN_VIDEO + ",yes", PAST_THE_END + ",no"]) + "\n")
    found = checked(project)
    assert len(found.problems) == 1 and "P09_08" in found.problems[0]  # "no" is not deliberate
    assert found.notes == [f"{project.manifest}:{len(lines) + 1}:video_id: kept (marked deliberate): video P99_99 "
                           "has no rows in any epic_sounds annotation table (sounds, narrations)"]
    assert [c.key for c in read_manifest(project.manifest)][-2:] == ["epic_sounds__P99_99__0-30",
                                                                     "epic_sounds__P09_08__120-150"]


def test_the_deliberate_mark_is_yes_or_no(project):
    lines = project.manifest.read_text().splitlines()
    project.manifest.write_text("\n".join([lines[0] + ",deliberate", lines[1] + ",maybe"]) + "\n")
    with pytest.raises(ManifestError, match=":2:deliberate: 'maybe' is not yes or no"):
        read_manifest(project.manifest)
    assert checked(project).problems == [f"{project.manifest}:2:deliberate: 'maybe' is not yes or no (empty: no)"]


def test_clips_given_on_the_command_line_are_checked_too(project):
    found = checked(project, clip_keys=["epic_sounds__P09_08__45-75", "epic_sounds__P98_01__0-30"])
    assert found.problems == ["--clips:2:video_id: video P98_01 has no rows in any epic_sounds annotation table "
                              "(sounds, narrations); fix the row, remove it, or mark it deliberate (a `deliberate` "
                              "column with yes) to keep it"]


def test_the_annotations_root_must_exist_and_load(project, monkeypatch):
    (project.root / "epic-levels.toml").write_text('[data]\nannotations = "nowhere"\n')
    found = checked(project)
    assert found.problems == [f"{project.root / 'nowhere'}: the annotations root is not a folder (no such folder; "
                              "chosen by --annotations, $EPIC_LEVELS_ANNOTATIONS, [data].annotations of "
                              "epic-levels.toml, else data/annotations)"]
    (project.root / "epic-levels.toml").unlink()
    sounds = project.annotations / "epic-sounds" / "EPIC_Sounds_validation.csv"
    sounds.write_text(sounds.read_text().replace("P09_08_13,P09,P09_08,00:00:47.662", "P09_08_13,P09,P09_08,00:00:4x"))
    found = checked(project)
    assert len(found.problems) == 1
    assert found.problems[0].startswith(f"{project.annotations}: annotation files not valid: ")
    assert "EPIC_Sounds_validation.csv" in found.problems[0] and "`epic-levels validate`" in found.problems[0]


def test_a_new_check_is_one_entry_in_the_list(project, monkeypatch):
    """How a check is added (the models' keys, endpoints and judge, say): a function of the run's inputs returning
    one-line problems, appended to ``CHECKS``; the command line and the launcher both run it."""
    def check_judge(inputs: RunInputs) -> list[str]:
        return [f"judge {inputs.evaluation['judge_model']}: not reachable"] if inputs.evaluation.get("judge_model") else []

    monkeypatch.setattr(preflight_module, "CHECKS", [*CHECKS, check_judge])
    assert checked(project, evaluation={"judge_model": "vllm/j"}).problems[-1] == "judge vllm/j: not reachable"
    assert cli.main(["run", "--judge", "vllm/j"]) == 2


@pytest.mark.parametrize("bad", ["project file", "unknown table", "manifest video", "manifest window", "manifest syntax",
                                 "annotations root"])
def test_run_refuses_a_bad_input_with_one_line_and_writes_nothing(project, capsys, bad):
    """exit 2, one `error:` line naming file and place, no traceback, no Dagster instance, no table."""
    if bad == "project file":
        (project.root / "epic-levels.toml").write_text('[data]\nanotations = "data/annotations"\n')
    elif bad == "unknown table":
        (project.root / "epic-levels.toml").write_text('[dat]\nannotations = "data/annotations"\n')
    elif bad == "manifest video":
        append(project.manifest, UNKNOWN_VIDEO)
    elif bad == "manifest window":
        append(project.manifest, PAST_THE_END)
    elif bad == "manifest syntax":
        append(project.manifest, "epic_sounds,P09_08,75")
    else:
        (project.root / "epic-levels.toml").write_text('[data]\nannotations = "nowhere"\n')
    assert cli.main(["run"]) == 2
    out, err = capsys.readouterr()
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, err
    assert "Traceback" not in err and "nothing was run or written" in err
    assert not (project.data / "dagster").exists() and not (project.data / "assets").exists()
    assert not project.warehouse.exists()
