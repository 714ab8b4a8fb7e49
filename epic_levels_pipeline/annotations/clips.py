"""Clips: keys, the manifest, and the annotation rows that overlap a clip's window.

A clip key encodes dataset, video and window: ``epic_sounds__P09_08__45-75``,
``hd_epic__P09-20240623-120359__1440-1470``. Video ids may contain ``-`` and ``_`` but not ``__``.

A row overlaps the window when ``start < window_end and stop > window_start`` (touching is not
overlapping). Each row keeps its unclipped span (``start_s``, ``stop_s``) and the part inside the window
(``start_clipped_s``, ``stop_clipped_s``), both in video time. For ``hd_epic`` clips the steps of every
recipe that has a step inside the window are added *with* their spans outside the window
(``in_window`` False): the knowledge of the task beyond the window that L4 questions need.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .readers import Annotations
from ..errors import ClipKeyError, ManifestError

DATASETS = ("hd_epic", "epic_sounds")

_KEY = re.compile(r"^(?P<dataset>[a-z_]+?)__(?P<video>[A-Za-z0-9\-_]+?)__(?P<start>\d+(?:\.\d+)?)-(?P<end>\d+(?:\.\d+)?)$")


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


@dataclass(frozen=True)
class Clip:
    dataset: str
    video_id: str
    start_s: float
    end_s: float

    @property
    def key(self) -> str:
        return f"{self.dataset}__{self.video_id}__{_fmt(self.start_s)}-{_fmt(self.end_s)}"

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s

    @classmethod
    def from_key(cls, key: str) -> "Clip":
        m = _KEY.match(key)
        if not m or m["dataset"] not in DATASETS:
            raise ClipKeyError(f"clip key {key!r} is not of the form <dataset>__<video>__<start>-<end> "
                               f"with dataset in {DATASETS}")
        clip = cls(m["dataset"], m["video"], float(m["start"]), float(m["end"]))
        if clip.end_s <= clip.start_s:
            raise ClipKeyError(f"clip key {key!r}: window end must be after its start")
        return clip


def read_manifest(path: Path) -> list[Clip]:
    """``data/clips.csv``: columns ``dataset, video_id, start_s, end_s``; errors name row and column."""
    name = str(path)
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{name}:0:-: cannot read manifest: {exc}") from exc


    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip() and not line.startswith("#")]
    if not lines:
        raise ManifestError(f"{name}:1:-: manifest is empty")
    header = next(csv.reader([lines[0][1]]))
    missing = [c for c in ("dataset", "video_id", "start_s", "end_s") if c not in header]
    if missing:
        raise ManifestError(f"{name}:{lines[0][0]}:{missing[0]}: missing column '{missing[0]}'")
    clips: list[Clip] = []
    seen: dict[str, int] = {}
    for i, line in lines[1:]:
        values = next(csv.reader([line]))
        if len(values) != len(header):
            raise ManifestError(f"{name}:{i}:-: expected {len(header)} fields, found {len(values)}")
        row = pd.Series(dict(zip(header, (v.strip() for v in values))))
        if row.dataset not in DATASETS:
            raise ManifestError(f"{name}:{i}:dataset: unknown dataset {row.dataset!r} (expected one of {DATASETS})")
        bounds = {}
        for column in ("start_s", "end_s"):
            try:
                bounds[column] = float(row[column])
            except ValueError:
                raise ManifestError(f"{name}:{i}:{column}: {row[column]!r} is not a number") from None
        start, end = bounds["start_s"], bounds["end_s"]
        if start < 0:
            raise ManifestError(f"{name}:{i}:start_s: window start must not be negative")
        if end <= start:
            raise ManifestError(f"{name}:{i}:end_s: window end must be after its start")
        if "__" in row.video_id or not row.video_id:
            raise ManifestError(f"{name}:{i}:video_id: video id {row.video_id!r} is empty or contains '__'")
        clip = Clip(row.dataset, row.video_id.strip(), start, end)
        if clip.key in seen:
            raise ManifestError(f"{name}:{i}:video_id: clip {clip.key} already listed at row {seen[clip.key]}")
        seen[clip.key] = i
        clips.append(clip)
    return clips


CLIP_ANNOTATION_COLUMNS = [
    "clip_key", "dataset", "video_id", "stream", "row_id", "label", "start_s", "stop_s",
    "start_clipped_s", "stop_clipped_s", "in_window",
    # stream-specific (null where not applicable)
    "description", "sound_class", "class_id", "categorised",
    "narration", "verb", "verb_class", "noun", "noun_class", "all_nouns", "all_noun_classes", "labelled",
    "recipe_id", "recipe_key", "step_id", "step_number",
    "raw_name", "object_name", "association_id",
    "source_file", "source_row",
]


_VIDEO_INDEX: dict[int, tuple[pd.DataFrame, dict[str, pd.DataFrame]]] = {}


def rows_of_video(frame: pd.DataFrame, video_id: str) -> pd.DataFrame:
    """Rows of one video, through a per-table index built once (tables are not modified after loading)."""
    cached = _VIDEO_INDEX.get(id(frame))
    if cached is None or cached[0] is not frame:
        cached = (frame, {v: g for v, g in frame.groupby("video_id", sort=False)})
        _VIDEO_INDEX[id(frame)] = cached
    return cached[1].get(video_id, frame.iloc[0:0])


def _overlap(frame: pd.DataFrame, clip: Clip) -> pd.DataFrame:
    rows = rows_of_video(frame, clip.video_id)
    return rows.loc[(rows["start_s"] < clip.end_s) & (rows["stop_s"] > clip.start_s)]


def _finish(rows: pd.DataFrame, clip: Clip, stream: str, row_id: pd.Series, label: pd.Series) -> pd.DataFrame:
    out = rows.copy()
    out["clip_key"] = clip.key
    out["dataset"] = clip.dataset
    out["stream"] = stream
    out["row_id"] = row_id.astype(str).values
    out["label"] = label.values
    out["start_clipped_s"] = out["start_s"].clip(lower=clip.start_s, upper=clip.end_s)
    out["stop_clipped_s"] = out["stop_s"].clip(lower=clip.start_s, upper=clip.end_s)
    if "in_window" not in out.columns:
        out["in_window"] = True
    out["source_row"] = out["source_row"].astype(str)
    return out


def clip_annotations(ann: Annotations, clip: Clip) -> pd.DataFrame:
    """Every annotation row overlapping the clip's window (plus recipe context for hd_epic)."""
    parts: list[pd.DataFrame] = []
    if clip.dataset == "epic_sounds":
        s = _overlap(ann.sounds, clip)
        parts.append(_finish(s, clip, "sound", s["annotation_id"], s["sound_class"].fillna("(not categorised) " + s["description"])))
        n = _overlap(ann.narrations, clip)
        parts.append(_finish(n, clip, "narration", n["narration_id"], n["narration"].fillna("(unlabelled)")))
    else:
        a = _overlap(ann.activities, clip)
        parts.append(_finish(a, clip, "activity", a["activity_id"], a["label"]))
        t = _overlap(ann.object_tracks, clip)
        parts.append(_finish(t, clip, "object_track", t["track_id"], t["object_name"]))
        steps = ann.recipe_steps
        inside = _overlap(steps, clip)
        recipes = set(inside["recipe_key"])
        video_steps = rows_of_video(steps, clip.video_id)
        context = video_steps.loc[video_steps["recipe_key"].isin(recipes)].copy()
        context["in_window"] = (context["start_s"] < clip.end_s) & (context["stop_s"] > clip.start_s)
        context = context.rename(columns={"step_text": "step_label"})
        parts.append(_finish(context, clip, "recipe_step",
                             pd.Series([f"{sid}@{_fmt(a)}-{_fmt(b)}" for sid, a, b in
                                        zip(context["step_id"], context["start_s"], context["stop_s"])],
                                       index=context.index, dtype=object),
                             context["step_label"]))
    frames = [p for p in parts if len(p)]
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in CLIP_ANNOTATION_COLUMNS})
    out = pd.concat(frames, ignore_index=True)
    for column in CLIP_ANNOTATION_COLUMNS:
        if column not in out.columns:
            out[column] = None
    out = out[CLIP_ANNOTATION_COLUMNS].sort_values(["stream", "start_s", "row_id"], kind="stable").reset_index(drop=True)
    # Parquet-friendly, stable types.
    for column in ("class_id", "verb_class", "noun_class", "step_number"):
        out[column] = pd.to_numeric(out[column], errors="coerce").astype("Int64")
    for column in ("categorised", "labelled"):
        out[column] = out[column].astype("boolean")
    for column in ("all_nouns", "all_noun_classes"):
        out[column] = out[column].map(lambda v: list(v) if isinstance(v, (list, tuple, np.ndarray)) else [])
    return out


def all_windows(ann: Annotations, dataset: str, width: float = 30.0) -> list[Clip]:
    """Every tumbling ``width``-second window of every annotated video of a dataset (for benchmarks)."""
    if dataset == "epic_sounds":
        spans = pd.concat([ann.sounds[["video_id", "stop_s"]], ann.narrations[["video_id", "stop_s"]]])
        # Videos with both categorised sounds and labelled narrations (the validation split here).
        videos = sorted(set(ann.sounds.loc[ann.sounds["categorised"], "video_id"])
                        & set(ann.narrations.loc[ann.narrations["labelled"], "video_id"]))
    else:
        spans = pd.concat([ann.activities[["video_id", "stop_s"]], ann.object_tracks[["video_id", "stop_s"]]])
        videos = ann.activities["video_id"].unique()
    spans = spans[np.isfinite(spans["stop_s"])]
    last = spans.groupby("video_id")["stop_s"].max()
    durations = dict(zip(ann.videos["video_id"], ann.videos["duration_s"]))
    clips = []
    for video in sorted(videos):
        end = durations.get(video, last.get(video, 0.0))
        n = int(end // width)
        clips += [Clip(dataset, video, i * width, (i + 1) * width) for i in range(n)]
    return clips


def canonical_value(value):
    """One annotation cell as a plain JSON value, the same whatever read it (CSV, Parquet, another
    pandas or numpy version): nulls (None, NaN, ``pd.NA``, ``NaT``) become ``None``; numpy scalars become
    Python ones; integral floats become ints and other floats are rounded to 6 decimals (microseconds, far
    below the annotations' precision); lists, tuples and arrays become lists of canonical values; mappings
    get sorted keys; timestamps their ISO form; anything else its ``str``."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, (str, bytes)):
        return value.decode() if isinstance(value, bytes) else value
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        x = float(value)
        if math.isnan(x):
            return None
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        rounded = round(x, 6)
        return int(rounded) if rounded.is_integer() else rounded
    if isinstance(value, (list, tuple, np.ndarray, pd.api.extensions.ExtensionArray)):
        return [canonical_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): canonical_value(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        return pd.Timestamp(value).isoformat()
    return str(value)


def canonical_rows(rows: pd.DataFrame) -> str:
    """A clip's rows as canonical JSON: the fixed column order of :data:`CLIP_ANNOTATION_COLUMNS` (less
    ``source_row``, a line number that moves when unrelated rows are added above), each cell through
    :func:`canonical_value`, rows ordered by (stream, row id, start)."""
    cols = [c for c in CLIP_ANNOTATION_COLUMNS if c != "source_row"]
    records = []
    for record in rows.reindex(columns=cols).itertuples(index=False, name=None):
        records.append([canonical_value(v) for v in record])
    i_stream, i_id, i_start = cols.index("stream"), cols.index("row_id"), cols.index("start_s")
    records.sort(key=lambda r: (str(r[i_stream]), str(r[i_id]), json.dumps(r[i_start])))
    return json.dumps({"columns": cols, "rows": records}, separators=(",", ":"), ensure_ascii=False)


def content_hash(rows: pd.DataFrame) -> str:
    """A stable hash of a clip's rows: changes exactly when an overlapping row (or recipe context) changes,
    and is identical whether the rows come from the CSVs, from Parquet or from another library version
    (see :func:`canonical_rows`)."""
    return hashlib.sha256(canonical_rows(rows).encode()).hexdigest()[:16]


def clip_hashes(ann: Annotations, clips: list[Clip]) -> dict[str, str]:
    """Content hash of each clip's overlapping rows (the ``clip_annotations`` data version)."""
    return {clip.key: content_hash(clip_annotations(ann, clip)) for clip in clips}


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
