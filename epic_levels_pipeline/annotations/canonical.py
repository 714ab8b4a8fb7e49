"""The canonical annotation tables every file kind is read into: their columns (:data:`TABLE_COLUMNS`), an empty
table of each, and :class:`Loaded`, one file's rows with the problems noticed reading it."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..errors import Problem


SOUND_COLUMNS = [
    "annotation_id", "participant_id", "video_id", "start_s", "stop_s", "description", "sound_class",
    "class_id", "categorised", "source_file", "source_row",
]
NARRATION_COLUMNS = [
    "narration_id", "participant_id", "video_id", "start_s", "stop_s", "narration", "verb", "verb_class",
    "noun", "noun_class", "all_nouns", "all_noun_classes", "labelled", "label_source", "source_file",
    "source_row",
]
ACTIVITY_COLUMNS = [
    "activity_id", "participant_id", "video_id", "recipe_id", "label", "start_s", "stop_s",
    "stop_is_video_end", "source_file", "source_row",
]
RECIPE_STEP_COLUMNS = [
    "recipe_key", "recipe_name", "step_id", "step_text", "step_number", "video_id", "start_s", "stop_s",
    "span_index", "source_file", "source_row",
]
OBJECT_TRACK_COLUMNS = [
    "track_id", "association_id", "video_id", "raw_name", "object_name", "start_s", "stop_s", "n_masks",
    "source_file", "source_row",
]
VOCABULARY_COLUMNS = ["vocabulary", "kind", "class_id", "key", "instances", "category", "source_file"]
VIDEO_COLUMNS = ["video_id", "duration_s", "fps", "source_file"]

TABLE_COLUMNS: dict[str, list[str]] = {
    "sounds": SOUND_COLUMNS,
    "narrations": NARRATION_COLUMNS,
    "activities": ACTIVITY_COLUMNS,
    "recipe_steps": RECIPE_STEP_COLUMNS,
    "object_tracks": OBJECT_TRACK_COLUMNS,
    "vocabulary": VOCABULARY_COLUMNS,
    "videos": VIDEO_COLUMNS,
}


def empty_table(name: str) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype="object") for c in TABLE_COLUMNS[name]})


@dataclass
class Loaded:
    """One file read: its rows in the canonical table, and everything noticed on the way."""

    kind: str
    table: str
    frame: pd.DataFrame
    problems: list[Problem] = field(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def dropped(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "dropped"]
