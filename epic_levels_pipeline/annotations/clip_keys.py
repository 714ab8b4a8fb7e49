"""Clip keys and the manifest: a :class:`Clip` is a dataset, a video and a window, named by its key
(``epic_sounds__P09_08__45-75``, ``hd_epic__P09-20240623-120359__1440-1470``; video ids may contain ``-`` and
``_`` but not ``__``); :func:`read_manifest` reads the clips listed in ``data/clips.csv``, and
:func:`read_manifest_rows` the same with each clip's line and its optional ``deliberate`` mark."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pandas as pd

from ..errors import ClipKeyError, ManifestError

DATASETS = ("hd_epic", "epic_sounds")
MANIFEST_COLUMNS = ("dataset", "video_id", "start_s", "end_s")
#: The manifest's optional last column: ``yes`` keeps a clip the pre-flight would refuse (its video has no rows in
#: the dataset's annotations, or its window passes the video's end); it is then reported, not refused.
DELIBERATE = "deliberate"
_YES, _NO = ("yes", "true", "1", "y"), ("", "no", "false", "0", "n")

_KEY = re.compile(r"^(?P<dataset>[a-z_]+?)__(?P<video>[A-Za-z0-9\-_]+?)__(?P<start>\d+(?:\.\d+)?)-(?P<end>\d+(?:\.\d+)?)$")


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


@dataclass(frozen=True)
class Clip:
    dataset: str
    video_id: str
    start_s: float
    end_s: float

    @cached_property
    def key(self) -> str:
        # worked out once per clip (a frozen clip's key never changes; the bank asks for it per draft)
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


@dataclass(frozen=True)
class ManifestRow:
    """One clip of the manifest, with the line it is on (1-based, the header is a line) and whether the row is
    marked ``deliberate``."""

    clip: Clip
    line: int
    deliberate: bool = False


def read_manifest(path: Path) -> list[Clip]:
    """``data/clips.csv``: columns ``dataset, video_id, start_s, end_s`` (and optionally ``deliberate``); errors
    name row and column."""
    return [row.clip for row in read_manifest_rows(path)]


def read_manifest_rows(path: Path) -> list[ManifestRow]:
    """The manifest's clips with their lines and ``deliberate`` marks (:class:`ManifestRow`). A row may leave out
    trailing columns after ``end_s`` (as ``epic-levels windows`` appends them); errors name row and column."""
    name = str(path)
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{name}:0:-: cannot read manifest: {exc}") from exc

    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip() and not line.startswith("#")]
    if not lines:
        raise ManifestError(f"{name}:1:-: manifest is empty")
    header = [c.strip() for c in next(csv.reader([lines[0][1]]))]
    missing = [c for c in MANIFEST_COLUMNS if c not in header]
    if missing:
        raise ManifestError(f"{name}:{lines[0][0]}:{missing[0]}: missing column '{missing[0]}'")
    needed = 1 + max(header.index(c) for c in MANIFEST_COLUMNS)
    rows: list[ManifestRow] = []
    seen: dict[str, int] = {}
    for i, line in lines[1:]:
        values = next(csv.reader([line]))
        if not needed <= len(values) <= len(header):
            expected = len(header) if needed == len(header) else f"{needed} to {len(header)}"
            raise ManifestError(f"{name}:{i}:-: expected {expected} fields, found {len(values)}")
        row = pd.Series(dict(zip(header, (v.strip() for v in values + [""] * (len(header) - len(values))))))
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
        mark = str(row.get(DELIBERATE, "")).lower()
        if mark not in _YES + _NO:
            raise ManifestError(f"{name}:{i}:{DELIBERATE}: {row[DELIBERATE]!r} is not yes or no (empty: no)")
        clip = Clip(row.dataset, row.video_id.strip(), start, end)
        if clip.key in seen:
            raise ManifestError(f"{name}:{i}:video_id: clip {clip.key} already listed at row {seen[clip.key]}")
        seen[clip.key] = i
        rows.append(ManifestRow(clip, i, mark in _YES))
    return rows
