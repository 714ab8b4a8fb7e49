"""``epic-levels windows``: every window of every annotated video, filtered by dataset and split, appended to the
manifest unless already listed (running it twice adds nothing; the manifest keeps its lines)."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .clip_keys import DATASETS, read_manifest
from .clips import Clip, LABELLED_STREAMS, all_windows, annotated_videos
from .layout import split_from_name
from .readers import Annotations

NO_SPLIT = "-"
MANIFEST_HEADER = "dataset,video_id,start_s,end_s"


def spread(n_items: int, limit: int | None) -> list[int]:
    """``limit`` positions out of ``range(n_items)`` spread evenly (the middle of each of ``limit`` equal
    parts), in order; all of them when ``limit`` is None or not smaller."""
    if limit is None or limit >= n_items:
        return list(range(n_items))
    if limit <= 0:
        return []
    return [((2 * i + 1) * n_items) // (2 * limit) for i in range(limit)]


def video_splits(ann: Annotations) -> dict[str, str]:
    """The split of each EPIC-SOUNDS video with labelled rows, from the names of the files they come from."""
    out: dict[str, str] = {}
    for table, flag in (("narrations", "labelled"), ("sounds", "categorised")):
        frame = ann.table(table)
        rows = frame.loc[frame[flag].fillna(False).astype(bool), ["video_id", "source_file"]].drop_duplicates()
        for video, source in zip(rows["video_id"], rows["source_file"]):
            split = split_from_name(str(source))
            if split and video not in out:
                out[video] = split
    return out


@dataclass
class WindowSelection:
    clips: list[Clip]
    splits: dict[str, str]                   # clip key -> split
    unlabelled_videos: dict[str, int] = field(default_factory=dict)  # dataset -> videos with rows, no labels


def select_windows(ann: Annotations, *, width: float = 30.0, stride: float | None = None,
                   datasets: list[str] | None = None, videos: list[str] | None = None, split: str | None = None,
                   limit: int | None = None, require: str = "any") -> WindowSelection:
    """The windows ``epic-levels windows`` lists: per dataset (in :data:`.clip_keys.DATASETS` order), video and
    start; ``videos`` are ids or shell patterns (``P01_*``); ``split`` keeps EPIC-SOUNDS videos of that split
    (HD-EPIC has none and stays); ``limit`` keeps that many spread evenly over the whole selection; ``require``
    is :func:`.clips.annotated_videos`' (``all``: the windows the benches under ``bench/`` use)."""
    datasets = list(datasets or DATASETS)
    unknown = [d for d in datasets if d not in DATASETS]
    if unknown:
        raise ValueError(f"unknown dataset {unknown[0]!r} (expected one of {', '.join(DATASETS)})")
    splits_of_video = video_splits(ann)
    clips: list[Clip] = []
    splits: dict[str, str] = {}
    unlabelled: dict[str, int] = {}
    for dataset in DATASETS:
        if dataset not in datasets:
            continue
        windows = all_windows(ann, dataset, width, stride, require=require)
        seen = set()
        for table, _ in LABELLED_STREAMS[dataset]:
            seen |= set(ann.table(table)["video_id"].dropna())
        unlabelled[dataset] = len(seen - set(annotated_videos(ann, dataset, require)))
        for clip in windows:
            if videos and not any(fnmatch.fnmatchcase(clip.video_id, p) for p in videos):
                continue
            clip_split = splits_of_video.get(clip.video_id, NO_SPLIT) if dataset == "epic_sounds" else NO_SPLIT
            if split and dataset == "epic_sounds" and clip_split != split:
                continue
            clips.append(clip)
            splits[clip.key] = clip_split
    chosen = [clips[i] for i in spread(len(clips), limit)]
    return WindowSelection(chosen, {c.key: splits[c.key] for c in chosen}, unlabelled)


def extend_manifest(path: Path, clips: list[Clip], note: str) -> tuple[list[Clip], int]:
    """Append the clips not yet in the manifest (after a ``# note`` line); create it with its header when
    missing. Returns (clips added, clips already listed). The existing lines are left as they are."""
    existing = {c.key for c in read_manifest(path)} if path.exists() else set()
    new, seen = [], set()
    for clip in clips:
        if clip.key not in existing and clip.key not in seen:
            new.append(clip)
            seen.add(clip.key)
    if new:
        text = path.read_text("utf-8") if path.exists() else MANIFEST_HEADER + "\n"
        if text and not text.endswith("\n"):
            text += "\n"
        lines = [f"# {note}"] + [f"{c.dataset},{c.video_id},{seconds_text(c.start_s)},{seconds_text(c.end_s)}" for c in new]
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text + "\n".join(lines) + "\n", "utf-8")
        tmp.replace(path)
    return new, len(clips) - len(new)


def seconds_text(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.3f}".rstrip("0").rstrip(".")


def summary_table(selection: WindowSelection, width: float, added: set[str] | None = None) -> pd.DataFrame:
    """Windows, videos and hours (of windows: width × windows) per dataset and split, with a total row."""
    rows = [{"dataset": c.dataset, "split": selection.splits[c.key], "video_id": c.video_id,
             "seconds": c.duration_s, "new": (c.key in added) if added is not None else False}
            for c in selection.clips]
    frame = pd.DataFrame(rows, columns=["dataset", "split", "video_id", "seconds", "new"])
    if frame.empty:
        return pd.DataFrame(columns=["dataset", "split", "videos", "windows", "hours", "added"])
    table = frame.groupby(["dataset", "split"], sort=True).agg(
        videos=("video_id", "nunique"), windows=("video_id", "size"), hours=("seconds", "sum"), added=("new", "sum")
    ).reset_index()
    total = pd.DataFrame([{"dataset": "total", "split": "", "videos": frame["video_id"].nunique(),
                           "windows": len(frame), "hours": frame["seconds"].sum(), "added": int(frame["new"].sum())}])
    table = pd.concat([table, total], ignore_index=True)
    table["hours"] = (table["hours"] / 3600).round(2)
    table["added"] = table["added"].astype(int)
    return table
