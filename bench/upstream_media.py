"""Demonstration: ``epic-levels media`` on a tree of small test videos laid out as the datasets ship them.

Builds, under ``--out`` (default: a temporary folder), one ffmpeg ``testsrc`` video (32x24, 1 fps, no audio:
only the container's duration matters here) for each video of the manifest, as long as the annotations' video
info says, placed in turn in each upstream layout — EPIC-KITCHENS' downloader ``EPIC-KITCHENS/P01/videos/
P01_01.MP4``, participant folders at the root ``P01/videos/P01_01.MP4``, HD-EPIC's ``HD-EPIC/Videos/P01/<id>.mp4``
and ``Videos/P01/<id>.mp4``, and this project's flat ``<dataset>/<id>.mp4`` — except that the last video of
each dataset is left out (``missing``) and the first EPIC-SOUNDS one is made 20 s short (``duration
differs``). Then runs ``epic-levels media --media <tree>`` in this process and prints its output and how long
the check took.

Usage (from the repo root): ``python bench/upstream_media.py [--out DIR] [--manifest data/clips.csv]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from epic_levels_pipeline.annotations.clip_keys import read_manifest  # noqa: E402
from epic_levels_pipeline.annotations.readers import load_annotations  # noqa: E402
from epic_levels_pipeline.cli import main as cli  # noqa: E402
from epic_levels_pipeline.responses.media import make_test_video  # noqa: E402
from epic_levels_pipeline.settings import Paths  # noqa: E402

LAYOUTS = {
    "epic_sounds": ("EPIC-KITCHENS/{p}/videos/{v}.MP4", "{p}/videos/{v}.MP4", "epic_sounds/{v}.mp4"),
    "hd_epic": ("HD-EPIC/Videos/{p}/{v}.mp4", "Videos/{p}/{v}.mp4", "hd_epic/{v}.mp4"),
}


def build_tree(out: Path, manifest: Path, annotations: Path) -> dict[str, int]:
    videos: dict[str, list[str]] = {}
    for clip in read_manifest(manifest):
        if clip.video_id not in videos.setdefault(clip.dataset, []):
            videos[clip.dataset].append(clip.video_id)
    ann = load_annotations(annotations)
    durations = dict(zip(ann.videos["video_id"], ann.videos["duration_s"]))
    made = {"videos": 0, "seconds": 0}
    for dataset, ids in videos.items():
        for i, video in enumerate(ids[:-1]):
            layout = LAYOUTS[dataset][i % len(LAYOUTS[dataset])]
            path = out / layout.format(p=video.split("_")[0].split("-")[0], v=video)
            seconds = float(durations[video]) - (20.0 if dataset == "epic_sounds" and i == 0 else 0.0)
            make_test_video(path, seconds, size="32x24", rate=1, tone_hz=None)
            made["videos"] += 1
            made["seconds"] += int(seconds)
    return made


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="", help="folder for the tree (default: a temporary folder)")
    parser.add_argument("--manifest", default=str(REPO / "data" / "clips.csv"))
    parser.add_argument("--annotations", default="", help="annotations root (default: the project's)")
    args = parser.parse_args()
    annotations = Path(args.annotations) if args.annotations else Paths(REPO).annotations
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out) if args.out else Path(tmp) / "media"
        started = time.perf_counter()
        made = build_tree(out, Path(args.manifest), annotations)
        print(f"built {made['videos']} test videos ({made['seconds'] / 3600:.1f} h) under {out} "
              f"in {time.perf_counter() - started:.1f} s")
        started = time.perf_counter()
        code = cli(["media", "--media", str(out), "--manifest", args.manifest, "--annotations", str(annotations)])
        print(f"epic-levels media: exit {code}, {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
