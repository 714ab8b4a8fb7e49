"""Validation of annotation files: every kind of bad input yields FILE:ROW:COLUMN lines; good files load."""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from epic_levels_pipeline.annotations.readers import load_annotations, validate_paths
from epic_levels_pipeline.annotations.validation import normalise_object_name, parse_list_literal, parse_timestamps
from epic_levels_pipeline.cli import main
from epic_levels_pipeline.errors import AnnotationError

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "data" / "annotations"
SOUND_HEADER = "annotation_id,participant_id,video_id,start_timestamp,stop_timestamp,start_sample,stop_sample,description,class,class_id\n"
GOOD_SOUND = "P09_08_13,P09,P09_08,00:00:47.662,00:00:48.966,1143888,1175184,tap running,water,5\n"


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def errors_of(path: Path) -> list[str]:
    problems, _, _ = validate_paths([path])
    return [str(p) for p in problems if p.severity == "error"]


def test_bundled_files_are_valid():
    problems, files, _ = validate_paths([BUNDLED])
    assert files, "bundled annotation files are missing"
    assert [p for p in problems if p.severity == "error"] == []


def test_good_sound_file_loads_in_seconds(tmp_path):
    path = write(tmp_path, "EPIC_Sounds_validation.csv", SOUND_HEADER + GOOD_SOUND)
    assert errors_of(path) == []
    ann = load_annotations(tmp_path)
    row = ann.sounds.iloc[0]
    assert row["annotation_id"] == "P09_08_13" and row["sound_class"] == "water"
    assert row["start_s"] == pytest.approx(47.662) and row["stop_s"] == pytest.approx(48.966)


def test_missing_column(tmp_path):
    path = write(tmp_path, "EPIC_Sounds_validation.csv", SOUND_HEADER.replace(",class,class_id", ",class_id") + "x\n")
    assert any(e.endswith(":1:class: missing column 'class' (header has: annotation_id, participant_id, video_id, "
                          "start_timestamp, stop_timestamp, start_sample, stop_sample, description, class_id)") for e in errors_of(path))


def test_empty_file(tmp_path):
    path = write(tmp_path, "EPIC_Sounds_validation.csv", "")
    assert errors_of(path) == [f"{path}:1:-: file is empty"]


def test_unparsable_timestamp(tmp_path):
    path = write(tmp_path, "EPIC_Sounds_validation.csv", SOUND_HEADER + GOOD_SOUND.replace("00:00:47.662", "00:00:4x.662"))
    assert errors_of(path) == [f"{path}:2:start_timestamp: unparsable time '00:00:4x.662' (expected HH:MM:SS.fff)"]


def test_stop_before_start(tmp_path):
    path = write(tmp_path, "EPIC_Sounds_validation.csv", SOUND_HEADER + GOOD_SOUND.replace("00:00:48.966", "00:00:40.000"))
    assert errors_of(path) == [f"{path}:2:stop_timestamp: stop '00:00:40.000' is before start '00:00:47.662'"]


def test_negative_time(tmp_path):
    header = "video_id,recipe_id,high_level_activity_label,start_time,end_time\n"
    path = write(tmp_path, "P09_recipe_timestamps.csv", header + "P09-20240623-120359,R05,Prepare mango,-3.0,1497.0\n")
    assert errors_of(path) == [f"{path}:2:start_time: negative time '-3.0'"]


def test_duplicate_id(tmp_path):
    path = write(tmp_path, "EPIC_Sounds_validation.csv", SOUND_HEADER + GOOD_SOUND + GOOD_SOUND)
    assert errors_of(path) == [f"{path}:3:annotation_id: duplicate id 'P09_08_13' (first at row 2)"]


def test_wrong_json_shape(tmp_path):
    path = write(tmp_path, "assoc_info.json", json.dumps({"P01-x": {"a1": {"name": "knife", "tracks": [{"track_id": "t", "time_segment": "soon"}]}}}))
    errors = errors_of(path)
    assert errors and all(e.startswith(f"{path}:P01-x/a1/tracks/0:time_segment: wrong JSON shape") for e in errors)


def test_recipe_json_wrong_shape_names_record(tmp_path):
    path = write(tmp_path, "complete_recipes.json", json.dumps({"P02_R06": {"participant": "P02", "name": "Tarts", "steps": {},
                                                                        "captures": [{"videos": [], "step_times": {"S1": [{"video": "v", "start": "x", "end": 2}]}}]}}))
    assert any(e.startswith(f"{path}:P02_R06/captures/0/step_times/S1/0:start: wrong JSON shape") for e in errors_of(path))


def test_non_utf8_byte(tmp_path):
    path = write(tmp_path, "EPIC_Sounds_validation.csv", SOUND_HEADER.encode() + GOOD_SOUND.replace("tap running", "tap runn\xffing").encode("latin-1"))
    errors = errors_of(path)
    assert len(errors) == 1 and errors[0].startswith(f"{path}:2:description: invalid UTF-8 byte 0xff")


def test_hd_epic_end_resolves_to_video_duration(tmp_path):
    write(tmp_path, "HD_EPIC_YouTube_URLs.csv", "video_id,youtube_url,duration\nP09-v,https://example.invalid,100.5\n")
    write(tmp_path, "P09_recipe_timestamps.csv", "video_id,recipe_id,high_level_activity_label,start_time,end_time\nP09-v,,Clean up,90.0,end\n")
    ann = load_annotations(tmp_path)
    row = ann.activities.iloc[0]
    assert row["stop_s"] == 100.5 and bool(row["stop_is_video_end"])


def test_known_erratum_and_zero_length_are_dropped_and_counted(tmp_path):
    header = "video_id,recipe_id,high_level_activity_label,start_time,end_time\n"
    write(tmp_path, "P04_recipe_timestamps.csv", header + "P04-20240414-065311,R02,Plate scrambled eggs,1482.0,1455.0\n"
          + "P04-20240414-065311,,Clean up,871.0,871.0\nP04-20240414-065311,,Wash,10.0,20.0\n")
    ann = load_annotations(tmp_path)
    assert len(ann.activities) == 1
    counts = ann.dropped_counts()
    assert counts == {"known erratum: upstream HD-EPIC row ends before it starts": 1, "zero-length span": 1}


def test_load_raises_with_every_problem(tmp_path):
    write(tmp_path, "EPIC_Sounds_validation.csv", SOUND_HEADER + GOOD_SOUND + GOOD_SOUND.replace("P09_08_13", "P09_08_14").replace("00:00:48.966", "bad"))
    with pytest.raises(AnnotationError) as info:
        load_annotations(tmp_path)
    assert "stop_timestamp: unparsable time 'bad'" in str(info.value)


def test_cli_validate_exit_codes(tmp_path, capsys):
    good = write(tmp_path / "good", "EPIC_Sounds_validation.csv", SOUND_HEADER + GOOD_SOUND)
    bad = write(tmp_path / "bad", "EPIC_Sounds_validation.csv", "")
    assert main(["validate", str(good)]) == 0
    assert main(["validate", str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:1:-: file is empty" in out


@pytest.mark.skipif(not (ROOT.parent / "shared" / "data").exists(), reason="full staged files not present")
def test_cli_validate_full_staged_files():
    assert main(["validate", str(ROOT.parent / "shared" / "data")]) == 0


@given(st.integers(0, 99), st.integers(0, 59), st.integers(0, 59), st.integers(0, 999))
def test_timestamp_parser_roundtrip(h, m, s, ms):
    text = f"{h:02d}:{m:02d}:{s:02d}.{ms:03d}"
    seconds, ok = parse_timestamps(pd.Series([text]))
    assert bool(ok.iat[0]) and seconds.iat[0] == pytest.approx(h * 3600 + m * 60 + s + ms / 1000)


@given(st.text(max_size=12))
def test_timestamp_parser_never_crashes(text):
    seconds, ok = parse_timestamps(pd.Series([text]))
    assert bool(ok.iat[0]) == (not pd.isna(seconds.iat[0]))


@given(st.lists(st.text(alphabet="abcdefgh :", min_size=1, max_size=8), max_size=5))
def test_list_literal_roundtrip(values):
    assert parse_list_literal(repr(values)) == values


@pytest.mark.parametrize("raw,name", [("knife2", "knife"), ("baking tray2", "baking tray"), ("mango half", "mango half"),
                                      ("muffin tray1", "muffin tray"), ("1 tablespoon", "1 tablespoon"), ("Glass  Lid", "glass lid"),
                                      ("recipe kit 2", "recipe kit"), ("fork first", "fork"), ("jarn", "jar"),
                                      ("unsmoked baking medallion first", "unsmoked bacon medallion"),
                                      ("track 87", "track 87"), ("new track 2", "new track 2")])
def test_normalise_object_name(raw, name):
    assert normalise_object_name(raw) == name
