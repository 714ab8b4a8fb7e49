"""The readers of the CSV annotation files: EPIC-SOUNDS segments, EPIC-KITCHENS-100 narrations, HD-EPIC activities,
the class vocabularies and the video info tables (the decisions they apply are :mod:`.readers`')."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import Problem
from .canonical import Loaded, empty_table
from .errata import known_errata
from .validation import (_check_nonempty, _check_span, _check_unique, _display, _flag, _numbered, _times,
                         parse_list_literal, parse_seconds, parse_timestamps, read_csv_strings)


def _read_sounds(path: Path) -> Loaded:
    problems: list[Problem] = []
    name = _display(path)
    categorised = "not_categorised" not in path.name
    required = ["annotation_id", "participant_id", "video_id", "start_timestamp", "stop_timestamp", "description"]
    if categorised:
        required += ["class", "class_id"]
    frame = read_csv_strings(path, required, problems)
    if frame is None:
        return Loaded("epic_sounds_segments", "sounds", empty_table("sounds"), problems)
    ok = _check_nonempty(problems, name, frame, ["annotation_id", "video_id"])
    ok &= _check_unique(problems, name, frame, "annotation_id")
    start = _times(problems, name, frame, "start_timestamp", parse_timestamps)
    stop = _times(problems, name, frame, "stop_timestamp", parse_timestamps)
    ok &= start.notna() & stop.notna()
    ok &= _check_span(problems, name, frame, "start_timestamp", "stop_timestamp", start, stop)
    if categorised:
        class_id = pd.to_numeric(frame["class_id"], errors="coerce")
        bad_id = (frame["class"].str.strip() != "") & class_id.isna()
        _flag(problems, name, frame, bad_id, "class_id", lambda r: f"class_id {r['class_id']!r} is not a number")
        ok &= ~bad_id
        sound_class = frame["class"].str.strip().replace("", None)
    else:
        class_id = pd.Series(np.nan, index=frame.index)
        sound_class = pd.Series(None, index=frame.index, dtype="object")
    out = pd.DataFrame({
        "annotation_id": frame["annotation_id"].str.strip(),
        "participant_id": frame["participant_id"].str.strip(),
        "video_id": frame["video_id"].str.strip(),
        "start_s": start, "stop_s": stop,
        "description": frame["description"].str.strip(),
        "sound_class": sound_class,
        "class_id": class_id.astype("Int64"),
        "categorised": sound_class.notna(),
        "source_file": path.name,
        "source_row": frame["_row"],
    })
    return Loaded("epic_sounds_segments", "sounds", out.loc[ok].reset_index(drop=True), problems)


def _read_narrations(path: Path) -> Loaded:
    problems: list[Problem] = []
    name = _display(path)
    required = ["narration_id", "participant_id", "video_id", "start_timestamp", "stop_timestamp",
                "narration", "verb", "verb_class", "noun", "noun_class", "all_nouns", "all_noun_classes"]
    frame = read_csv_strings(path, required, problems)
    if frame is None:
        return Loaded("epic_100_narrations", "narrations", empty_table("narrations"), problems)
    ok = _check_nonempty(problems, name, frame, ["narration_id", "video_id"])
    ok &= _check_unique(problems, name, frame, "narration_id")
    start = _times(problems, name, frame, "start_timestamp", parse_timestamps)
    stop = _times(problems, name, frame, "stop_timestamp", parse_timestamps)
    ok &= start.notna() & stop.notna()
    ok &= _check_span(problems, name, frame, "start_timestamp", "stop_timestamp", start, stop)
    labelled = frame["narration"].str.strip() != ""
    verb_class = pd.to_numeric(frame["verb_class"], errors="coerce")
    noun_class = pd.to_numeric(frame["noun_class"], errors="coerce")
    for column, parsed in (("verb_class", verb_class), ("noun_class", noun_class)):
        bad = labelled & parsed.isna()
        _flag(problems, name, frame, bad, column, lambda r, c=column: f"{c} {r[c]!r} is not a number")
        ok &= ~bad
    all_nouns = frame["all_nouns"].map(parse_list_literal)
    all_classes = frame["all_noun_classes"].map(parse_list_literal)
    for column, parsed in (("all_nouns", all_nouns), ("all_noun_classes", all_classes)):
        bad = parsed.isna()
        _flag(problems, name, frame, bad, column, lambda r, c=column: f"{c} {r[c]!r} is not a list literal")
        ok &= ~bad
    label_source = frame["label_source"] if "label_source" in frame.columns else pd.Series(f"{path.name} (official)", index=frame.index)
    out = pd.DataFrame({
        "narration_id": frame["narration_id"].str.strip(),
        "participant_id": frame["participant_id"].str.strip(),
        "video_id": frame["video_id"].str.strip(),
        "start_s": start, "stop_s": stop,
        "narration": frame["narration"].str.strip().where(labelled, None),
        "verb": frame["verb"].str.strip().where(labelled, None),
        "verb_class": verb_class.astype("Int64"),
        "noun": frame["noun"].str.strip().where(labelled, None),
        "noun_class": noun_class.astype("Int64"),
        "all_nouns": all_nouns.map(lambda v: [str(x) for x in v] if v is not None else []),
        "all_noun_classes": all_classes.map(lambda v: [int(x) for x in v] if v is not None else []),
        "labelled": labelled,
        "label_source": label_source,
        "source_file": path.name,
        "source_row": frame["_row"],
    })
    return Loaded("epic_100_narrations", "narrations", out.loc[ok].reset_index(drop=True), problems)


def _read_activities(path: Path, durations: dict[str, float] | None = None) -> Loaded:
    problems: list[Problem] = []
    name = _display(path)
    required = ["video_id", "recipe_id", "high_level_activity_label", "start_time", "end_time"]
    frame = read_csv_strings(path, required, problems)
    if frame is None:
        return Loaded("hd_epic_activities", "activities", empty_table("activities"), problems)
    ok = _check_nonempty(problems, name, frame, ["video_id"])
    unlabelled = frame["high_level_activity_label"].str.strip() == ""
    _flag(problems, name, frame, unlabelled, "high_level_activity_label", "activity span without a label; row left out", "dropped")
    ok &= ~unlabelled
    start = _times(problems, name, frame, "start_time", parse_seconds)
    to_end = frame["end_time"].str.strip().str.lower() == "end"
    stop_raw, stop_ok = parse_seconds(frame["end_time"].where(~to_end, "0"))
    _flag(problems, name, frame, ~stop_ok & ~to_end, "end_time",
          lambda r: f"unparsable time {r['end_time']!r} (expected seconds or 'end')")
    durations = durations or {}
    video_end = frame["video_id"].map(lambda v: durations.get(v.strip(), math.inf)).astype(float)
    stop = stop_raw.where(~to_end, video_end)
    ok &= start.notna() & stop.notna()
    errata = known_errata()

    def erratum(row: pd.Series) -> str | None:
        try:
            start_value, stop_value = float(row["start_time"]), float(row["end_time"])
        except ValueError:  # "end" resolved to a duration shorter than the start: not a listed erratum
            return None
        return errata.get(("activities", path.name, row["video_id"].strip(), row["high_level_activity_label"].strip(),
                           start_value, stop_value))

    ok &= _check_span(problems, name, frame, "start_time", "end_time", start, stop, erratum)
    participant = frame["video_id"].str.extract(r"^(P\d+)")[0]
    out = pd.DataFrame({
        # HD-EPIC activity rows carry no id of their own: video, span and recipe identify a row (interleaved
        # recipes share spans); a remaining repeat gets "#2", "#3" in file order.
        "activity_id": _numbered(frame["video_id"].str.strip() + "@" + frame["start_time"].str.strip() + "-"
                                 + frame["end_time"].str.strip() + "/" + frame["recipe_id"].str.strip().replace("", "-")),
        "participant_id": participant,
        "video_id": frame["video_id"].str.strip(),
        "recipe_id": frame["recipe_id"].str.strip().replace("", None),
        "label": frame["high_level_activity_label"].str.strip(),
        "start_s": start, "stop_s": stop,
        "stop_is_video_end": to_end,
        "source_file": path.name,
        "source_row": frame["_row"],
    })
    kept = out.loc[ok].reset_index(drop=True)
    return Loaded("hd_epic_activities", "activities", kept, problems)


def _read_classes(path: Path) -> Loaded:
    problems: list[Problem] = []
    name = _display(path)
    frame = read_csv_strings(path, ["id", "key", "instances", "category"], problems)
    if frame is None:
        return Loaded("class_vocabulary", "vocabulary", empty_table("vocabulary"), problems)
    class_id = pd.to_numeric(frame["id"], errors="coerce")
    ok = class_id.notna()
    _flag(problems, name, frame, ~ok, "id", lambda r: f"id {r['id']!r} is not a number")
    ok &= _check_unique(problems, name, frame, "id")
    instances = frame["instances"].map(parse_list_literal)
    bad = instances.isna()
    _flag(problems, name, frame, bad, "instances", "instances is not a list literal")
    ok &= ~bad
    vocabulary = "hd_epic" if path.name.startswith("HD_EPIC") else "epic_100"
    out = pd.DataFrame({
        "vocabulary": vocabulary,
        "kind": "noun" if "noun" in path.name else "verb",
        "class_id": class_id.astype("Int64"),
        "key": frame["key"].str.strip(),
        "instances": instances.map(lambda v: [str(x) for x in v] if v is not None else []),
        "category": frame["category"].str.strip(),
        "source_file": path.name,
    })
    return Loaded("class_vocabulary", "vocabulary", out.loc[ok].reset_index(drop=True), problems)


def _read_videos(path: Path) -> Loaded:
    problems: list[Problem] = []
    name = _display(path)
    frame = read_csv_strings(path, ["video_id", "duration"], problems)
    if frame is None:
        return Loaded("video_info", "videos", empty_table("videos"), problems)
    duration = pd.to_numeric(frame["duration"], errors="coerce")
    bad = duration.isna() | (duration < 0)
    _flag(problems, name, frame, bad, "duration", lambda r: f"duration {r['duration']!r} is not a non-negative number")
    ok = ~bad & _check_unique(problems, name, frame, "video_id")
    fps = pd.to_numeric(frame["fps"], errors="coerce") if "fps" in frame.columns else pd.Series(np.nan, index=frame.index)
    out = pd.DataFrame({"video_id": frame["video_id"].str.strip(), "duration_s": duration, "fps": fps,
                        "source_file": path.name})
    return Loaded("video_info", "videos", out.loc[ok].reset_index(drop=True), problems)

