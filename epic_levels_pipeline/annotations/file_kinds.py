"""The annotation file kinds the project reads, registered by file name (:data:`FILE_KINDS`), so that
``epic-levels validate``, the folder layout and the ingestion assets apply the same rules."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import hd_epic_streams
from .canonical import Loaded
from .csv_readers import _read_activities, _read_classes, _read_narrations, _read_sounds, _read_videos
from .json_readers import _read_assoc, _read_recipes


@dataclass(frozen=True)
class FileKind:
    name: str
    table: str
    pattern: str  # regular expression on the file name
    reader: Callable[[Path], Loaded]
    dataset: str


FILE_KINDS: list[FileKind] = [
    FileKind("epic_sounds_segments", "sounds", r"^EPIC_Sounds_(validation|train)\.csv$|^sound_events_not_categorised\.csv$", _read_sounds, "epic_sounds"),
    FileKind("epic_100_narrations", "narrations", r"^EPIC_100_(validation|train)[A-Za-z0-9_]*\.csv$", _read_narrations, "epic_sounds"),
    FileKind("hd_epic_activities", "activities", r"^P\d+_recipe_timestamps\.csv$", _read_activities, "hd_epic"),
    FileKind("hd_epic_recipes", "recipe_steps", r"^complete_recipes\.json$", _read_recipes, "hd_epic"),
    FileKind("hd_epic_object_tracks", "object_tracks", r"^assoc_info\.json$", _read_assoc, "hd_epic"),
    FileKind("class_vocabulary", "vocabulary", r"^(EPIC_100|HD_EPIC)_(noun|verb)_classes\.csv$", _read_classes, "*"),
    FileKind("video_info", "videos", r"^EPIC_100_video_info\.csv$|^HD_EPIC_YouTube_URLs\.csv$", _read_videos, "*"),
]

# HD-EPIC's own sounds and narrations
FILE_KINDS += [FileKind(*kind) for kind in hd_epic_streams.KINDS]


def file_kind(path: Path) -> FileKind | None:
    """The registered kind a file name belongs to, or None (the file is not read by epic-levels)."""
    for kind in FILE_KINDS:
        if re.search(kind.pattern, path.name):
            # EPIC_100_train_missing_timestamp_narrations.csv is an id list, not narrations.
            if kind.name == "epic_100_narrations" and "missing" in path.name:
                return None
            return kind
    return None
