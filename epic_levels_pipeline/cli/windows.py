"""``epic-levels windows``: write or extend the clip manifest with every window of every annotated video."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from ..settings import Paths
from .options import about, location_flags, names


def add_parser(sub) -> None:
    p = sub.add_parser("windows", **about(
        "write or extend the clip manifest with every window of every annotated video"))
    p.add_argument("--width", type=float, default=30.0, help="window length in seconds (default 30)")
    p.add_argument("--stride", type=float, default=None, help="seconds between window starts (default: the width)")
    p.add_argument("--datasets", default=None, help="comma-separated datasets (default: epic_sounds,hd_epic)")
    p.add_argument("--videos", default=None, help="comma-separated video ids or shell patterns (P01_*)")
    p.add_argument("--split", choices=["train", "validation"], default=None,
                   help="only EPIC-SOUNDS videos of this split (HD-EPIC has no split and stays)")
    p.add_argument("--limit", type=int, default=None, help="at most N windows, spread evenly over the selection")
    p.add_argument("--require", choices=["any", "all"], default="any",
                   help="a video is annotated when it has labelled rows in any stream (default) or in all of them "
                        "(EPIC-SOUNDS: categorised sounds and labelled narrations; HD-EPIC: activities)")
    p.add_argument("--manifest", default="", help="manifest to write or extend (default data/clips.csv)")
    p.add_argument("--dry-run", action="store_true", help="print the summary, write nothing")
    location_flags(p)
    p.set_defaults(fn=cmd_windows)


def cmd_windows(args: argparse.Namespace) -> int:
    paths = args.project
    return main_windows(paths.annotations, Path(args.manifest) if args.manifest else paths.manifest,
                        width=args.width, stride=args.stride, datasets=names(args.datasets),
                        videos=names(args.videos), split=args.split, limit=args.limit, require=args.require,
                        dry_run=args.dry_run)


def main_windows(annotations: Path, manifest: Path, *, width: float = 30.0, stride: float | None = None,
                 datasets: list[str] | None = None, videos: list[str] | None = None, split: str | None = None,
                 limit: int | None = None, require: str = "any", dry_run: bool = False, out=print) -> int:
    """The ``epic-levels windows`` command: select, extend the manifest (unless ``dry_run``), print the summary."""
    from ..annotations.clip_keys import read_manifest
    from ..annotations.layout import locate
    from ..annotations.readers import load_annotations
    from ..annotations.windows import extend_manifest, seconds_text, select_windows, summary_table

    for name, value in (("width", width), ("stride", stride)):
        if value is not None and (not math.isfinite(value) or value <= 0 or abs(value * 10 - round(value * 10)) > 1e-9):
            out(f"error: --{name} must be a positive number of seconds, a multiple of 0.1 (got {value})")
            return 2
    layout = locate(annotations)
    ann = load_annotations(annotations)
    selection = select_windows(ann, width=width, stride=stride, datasets=datasets, videos=videos, split=split,
                               limit=limit, require=require)
    stride_s = stride if stride is not None else width
    if dry_run:
        listed = {c.key for c in read_manifest(manifest)} if manifest.exists() else set()
        added, already = [], sum(1 for c in selection.clips if c.key in listed)
    else:
        note = (f"{len(selection.clips)} windows of {seconds_text(width)} s, stride {seconds_text(stride_s)} s "
                f"(epic-levels windows{' --datasets ' + ','.join(datasets) if datasets else ''}"
                f"{' --split ' + split if split else ''}{' --limit ' + str(limit) if limit else ''}"
                f"{' --require all' if require == 'all' else ''})")
        added, already = extend_manifest(manifest, selection.clips, note)
    table = summary_table(selection, width, {c.key for c in added})
    out(f"windows of {seconds_text(width)} s, stride {seconds_text(stride_s)} s, from {annotations} "
        f"({len(layout.files)} annotation files read):")
    out(table.to_string(index=False) if len(table) else "(no annotated video has a window of that width)")
    skipped = [f"{p.relative_to(layout.root)} ({rows:,} rows)" for p, rows in sorted(layout.test.items())]
    if skipped:
        out(f"skipped, test split without labels: {len(skipped)} files: {'; '.join(skipped)}")
    for path, instead in sorted(layout.shadowed.items()):
        out(f"skipped, another copy is read: {path.relative_to(layout.root)} (read: {instead.relative_to(layout.root)})")
    unlabelled = {d: n for d, n in selection.unlabelled_videos.items() if n}
    if unlabelled:
        out(f"videos without labelled rows {'in every stream ' if require == 'all' else ''}(no windows): "
            + ", ".join(f"{d} {n}" for d, n in unlabelled.items()))
    if dry_run:
        out(f"dry run: {manifest} not written ({already} of these windows are already in it)")
    else:
        total = len(read_manifest(manifest))
        out(f"{manifest}: {len(added)} windows added, {already} already listed ({total} clips in all)")
    return 0
