"""``epic-levels media``: list the manifest's source videos: found, missing, or disagreeing with the annotations."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..settings import Paths
from .options import about, location_flags


def add_parser(sub) -> None:
    p = sub.add_parser("media", **about(
        "list the manifest's source videos: found, missing, or disagreeing with the annotations"))
    p.add_argument("--manifest", default="", help="manifest whose videos to check (default data/clips.csv)")
    p.add_argument("--problems", action="store_true", help="list only the videos that are not found as they should be")
    location_flags(p, media=True)
    p.set_defaults(fn=cmd_media)


def cmd_media(args: argparse.Namespace) -> int:
    paths = args.project
    return main_media(paths.source_media, Path(args.manifest) if args.manifest else paths.manifest,
                      paths.annotations, problems_only=args.problems)


def main_media(media_root: Path, manifest: Path, annotations: Path, *, problems_only: bool = False, out=print) -> int:
    """The ``epic-levels media`` command: print one line per video and the counts; exit 1 when a video is
    not ``found``."""
    from ..annotations.clip_keys import read_manifest
    from ..annotations.readers import load_annotations
    from ..responses.media_check import STATUSES, check_media, checks_table, relative_path

    clips = read_manifest(manifest)
    ann = load_annotations(annotations)
    durations = dict(zip(ann.videos["video_id"], ann.videos["duration_s"]))
    checks = check_media(media_root, clips, durations)
    table = checks_table(checks)
    shown = table[table["status"] != "found"] if problems_only else table
    if len(shown):
        shown = shown.assign(path=[relative_path(p, media_root) if p else "" for p in shown["path"]])
    out(f"source videos of {manifest} ({len(clips)} clips, {len(table)} videos) under {media_root}:")
    if len(shown):
        out(shown.fillna("").to_string(index=False))
    counts = table["status"].value_counts().to_dict() if len(table) else {}
    out("videos: " + ", ".join(f"{counts.get(s, 0)} {s}" for s in STATUSES))
    return 0 if counts.get("found", 0) == len(table) else 1
