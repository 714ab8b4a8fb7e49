"""Tests for epic_levels_pipeline.responses.media on synthetic ffmpeg videos (160x120, 10 fps, 440 Hz tone)."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from epic_levels_pipeline.responses import media
from epic_levels_pipeline.responses.media import (
    ClipMedia,
    MediaError,
    audio_rms,
    cut_clip,
    ffmpeg_exe,
    find_source_video,
    make_test_video,
    prepare_clip_media,
    probe,
    sha256_file,
    silence_audio,
)

DATASET, VIDEO = "epic_sounds", "P09_08"
KEY = f"{DATASET}__{VIDEO}__15.000-45.000"


def _temp_files(directory: Path) -> list[Path]:
    return [p for p in directory.rglob("*") if ".tmp-" in p.name]


@pytest.fixture(scope="module")
def media_root(tmp_path_factory) -> Path:
    """A media root holding one 60 s source video with a 440 Hz tone."""
    root = tmp_path_factory.mktemp("media")
    make_test_video(root / DATASET / f"{VIDEO}.mp4", 60.0)
    return root


@pytest.fixture(scope="module")
def source(media_root) -> Path:
    return media_root / DATASET / f"{VIDEO}.mp4"


@pytest.fixture(scope="module")
def cut(source, tmp_path_factory) -> tuple[Path, Path]:
    """The 15-45 s clip of the source and its silenced twin."""
    out = tmp_path_factory.mktemp("cut")
    clip = cut_clip(source, 15.0, 45.0, out / "clip.mp4")
    silenced = silence_audio(clip, out / "clip.silenced.mp4")
    return clip, silenced


def _first_gray_frame(path: Path, seek_s: float | None = None) -> np.ndarray:
    cmd = [ffmpeg_exe(), "-v", "error", "-nostdin"]
    if seek_s is not None:
        cmd += ["-ss", f"{seek_s:.3f}"]
    cmd += ["-i", str(path), "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "gray", "-"]
    out = subprocess.run(cmd, capture_output=True, check=True).stdout
    return np.frombuffer(out, np.uint8).astype(float)


def _video_packets_md5(path: Path) -> str:
    cmd = [ffmpeg_exe(), "-v", "error", "-nostdin", "-i", str(path), "-map", "0:v", "-c", "copy",
           "-f", "hash", "-hash", "md5", "-"]
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()


# ------------------------------------------------------------------------------------- small helpers

def test_ffmpeg_exe_exists():
    assert Path(ffmpeg_exe()).is_file()


def test_sha256_file_matches_hashlib(tmp_path):
    data = os.urandom(3 * (1 << 20) + 17)  # spans several chunks
    f = tmp_path / "blob.bin"
    f.write_bytes(data)
    assert sha256_file(f) == hashlib.sha256(data).hexdigest()


def test_find_source_video(tmp_path):
    assert find_source_video(tmp_path, DATASET, VIDEO) is None
    (tmp_path / DATASET).mkdir()
    (tmp_path / DATASET / f"{VIDEO}.mkv").write_bytes(b"x")
    assert find_source_video(tmp_path, DATASET, VIDEO) == tmp_path / DATASET / f"{VIDEO}.mkv"
    (tmp_path / DATASET / f"{VIDEO}.mp4").write_bytes(b"x")  # earlier in VIDEO_EXTENSIONS wins
    assert find_source_video(tmp_path, DATASET, VIDEO) == tmp_path / DATASET / f"{VIDEO}.mp4"
    (tmp_path / DATASET / "P01_01.webm").mkdir()  # a directory is not a video
    assert find_source_video(tmp_path, DATASET, "P01_01") is None


# --------------------------------------------------------------------------------------------- probing

def test_probe_source(source):
    info = probe(source)
    assert info.duration_s == pytest.approx(60.0, abs=0.1)
    assert info.has_audio and info.has_video
    assert info.audio_sample_rate == 48000 and info.audio_channel_layout == "mono"


def test_probe_missing_and_corrupt_files_raise_naming_the_file(tmp_path):
    with pytest.raises(MediaError, match="nothere.mp4"):
        probe(tmp_path / "nothere.mp4")
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(np.random.default_rng(0).bytes(20_000))
    with pytest.raises(MediaError, match="bad.mp4"):
        probe(bad)


def test_probe_without_stated_duration_measures_it(source, tmp_path):
    """A raw H.264 stream says "Duration: N/A" and has no timestamps: probe decodes to measure it."""
    raw = tmp_path / "raw.h264"
    subprocess.run([ffmpeg_exe(), "-v", "error", "-nostdin", "-i", str(source), "-t", "4", "-map", "0:v",
                    "-c", "copy", "-f", "h264", str(raw)], check=True)
    info = probe(raw)
    assert info.has_video and not info.has_audio
    assert info.duration_s == pytest.approx(4.0, abs=0.2)


# ---------------------------------------------------------------------------------- cutting, silencing

def test_cut_clip_is_30_s_with_sound(cut):
    clip, _ = cut
    info = probe(clip)
    assert info.duration_s == pytest.approx(30.0, abs=0.1)
    assert info.has_video and info.has_audio
    assert audio_rms(clip) == pytest.approx(0.088, abs=0.01)  # lavfi sine: amplitude 1/8


def test_cut_clip_starts_at_the_window_start(source, cut):
    clip, _ = cut
    first = _first_gray_frame(clip)
    diffs = {t: np.abs(_first_gray_frame(source, t) - first).mean() for t in (14.9, 15.0, 15.1)}
    assert min(diffs, key=diffs.get) == 15.0, diffs


def test_silenced_has_same_duration_same_video_and_zero_audio(cut):
    clip, silenced = cut
    info = probe(silenced)
    assert info.duration_s == pytest.approx(probe(clip).duration_s, abs=0.1)
    assert info.has_audio and info.has_video
    assert info.audio_sample_rate == 48000 and info.audio_channel_layout == "mono"  # kept from the clip
    assert audio_rms(silenced) < 1e-6
    assert _video_packets_md5(silenced) == _video_packets_md5(clip)  # video stream copied, not re-encoded


def test_silence_audio_adds_a_track_to_a_clip_without_audio(tmp_path):
    mute = make_test_video(tmp_path / "mute.mp4", 3.0, tone_hz=None)
    assert not probe(mute).has_audio
    with pytest.raises(MediaError, match="no audio"):
        audio_rms(mute)
    out = silence_audio(mute, tmp_path / "mute.silenced.mp4")
    info = probe(out)
    assert info.has_audio and info.audio_sample_rate == 48000 and info.audio_channel_layout == "stereo"
    assert info.duration_s == pytest.approx(3.0, abs=0.1)
    assert audio_rms(out) < 1e-6


@pytest.mark.parametrize("window", [(40.0, 70.0), (-1.0, 10.0), (20.0, 20.0), (30.0, 10.0)])
def test_cut_clip_refuses_bad_windows_and_writes_nothing(source, tmp_path, window):
    out = tmp_path / "clip.mp4"
    with pytest.raises(MediaError, match=str(source.name)):
        cut_clip(source, *window, out)
    assert list(tmp_path.iterdir()) == []


def test_failed_cut_leaves_existing_output_untouched(tmp_path):
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(np.random.default_rng(1).bytes(20_000))
    out = tmp_path / "out" / "clip.mp4"
    out.parent.mkdir()
    out.write_bytes(b"previous")
    with pytest.raises(MediaError):
        cut_clip(bad, 0.0, 1.0, out)
    assert out.read_bytes() == b"previous"
    assert _temp_files(tmp_path) == []


def test_ffmpeg_failure_mid_write_leaves_no_partial_file(cut, tmp_path, monkeypatch):
    """ffmpeg dies after writing part of its output: the temp file is removed, nothing appears at `out`."""
    clip, _ = cut

    def dies_midway(args, what, path):
        Path(args[-1]).write_bytes(b"half an mp4")  # the temp output path is ffmpeg's last argument
        raise MediaError(f"{path}: {what} failed (ffmpeg exit 1): killed")

    monkeypatch.setattr(media, "run_ffmpeg", dies_midway)
    with pytest.raises(MediaError, match="killed"):
        silence_audio(clip, tmp_path / "x.silenced.mp4")
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------------ prepare_clip_media

def test_prepare_missing_source_is_skipped_with_expected_path(tmp_path):
    res = prepare_clip_media(tmp_path / "media", tmp_path / "clips", KEY, DATASET, VIDEO, 15.0, 45.0)
    assert isinstance(res, ClipMedia)
    assert res.status == "skipped"
    assert str(tmp_path / "media" / DATASET / VIDEO) + ".{mp4," in res.reason
    assert res.source is None and res.clip_path is None and res.clip_sha256 is None
    assert not (tmp_path / "clips").exists() or list((tmp_path / "clips").iterdir()) == []


def test_prepare_makes_both_files_and_reuses_them(media_root, tmp_path):
    out = tmp_path / "clips"
    first = prepare_clip_media(media_root, out, KEY, DATASET, VIDEO, 15.0, 45.0)
    assert first.status == "ready", first.reason
    assert first.reason == ""
    assert first.clip_path == str(out / f"{KEY}.mp4")
    assert first.silenced_path == str(out / f"{KEY}.silenced.mp4")
    assert first.duration_s == pytest.approx(30.0, abs=0.1)
    assert first.silenced_duration_s == pytest.approx(30.0, abs=0.1)
    assert first.clip_sha256 == sha256_file(first.clip_path)
    assert first.silenced_sha256 == sha256_file(first.silenced_path)
    assert sorted(p.name for p in out.iterdir()) == [f"{KEY}.mp4", f"{KEY}.silenced.mp4"]  # no temp files

    mtimes = {p: p.stat().st_mtime_ns for p in out.iterdir()}
    second = prepare_clip_media(media_root, out, KEY, DATASET, VIDEO, 15.0, 45.0)
    assert second == first
    assert {p: p.stat().st_mtime_ns for p in out.iterdir()} == mtimes


def test_prepare_recuts_when_outputs_are_stale_or_unreadable(media_root, source, tmp_path):
    out = tmp_path / "clips"
    first = prepare_clip_media(media_root, out, KEY, DATASET, VIDEO, 15.0, 45.0)
    clip, silenced = Path(first.clip_path), Path(first.silenced_path)
    # The clip is older than the source: both files are made again.
    old = source.stat().st_mtime_ns - 10**9
    os.utime(clip, ns=(old, old))
    before = silenced.stat().st_mtime_ns
    again = prepare_clip_media(media_root, out, KEY, DATASET, VIDEO, 15.0, 45.0)
    assert again.status == "ready"
    assert clip.stat().st_mtime_ns >= source.stat().st_mtime_ns
    assert silenced.stat().st_mtime_ns > before
    # A fresh but unreadable silenced file is made again too.
    silenced.write_bytes(b"garbage")
    third = prepare_clip_media(media_root, out, KEY, DATASET, VIDEO, 15.0, 45.0)
    assert third.status == "ready" and audio_rms(silenced) < 1e-6
    assert _temp_files(out) == []


def test_prepare_corrupt_source_is_skipped_with_reason(tmp_path):
    root = tmp_path / "media"
    (root / DATASET).mkdir(parents=True)
    bad = root / DATASET / f"{VIDEO}.mp4"
    bad.write_bytes(np.random.default_rng(2).bytes(50_000))
    out = tmp_path / "clips"
    res = prepare_clip_media(root, out, KEY, DATASET, VIDEO, 15.0, 45.0)
    assert res.status == "skipped"
    assert str(bad) in res.reason
    assert res.source == str(bad) and res.clip_path is None and res.duration_s is None
    assert not out.exists() or list(out.iterdir()) == []


def test_prepare_window_past_end_is_skipped(media_root, tmp_path):
    out = tmp_path / "clips"
    res = prepare_clip_media(media_root, out, "late", DATASET, VIDEO, 45.0, 75.0)
    assert res.status == "skipped"
    assert "past the video's end" in res.reason
    assert not out.exists() or list(out.iterdir()) == []


def test_prepare_rejects_clip_keys_that_are_paths(media_root, tmp_path):
    with pytest.raises(ValueError):
        prepare_clip_media(media_root, tmp_path, "../escape", DATASET, VIDEO, 15.0, 45.0)
