"""``epic-levels windows``: the window arithmetic (property tests), the selection and its filters, and the
manifest it writes or extends (idempotent; existing lines kept; readable as before)."""

import math
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from epic_levels_pipeline.annotations.clips import Clip, all_windows, annotated_videos, window_starts
from epic_levels_pipeline.annotations.clip_keys import read_manifest
from epic_levels_pipeline.annotations.windows import extend_manifest, select_windows, spread, summary_table
from epic_levels_pipeline.cli import main

from ..conftest import ROOT

BUNDLED = ROOT / "data" / "annotations"
tenths = st.integers(min_value=5, max_value=1200).map(lambda n: n / 10)


@settings(deadline=None)
@given(duration=st.floats(min_value=0, max_value=8_000, allow_nan=False), width=tenths, stride=st.none() | tenths)
def test_window_starts_tile_the_video(duration, width, stride):
    starts = window_starts(duration, width, stride)
    step = width if stride is None else stride
    assert all(0 <= start and start + width <= duration + 1e-6 for start in starts)
    assert all(abs((b - a) - step) < 1e-6 for a, b in zip(starts, starts[1:]))
    # maximal: the next window would not fit
    following = (len(starts)) * step
    assert following + width > duration - 1e-6
    assert starts == [] or starts[0] == 0
    # each window's key names it exactly (the clip partition key round-trips)
    for start in starts[:50]:
        clip = Clip("epic_sounds", "P01_01", start, round(start + width, 3))
        assert Clip.from_key(clip.key) == clip


def test_window_starts_rejects_non_positive_steps():
    with pytest.raises(ValueError):
        window_starts(100, 0)
    with pytest.raises(ValueError):
        window_starts(100, 30, -1)
    assert window_starts(math.inf, 30) == []


@settings(deadline=None)
@given(n=st.integers(min_value=0, max_value=5000), limit=st.none() | st.integers(min_value=0, max_value=6000))
def test_spread_is_even(n, limit):
    picked = spread(n, limit)
    assert len(picked) == (n if limit is None else min(n, limit))
    assert picked == sorted(set(picked)) and all(0 <= i < n for i in picked)
    if limit and 1 < limit < n:
        gaps = {b - a for a, b in zip(picked, picked[1:])}
        assert max(gaps) - min(gaps) <= 1


def test_default_windows_are_the_tumbling_windows_the_benches_count(bundled):
    ann, _ = bundled
    durations = dict(zip(ann.videos["video_id"], ann.videos["duration_s"]))
    for dataset in ("epic_sounds", "hd_epic"):
        clips = all_windows(ann, dataset)
        for video in annotated_videos(ann, dataset):
            n = int(durations[video] // 30)
            mine = [c for c in clips if c.video_id == video]
            assert [(c.start_s, c.end_s) for c in mine] == [(30.0 * i, 30.0 * i + 30) for i in range(n)]


def test_bundled_manifest_clips_are_among_the_5_s_stride_windows(bundled):
    ann, _ = bundled
    keys = {c.key for c in select_windows(ann, stride=5).clips}
    assert [c.key for c in read_manifest(ROOT / "data" / "clips.csv") if c.key not in keys] == []


def test_any_mode_adds_videos_labelled_in_one_stream(bundled):
    ann, _ = bundled
    both, any_ = annotated_videos(ann, "epic_sounds"), annotated_videos(ann, "epic_sounds", "any")
    assert set(both) < set(any_) and "P02_133" in set(any_) - set(both)  # narrations only (train, partial)


def test_filters(bundled):
    ann, _ = bundled
    everything = select_windows(ann)
    assert {everything.splits[c.key] for c in everything.clips if c.dataset == "epic_sounds"} == {"train", "validation"}
    sounds = select_windows(ann, datasets=["epic_sounds"])
    assert sounds.clips and {c.dataset for c in sounds.clips} == {"epic_sounds"}
    train = select_windows(ann, split="train")
    assert {c.video_id for c in train.clips if c.dataset == "epic_sounds"} == {"P02_133"}
    assert {c.dataset for c in train.clips} == {"epic_sounds", "hd_epic"}  # HD-EPIC has no split
    p09 = select_windows(ann, videos=["P09_*"])
    assert {c.video_id for c in p09.clips} == {"P09_08"} and len(p09.clips) == 4  # 126.46 s
    limited = select_windows(ann, limit=7)
    assert [c.key for c in limited.clips] == [everything.clips[i].key for i in spread(len(everything.clips), 7)]
    assert {c.dataset for c in limited.clips} == {"epic_sounds", "hd_epic"}
    with pytest.raises(ValueError, match="unknown dataset"):
        select_windows(ann, datasets=["epic_kitchens"])


def test_summary_counts_windows_videos_and_hours(bundled):
    ann, _ = bundled
    selection = select_windows(ann, videos=["P09_08", "P02_133"])
    table = summary_table(selection, 30.0, {c.key for c in selection.clips[:2]})
    rows = {(r.dataset, r.split): r for r in table.itertuples()}
    assert rows[("epic_sounds", "validation")].windows == 4 and rows[("epic_sounds", "train")].windows == 2
    assert rows[("total", "")].videos == 2 and rows[("total", "")].hours == round(6 * 30 / 3600, 2)
    assert rows[("total", "")].added == 2


def test_extend_manifest_is_idempotent_and_keeps_existing_lines(tmp_path):
    manifest = tmp_path / "clips.csv"
    shutil.copy(ROOT / "data" / "clips.csv", manifest)
    before = manifest.read_text()
    old = read_manifest(manifest)
    clips = [old[0], Clip("epic_sounds", "P09_08", 0, 30), Clip("hd_epic", "P02-20240211-120927", 12.5, 42.5)]
    added, already = extend_manifest(manifest, clips, "test windows")
    assert [c.key for c in added] == [clips[1].key, clips[2].key] and already == 1
    text = manifest.read_text()
    assert text.startswith(before) and text.endswith("# test windows\nepic_sounds,P09_08,0,30\nhd_epic,P02-20240211-120927,12.5,42.5\n")
    assert read_manifest(manifest) == old + clips[1:]
    again, already = extend_manifest(manifest, clips, "test windows")
    assert again == [] and already == 3 and manifest.read_text() == text
    fresh = tmp_path / "new" / "clips.csv"
    extend_manifest(fresh, clips[1:2], "first")
    assert fresh.read_text() == "dataset,video_id,start_s,end_s\n# first\nepic_sounds,P09_08,0,30\n"


def test_cli_writes_then_adds_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("EPIC_LEVELS_ANNOTATIONS", raising=False)
    manifest = tmp_path / "clips.csv"
    args = ["windows", "--annotations", str(BUNDLED), "--manifest", str(manifest), "--datasets", "epic_sounds",
            "--limit", "12"]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert f"{manifest}: 12 windows added, 0 already listed (12 clips in all)" in first
    assert "epic_sounds" in first and "validation" in first
    written = manifest.read_text()
    assert main(args) == 0
    assert f"{manifest}: 0 windows added, 12 already listed (12 clips in all)" in capsys.readouterr().out
    assert manifest.read_text() == written
    assert main(["windows", "--annotations", str(BUNDLED), "--manifest", str(manifest), "--dry-run"]) == 0
    assert "dry run" in capsys.readouterr().out and manifest.read_text() == written
    assert main(["windows", "--annotations", str(BUNDLED), "--manifest", str(manifest), "--width", "0.05"]) == 2
    assert "--width must be a positive number of seconds" in capsys.readouterr().out


def test_cli_reports_a_bad_file_by_file_row_and_column(tmp_path, capsys):
    root = tmp_path / "ann" / "epic-sounds-annotations"
    root.mkdir(parents=True)
    shutil.copy(BUNDLED / "epic-sounds" / "EPIC_Sounds_validation.csv", root)
    path = root / "EPIC_Sounds_validation.csv"
    lines = path.read_text().splitlines()
    lines[3] = lines[3].replace(lines[3].split(",")[9], "five")
    path.write_text("\n".join(lines) + "\n")
    assert main(["windows", "--annotations", str(tmp_path / "ann"), "--manifest", str(tmp_path / "c.csv")]) == 1
    assert f"{path}:4:class_id:" in capsys.readouterr().err
