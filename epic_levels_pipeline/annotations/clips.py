"""The windows of annotated videos (every window of a video, the videos a dataset annotates, the manifest checked
against the annotations) and a clip's known gaps. :class:`Clip` and its key are in :mod:`.clip_keys`, a window's
rows in :mod:`.clip_rows`."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..errors import Problem
from .clip_keys import Clip, ManifestRow
from .hd_epic_streams import is_hd_epic_row
from .readers import Annotations


def window_starts(duration_s: float, width: float = 30.0, stride: float | None = None) -> list[float]:
    """Starts of every ``width``-second window that lies inside ``[0, duration_s]``, ``stride`` seconds apart
    (default ``width``: windows that tile the video). Starts are rounded to the millisecond, so a start is
    the same number however it was reached (``k * stride``)."""
    stride = width if stride is None else stride
    if width <= 0 or stride <= 0:
        raise ValueError(f"window width and stride must be positive (got {width}, {stride})")
    if not math.isfinite(duration_s) or duration_s < width:
        return []
    n = int(math.floor((duration_s - width) / stride + 1e-9)) + 1
    starts = [round(k * stride, 3) for k in range(n)]
    return [x for x in starts if x + width <= duration_s + 1e-9]


#: The tables (and the column flagging a labelled row, None: every row is) whose rows make a video
#: "annotated" for a dataset (:func:`annotated_videos`); a new stream of a dataset is added here.
LABELLED_STREAMS = {
    "epic_sounds": (("sounds", "categorised"), ("narrations", "labelled")),
    "hd_epic": (("activities", None), ("object_tracks", None)),
}


def annotated_videos(ann: Annotations, dataset: str, require: str = "all") -> list[str]:
    """The videos of a dataset with labelled rows: ``all`` = in every stream of :data:`LABELLED_STREAMS` for
    EPIC-SOUNDS (categorised sounds *and* labelled narrations) and HD-EPIC's activities; ``any`` = in any of
    them (a train video whose sound labels are not at hand still has its narrations)."""
    if require not in ("all", "any"):
        raise ValueError(f"require must be 'all' or 'any' (got {require!r})")
    sets = []
    for table, flag in LABELLED_STREAMS[dataset]:
        frame = ann.table(table)
        rows = frame.loc[frame[flag].fillna(False).astype(bool)] if flag else frame
        if dataset == "epic_sounds" and "source_file" in rows:
            rows = rows.loc[~is_hd_epic_row(rows["source_file"])]  # HD-EPIC's own sounds and narrations
        sets.append(set(rows["video_id"].dropna()))
    if require == "any":
        return sorted(set().union(*sets))
    if dataset == "hd_epic":
        return sorted(sets[0])
    return sorted(set.intersection(*sets))


def video_durations(ann: Annotations, dataset: str) -> dict[str, float]:
    """Each video's duration: the video info table's, else the end of its last annotated row."""
    tables = [t for t, _ in LABELLED_STREAMS[dataset]]
    spans = pd.concat([ann.table(t)[["video_id", "stop_s"]] for t in tables])
    spans = spans[np.isfinite(pd.to_numeric(spans["stop_s"], errors="coerce"))]
    last = spans.groupby("video_id")["stop_s"].max().to_dict()
    last.update({v: float(d) for v, d in zip(ann.videos["video_id"], ann.videos["duration_s"]) if pd.notna(d)})
    return last


def all_windows(ann: Annotations, dataset: str, width: float = 30.0, stride: float | None = None,
                require: str = "all", videos: list[str] | None = None) -> list[Clip]:
    """Every ``width``-second window, ``stride`` apart (default: tumbling windows), of every annotated video
    of a dataset (:func:`annotated_videos`; only ``videos`` when given), inside the video's duration
    (:func:`video_durations`)."""
    chosen = annotated_videos(ann, dataset, require)
    if videos is not None:
        wanted = set(videos)
        chosen = [v for v in chosen if v in wanted]
    durations = video_durations(ann, dataset)
    clips = []
    for video in chosen:
        clips += [Clip(dataset, video, start, round(start + width, 3))
                  for start in window_starts(durations.get(video, 0.0), width, stride)]
    return clips

#: The tables a dataset's clips take rows from (:func:`.clip_rows.clip_annotations`): a video with no row in any
#: of them gives its clips nothing to ask or describe.
DATASET_TABLES = {
    "epic_sounds": ("sounds", "narrations"),
    "hd_epic": ("sounds", "narrations", "activities", "object_tracks", "recipe_steps"),
}
#: How far past a video's end (from the video info table) a window may reach: rounding of the durations.
END_TOLERANCE_S = 0.001


def videos_with_rows(ann: Annotations, dataset: str) -> set[str]:
    """The videos with at least one row, labelled or not, in any table of the dataset (:data:`DATASET_TABLES`;
    HD-EPIC's own sounds and narrations count for ``hd_epic`` only)."""
    videos: set[str] = set()
    for name in DATASET_TABLES[dataset]:
        frame = ann.table(name)
        if dataset == "epic_sounds" and "source_file" in frame:
            frame = frame.loc[~is_hd_epic_row(frame["source_file"])]
        videos.update(frame["video_id"].dropna())
    return videos


def manifest_against_annotations(ann: Annotations, rows: list[ManifestRow], manifest: str
                                 ) -> tuple[list[Problem], list[Problem]]:
    """The manifest's clips that the annotations cannot back: a video with no row in any table of its dataset
    (:func:`videos_with_rows`), or a window that ends past the video's duration in the video info table.
    Returns (refused, kept): a row marked ``deliberate`` is kept and reported, any other is refused. Each is a
    problem naming the manifest, the row's line, the column and the video."""
    refused, kept = [], []
    present = {dataset: videos_with_rows(ann, dataset) for dataset in {r.clip.dataset for r in rows}}
    durations = {v: float(d) for v, d in zip(ann.videos["video_id"], ann.videos["duration_s"]) if pd.notna(d)}
    for row in rows:
        clip = row.clip
        if clip.video_id not in present[clip.dataset]:
            column, message = "video_id", (f"video {clip.video_id} has no rows in any {clip.dataset} annotation table "
                                           f"({', '.join(DATASET_TABLES[clip.dataset])})")
        elif clip.video_id in durations and clip.end_s > durations[clip.video_id] + END_TOLERANCE_S:
            column, message = "end_s", (f"window {clip.start_s:g}-{clip.end_s:g} s of video {clip.video_id} "
                                        f"ends past the video's end ({durations[clip.video_id]:.3f} s)")
        else:
            continue
        if row.deliberate:
            kept.append(Problem(manifest, row.line, column, f"kept (marked deliberate): {message}", "kept"))
        else:
            refused.append(Problem(manifest, row.line, column, f"{message}; fix the row, remove it, or mark it "
                                                                 "deliberate (a `deliberate` column with yes) to keep it"))
    return refused, kept


def gaps(clip: Clip, rows: pd.DataFrame) -> list[str]:
    """Known gaps of a clip stated in plain words (reported, never patched)."""
    notes = []
    if clip.dataset == "epic_sounds":
        sounds = rows[rows["stream"] == "sound"]
        narr = rows[rows["stream"] == "narration"]
        if len(sounds) and not sounds["categorised"].fillna(False).any():
            notes.append(f"all {len(sounds)} sound rows are not categorised (no class): the categorised sound "
                         "file of this video's split is not available")
        unlabelled = int((~narr["labelled"].fillna(False).astype(bool)).sum())
        if unlabelled:
            notes.append(f"{unlabelled} of {len(narr)} narration rows have timestamps but no label")
    return notes
