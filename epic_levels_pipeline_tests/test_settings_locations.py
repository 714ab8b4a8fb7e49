"""Where the annotations and media roots come from: the command line's flag, the environment, epic-levels.toml,
else data/ (one place, ``settings.Paths``)."""

import os

import pytest

from epic_levels_pipeline.cli import locations
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


def test_locations_set_the_roots_for_one_command_only(tmp_path, clean_env):
    paths = Paths(tmp_path)
    with locations(tmp_path / "ann", tmp_path / "vids"):
        assert paths.annotations == (tmp_path / "ann").resolve()
        assert paths.source_media == (tmp_path / "vids").resolve()
    assert ANNOTATIONS_ENV not in os.environ and MEDIA_ENV not in os.environ
    with locations(None, None):
        assert paths.annotations == tmp_path / "data" / "annotations"


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
