"""Source videos where the datasets' download tools put them, and ``epic-levels media`` on a tree of small
test videos (ffmpeg testsrc) laid out as upstream ships them."""

from pathlib import Path

import pytest

from epic_levels_pipeline.annotations.clips import Clip
from epic_levels_pipeline.cli import main
from epic_levels_pipeline.responses.media import (find_source_video, make_test_video, missing_source_reason,
                                                 prepare_clip_media)
from epic_levels_pipeline.responses.media_check import check_media

EPIC, HD = "P01_01", "P01-20240202-110250"


def touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x")
    return path


@pytest.mark.parametrize("dataset, video, relative", [
    ("epic_sounds", EPIC, "EPIC-KITCHENS/P01/videos/P01_01.MP4"),
    ("epic_sounds", EPIC, "P01/videos/P01_01.MP4"),
    ("epic_sounds", EPIC, "epic_sounds/P01_01.mp4"),
    ("hd_epic", HD, "HD-EPIC/Videos/P01/P01-20240202-110250.mp4"),
    ("hd_epic", HD, "Videos/P01/P01-20240202-110250.mp4"),
    ("hd_epic", HD, "hd_epic/P01-20240202-110250.mp4"),
])
def test_each_upstream_layout_is_found(tmp_path, dataset, video, relative):
    assert find_source_video(tmp_path, dataset, video) is None
    touch(tmp_path / relative)
    assert find_source_video(tmp_path, dataset, video) == tmp_path / relative


def test_flat_layout_first_and_datasets_keep_their_own_layouts(tmp_path):
    touch(tmp_path / "EPIC-KITCHENS/P01/videos/P01_01.MP4")
    flat = touch(tmp_path / "epic_sounds/P01_01.mp4")
    assert find_source_video(tmp_path, "epic_sounds", EPIC) == flat
    touch(tmp_path / "Videos/P01/P01_01.mp4")  # HD-EPIC's layout is not searched for EPIC-KITCHENS videos
    (tmp_path / "epic_sounds/P01_01.mp4").unlink()
    assert find_source_video(tmp_path, "epic_sounds", EPIC) == tmp_path / "EPIC-KITCHENS/P01/videos/P01_01.MP4"
    (tmp_path / "HD-EPIC/Videos/P01" / f"{HD}.mp4").mkdir(parents=True)  # a folder is not a video
    assert find_source_video(tmp_path, "hd_epic", HD) is None


def test_missing_reason_names_every_place_looked(tmp_path):
    reason = missing_source_reason(tmp_path, "hd_epic", HD)
    assert reason.startswith(f"no source video {tmp_path / 'hd_epic' / HD}.{{mp4,MP4,")
    assert f"{tmp_path / 'HD-EPIC/Videos/P01' / HD}.*" in reason and f"{tmp_path / 'Videos/P01' / HD}.*" in reason
    media = prepare_clip_media(tmp_path, tmp_path / "clips", "k", "hd_epic", HD, 0, 30)
    assert media.status == "skipped" and media.reason == reason


@pytest.fixture(scope="module")
def media_tree(tmp_path_factory):
    """Four small videos in the upstream layouts (3 s each, 32x24, 5 fps), a missing one, an unreadable one."""
    root = tmp_path_factory.mktemp("media")
    make_test_video(root / "EPIC-KITCHENS/P01/videos/P01_01.MP4", 3.0, size="32x24", rate=5)
    make_test_video(root / "P02/videos/P02_01.MP4", 3.0, size="32x24", rate=5)
    make_test_video(root / "HD-EPIC/Videos/P01" / f"{HD}.mp4", 3.0, size="32x24", rate=5)
    make_test_video(root / "Videos/P02/P02-20240202-000000.mp4", 3.0, size="32x24", rate=5, tone_hz=None)
    touch(root / "epic_sounds/P03_01.mp4")  # not a video
    return root


def test_check_media_statuses(media_tree):
    clips = [Clip("epic_sounds", "P01_01", 0, 2), Clip("epic_sounds", "P01_01", 1, 3),
             Clip("epic_sounds", "P02_01", 0, 2), Clip("hd_epic", HD, 0, 2),
             Clip("hd_epic", "P02-20240202-000000", 0, 5), Clip("epic_sounds", "P04_01", 0, 2),
             Clip("epic_sounds", "P03_01", 0, 2)]
    durations = {"P01_01": 3.0, "P02_01": 9.0, HD: 3.2, "P02-20240202-000000": 3.0, "P04_01": 3.0}
    checks = {c.video_id: c for c in check_media(media_tree, clips, durations)}
    assert checks["P01_01"].status == "found" and checks["P01_01"].clips == 2
    assert checks["P01_01"].probed_s == pytest.approx(3.0, abs=0.1)
    assert checks["P02_01"].status == "duration differs" and "-6.00 s" in checks["P02_01"].note
    assert checks[HD].status == "found"
    assert checks["P02-20240202-000000"].status == "window past end"
    assert checks["P04_01"].status == "missing" and "looked for epic_sounds/P04_01.*, EPIC-KITCHENS/P04/videos/P04_01.*, P04/videos/P04_01.*" == checks["P04_01"].note
    assert checks["P03_01"].status == "unreadable"
    assert list(checks) == ["P01_01", "P02_01", HD, "P02-20240202-000000", "P04_01", "P03_01"]


def test_media_command(media_tree, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("EPIC_LEVELS_MEDIA_ROOT", raising=False)
    ann = tmp_path / "ann" / "epic-kitchens-100-annotations"
    ann.mkdir(parents=True)
    (ann / "EPIC_100_video_info.csv").write_text("video_id,duration,fps,resolution\nP01_01,3.0,5,32x24\nP02_01,3.0,5,32x24\n")
    manifest = tmp_path / "clips.csv"
    manifest.write_text("dataset,video_id,start_s,end_s\nepic_sounds,P01_01,0,2\nepic_sounds,P02_01,0,2\n")
    args = ["media", "--annotations", str(tmp_path / "ann"), "--media", str(media_tree), "--manifest", str(manifest)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "EPIC-KITCHENS/P01/videos/P01_01.MP4" in out and "P02/videos/P02_01.MP4" in out
    assert out.strip().endswith("videos: 2 found, 0 missing, 0 duration differs, 0 window past end, 0 unreadable")
    manifest.write_text(manifest.read_text() + "epic_sounds,P09_08,0,30\n")
    assert main(args + ["--problems"]) == 1
    out = capsys.readouterr().out
    assert "P09_08" in out and "P01_01 " not in out and "1 missing" in out
