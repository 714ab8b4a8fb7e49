"""Annotation roots as the upstream repositories are cloned, the bundled layout, or both: which files are read,
which are skipped and why, and that errors still name FILE:ROW:COLUMN."""

import os
import shutil
from pathlib import Path

import pytest

from epic_levels_pipeline.annotations.layout import UPSTREAM_FILES, locate, logical_file, split_from_name
from epic_levels_pipeline.annotations.file_kinds import file_kind
from epic_levels_pipeline.annotations.readers import load_annotations, validate_paths
from epic_levels_pipeline.errors import AnnotationError

from ..conftest import ROOT, STAGED

BUNDLED = ROOT / "data" / "annotations"
CLONES = {"epic-sounds": "epic-sounds-annotations", "epic-kitchens-100": "epic-kitchens-100-annotations",
          "hd-epic": "hd-epic-annotations"}


def upstream_tree(tmp: Path) -> Path:
    """The bundled files laid out as the three repositories are cloned (with a .git folder and a README)."""
    root = tmp / "annotations"
    for bundled, clone in CLONES.items():
        shutil.copytree(BUNDLED / bundled, root / clone)
        (root / clone / ".git").mkdir()
        (root / clone / ".git" / "EPIC_Sounds_validation.csv").write_text("not read: inside .git\n")
        (root / clone / "README.md").write_text("upstream readme\n")
    return root


def test_table_names_are_unique_and_every_kind_has_a_row():
    names = [e.name for e in UPSTREAM_FILES]
    assert len(names) == len(set(names))
    assert logical_file("epic_sounds_train").candidates()[:3] == [
        "epic-sounds-annotations/EPIC_Sounds_train.csv", "epic-sounds/EPIC_Sounds_train.csv", "EPIC_Sounds_train.csv"]
    assert logical_file("hd_epic_sounds").candidates()[:2] == [
        "hd-epic-annotations/audio-annotations/HD_EPIC_Sounds.csv", "hd-epic-annotations/audio-annotations/HD_EPIC_Sounds.pkl"]
    with pytest.raises(KeyError, match="no logical annotation file"):
        logical_file("nope")
    # every file a registered reader accepts by name has a row in the table (so its upstream place is known)
    for entry in UPSTREAM_FILES:
        if entry.role == "read":
            assert file_kind(Path(entry.paths[0].replace("P*", "P01"))) is not None, entry.name


def test_upstream_clones_read_the_same_tables_as_the_bundled_layout(tmp_path, bundled):
    root = upstream_tree(tmp_path)
    layout = locate(root)
    assert sorted(layout.found) == sorted(locate(BUNDLED).found)
    assert [p.relative_to(root).parts[0] for p in layout.found["epic_sounds_validation"]] == ["epic-sounds-annotations"]
    assert not any(".git" in p.parts for p in layout.files + layout.skipped)
    ann = load_annotations(root)
    ref, _ = bundled
    for table in ("sounds", "narrations", "activities", "recipe_steps", "object_tracks", "vocabulary", "videos"):
        assert len(ann.table(table)) == len(ref.table(table)), table
    assert list(ann.sounds["annotation_id"]) == list(ref.sounds["annotation_id"])


def test_both_layouts_side_by_side_read_each_file_once(tmp_path):
    root = upstream_tree(tmp_path)
    shutil.copytree(BUNDLED / "epic-sounds", root / "epic-sounds")
    layout = locate(root)
    shadowed = {p.relative_to(root).as_posix(): q.relative_to(root).as_posix() for p, q in layout.shadowed.items()}
    assert shadowed["epic-sounds/EPIC_Sounds_validation.csv"] == "epic-sounds-annotations/EPIC_Sounds_validation.csv"
    assert shadowed["epic-sounds/sound_events_not_categorised.csv"] == "epic-sounds-annotations/sound_events_not_categorised.csv"
    load_annotations(root)  # no duplicate-id errors: each sound file is read once


def test_pkl_twins_test_splits_and_files_without_a_reader(tmp_path):
    root = upstream_tree(tmp_path)
    clone = root / "epic-kitchens-100-annotations"
    (clone / "EPIC_100_validation.pkl").write_bytes(b"\x80\x04pickle twin")
    (clone / "EPIC_100_test_timestamps.csv").write_text("narration_id,video_id\nP01_101_0,P01_101\nP01_101_1,P01_101\n")
    (root / "epic-sounds-annotations" / "EPIC_Sounds_recognition_test_timestamps.csv").write_text("annotation_id\na\n")
    audio = root / "hd-epic-annotations" / "audio-annotations"
    audio.mkdir()
    (audio / "HD_EPIC_Sounds.pkl").write_bytes(b"pickle")
    layout = locate(root)
    rel = lambda paths: sorted(p.relative_to(root).as_posix() for p in paths)  # noqa: E731
    assert rel(layout.shadowed) == ["epic-kitchens-100-annotations/EPIC_100_validation.pkl"]
    assert {p.name: n for p, n in layout.test.items()} == {"EPIC_100_test_timestamps.csv": 2,
                                                             "EPIC_Sounds_recognition_test_timestamps.csv": 1}
    if file_kind(Path("HD_EPIC_Sounds.pkl")) is None:
        assert rel(layout.no_reader) == ["hd-epic-annotations/audio-annotations/HD_EPIC_Sounds.pkl"]
        assert "skipped, no reader for this file yet: hd-epic-annotations/audio-annotations/HD_EPIC_Sounds.pkl" in layout.describe()
    assert not set(layout.files) & set(layout.skipped)
    problems, files, skipped = validate_paths([root])
    errors = [p for p in problems if p.severity == "error"]
    if file_kind(Path("HD_EPIC_Sounds.pkl")) is None:
        assert not errors
    else:  # a lone pickle is claimed by its reader, which names the file that is not a pickle
        assert [(Path(p.file).name, p.message.split(":")[0]) for p in errors] == [("HD_EPIC_Sounds.pkl", "cannot read pickle")]
    assert clone / "EPIC_100_test_timestamps.csv" in skipped


def test_csv_is_preferred_to_its_pkl_and_a_lone_pkl_is_claimed(tmp_path):
    clone = tmp_path / "epic-kitchens-100-annotations"
    clone.mkdir()
    (clone / "EPIC_100_train.pkl").write_bytes(b"pickle")
    layout = locate(tmp_path)
    assert [p.name for p in layout.no_reader] == ["EPIC_100_train.pkl"] and not layout.files


def test_a_bad_row_in_an_upstream_clone_names_its_file_row_and_column(tmp_path):
    root = upstream_tree(tmp_path)
    path = root / "epic-sounds-annotations" / "EPIC_Sounds_validation.csv"
    lines = path.read_text().splitlines()
    cells = lines[1].split(",")
    cells[3] = "47 seconds"
    lines[1] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(AnnotationError) as info:
        load_annotations(root)
    assert f"{path}:2:start_timestamp:" in str(info.value)


def test_split_from_name():
    assert split_from_name("EPIC_Sounds_train.csv") == "train"
    assert split_from_name("EPIC_100_train_P02_133_partial.csv") == "train"
    assert split_from_name("EPIC_100_validation.csv") == "validation"
    assert split_from_name("EPIC_100_test_timestamps.csv") == "test"
    assert split_from_name("sound_events_not_categorised.csv") is None
    assert split_from_name("P02_recipe_timestamps.csv") is None


@pytest.mark.skipif(not STAGED.is_dir(), reason=f"staged annotation files not present at {STAGED}")
def test_staged_tree_as_upstream_clones(tmp_path):
    """The staged files, symlinked in as the three clones: every file read, the test split counted."""
    for bundled_name, clone in CLONES.items():
        os.symlink(STAGED / bundled_name, tmp_path / clone)
    layout = locate(tmp_path)
    assert len(layout.files) == len(locate(STAGED).files) == 19
    assert sorted(p.name for p in layout.test) == ["EPIC_100_test_timestamps.csv", "EPIC_Sounds_detection_test_videos.csv",
                                                   "EPIC_Sounds_recognition_test_timestamps.csv"]


def test_validate_reads_the_annotations_root_given(tmp_path, capsys, monkeypatch):
    from epic_levels_pipeline.cli import main

    monkeypatch.delenv("EPIC_LEVELS_ANNOTATIONS", raising=False)
    root = upstream_tree(tmp_path)
    (root / "epic-kitchens-100-annotations" / "EPIC_100_test_timestamps.csv").write_text("narration_id\nP01_101_0\n")
    assert main(["validate", "--annotations", str(root)]) == 0
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1].startswith("19 files checked, 0 problems")
    assert "(1 of the test split, without labels)" in err
