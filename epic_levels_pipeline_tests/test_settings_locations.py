"""Where the annotations and media roots come from: the command line's flag, the environment, epic-levels.toml,
else data/ (one place, ``settings.Paths``)."""

import os

import pytest

from epic_levels_pipeline.settings import ANNOTATIONS_ENV, MEDIA_ENV, ConfigError, Paths


@pytest.fixture
def clean_env(monkeypatch):
    monkeypatch.delenv(ANNOTATIONS_ENV, raising=False)
    monkeypatch.delenv(MEDIA_ENV, raising=False)


def test_default_then_file_then_environment(tmp_path, clean_env, monkeypatch):
    paths = Paths(tmp_path)
    assert paths.annotations == tmp_path / "data" / "annotations"
    assert paths.source_media == paths.media == tmp_path / "data" / "media"
    (tmp_path / "epic-levels.toml").write_text('[data]\nannotations = "upstream"\nmedia = "/srv/videos"\n')
    assert paths.annotations == (tmp_path / "upstream").resolve()
    assert str(paths.source_media) == "/srv/videos"
    assert paths.media == tmp_path / "data" / "media"  # cut clips stay under data/media
    monkeypatch.setenv(ANNOTATIONS_ENV, str(tmp_path / "elsewhere"))
    assert paths.annotations == (tmp_path / "elsewhere").resolve()


def test_a_commands_roots_win_and_never_touch_the_environment(tmp_path, clean_env, monkeypatch):
    monkeypatch.setenv(ANNOTATIONS_ENV, str(tmp_path / "from-env"))
    given = Paths(tmp_path).with_roots(tmp_path / "ann", tmp_path / "vids")
    assert given.annotations == (tmp_path / "ann").resolve()
    assert given.source_media == (tmp_path / "vids").resolve()
    assert os.environ[ANNOTATIONS_ENV] == str(tmp_path / "from-env") and MEDIA_ENV not in os.environ
    assert Paths(tmp_path).with_roots(None, None).annotations == (tmp_path / "from-env").resolve()


def test_the_command_line_passes_its_roots_as_run_config_not_environment(tmp_path, monkeypatch):
    from epic_levels_pipeline import cli, preflight
    from epic_levels_pipeline.cli import run as run_command
    from epic_levels_pipeline.orchestration import local
    from epic_levels_pipeline.orchestration.local import RunReport

    seen = {}
    monkeypatch.setattr(local, "run_pipeline", lambda paths, clip_keys=None, run_config=None: seen.update(
        config=run_config, env=dict(os.environ), paths=paths) or RunReport(clips=[]))
    monkeypatch.setattr(run_command, "print_summary", lambda *args: None)
    monkeypatch.setattr(preflight, "CHECKS", [])
    before = dict(os.environ)
    assert cli.main(["run", "--annotations", str(tmp_path / "ann"), "--media", str(tmp_path / "vids")]) == 0
    assert seen["env"] == before == dict(os.environ)
    assert seen["config"]["resources"]["project"]["config"] == {"annotations": str((tmp_path / "ann").resolve()),
                                                                 "media": str((tmp_path / "vids").resolve())}


@pytest.mark.parametrize("text, message", [
    ('[data]\nannotation = "x"\n', "[data].annotation: unknown key"),
    ('[data]\nmedia = 3\n', "[data].media: must be a string"),
    ('[data\n', "epic-levels.toml: "),
])
def test_a_bad_project_file_names_file_and_key(tmp_path, clean_env, text, message):
    (tmp_path / "epic-levels.toml").write_text(text)
    with pytest.raises(ConfigError) as info:
        Paths(tmp_path).annotations
    assert message in str(info.value) and str(tmp_path / "epic-levels.toml") in str(info.value)
