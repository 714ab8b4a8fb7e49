"""``epic-levels media``: which of the manifest's source videos are found, missing, or disagree with the
annotations (``duration differs``, ``window past end``, ``unreadable``), before any model call is spent. Each
video is looked up as the ``clip_media`` asset does and probed with the bundled ffmpeg
(docs/full-datasets.md)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..annotations.clips import Clip
from .media import END_TOLERANCE_S, MediaError, find_source_video, probe
from .media_sources import source_video_stems

#: How far (seconds) a probed duration may be from the annotated one before it is reported.
DURATION_TOLERANCE_S = 1.0

STATUSES = ("found", "missing", "duration differs", "window past end", "unreadable")


@dataclass(frozen=True)
class VideoCheck:
    dataset: str
    video_id: str
    status: str
    clips: int
    path: str
    probed_s: float | None
    annotated_s: float | None
    note: str = ""


def check_media(media_root: Path, clips: list[Clip], durations: dict[str, float],
                tolerance_s: float = DURATION_TOLERANCE_S) -> list[VideoCheck]:
    """One :class:`VideoCheck` per video of ``clips`` (in first-seen order)."""
    videos: dict[tuple[str, str], list[Clip]] = {}
    for clip in clips:
        videos.setdefault((clip.dataset, clip.video_id), []).append(clip)
    out = []
    for (dataset, video), its in videos.items():
        annotated = durations.get(video)
        annotated = float(annotated) if annotated is not None and pd.notna(annotated) else None
        source = find_source_video(media_root, dataset, video)
        if source is None:
            looked = ", ".join(f"{relative_path(s, media_root)}.*" for s in source_video_stems(media_root, dataset, video))
            out.append(VideoCheck(dataset, video, "missing", len(its), "", None, annotated, f"looked for {looked}"))
            continue
        try:
            probed = probe(source).duration_s
        except MediaError as exc:
            out.append(VideoCheck(dataset, video, "unreadable", len(its), str(source), None, annotated, str(exc)))
            continue
        last_end = max(c.end_s for c in its)
        if annotated is not None and abs(probed - annotated) > tolerance_s:
            status, note = "duration differs", f"differs by {probed - annotated:+.2f} s (tolerance {tolerance_s:g} s)"
        elif last_end > probed + END_TOLERANCE_S:
            status, note = "window past end", f"a window ends at {last_end:g} s"
        else:
            status, note = "found", "" if annotated is not None else "no annotated duration to compare"
        out.append(VideoCheck(dataset, video, status, len(its), str(source), round(probed, 3), annotated, note))
    return out


def relative_path(path: Path, root: Path) -> str:
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return str(path)


def checks_table(checks: list[VideoCheck]) -> pd.DataFrame:
    return pd.DataFrame([c.__dict__ for c in checks],
                        columns=["dataset", "video_id", "status", "clips", "path", "probed_s", "annotated_s", "note"])
