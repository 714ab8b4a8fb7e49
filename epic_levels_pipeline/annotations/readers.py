"""Reading and validating the public annotation files into typed tables (times in seconds).

Every file kind the project reads is registered in :data:`FILE_KINDS` by file name, so that
``epic-levels validate`` and the ingestion assets apply the same rules. Validation works on whole columns
(pandas), not row by row, and reports *every* problem as a :class:`~epic_levels_pipeline.errors.Problem`
naming file, row and column.

Decisions worth knowing:

- A row whose span has zero length (start == stop) is **dropped and counted** (reason ``zero-length
  span``); HD-EPIC activities have three such rows.
- A row that ends before it starts is an **error**, except for the upstream rows listed in
  ``known_errata.csv`` (four HD-EPIC activities), which are dropped with the erratum's reason. A new
  inverted row anywhere is an error.
- HD-EPIC activity ``end_time`` may be the word ``end``: the span runs to the end of the video, whose
  duration comes from the ``videos`` table (HD-EPIC's ``HD_EPIC_YouTube_URLs.csv``). If the duration is
  unknown the row is kept with ``stop_s`` = +inf and flagged ``stop_is_video_end``.
- EPIC-KITCHENS-100 narrations with an empty ``narration`` (train rows whose labels are not published)
  are kept with ``labelled = False``: they are real moments whose content is unknown.
- EPIC-SOUNDS rows without ``class`` (the not-categorised file) are sounds of unknown class
  (``sound_class`` null, ``categorised = False``).
- HD-EPIC's own sounds and narrations (``HD_EPIC_Sounds.{csv,pkl}``, ``HD_EPIC_Narrations.pkl``) join the
  ``sounds`` and ``narrations`` tables; their readers and decisions are in :mod:`.hd_epic_streams`.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from ..errors import AnnotationError, Problem
from .errata import known_errata
from .validation import (_check_nonempty, _check_span, _check_unique, _display, _flag, _numbered, _read_text,  # noqa: F401
                         _times, normalise_object_name, parse_list_literal, parse_seconds, parse_timestamps,
                         read_csv_strings)

# ----------------------------------------------------------------------------------------------------
# Canonical tables
# ----------------------------------------------------------------------------------------------------

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


# ----------------------------------------------------------------------------------------------------
# File kinds
# ----------------------------------------------------------------------------------------------------


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


# --- JSON shapes (pydantic) ---------------------------------------------------------------------------


class _Span(BaseModel):
    model_config = ConfigDict(extra="allow")
    video: str
    start: float
    end: float


class _Capture(BaseModel):
    model_config = ConfigDict(extra="allow")
    videos: list[str]
    step_times: dict[str, list[_Span]]


class _Recipe(BaseModel):
    model_config = ConfigDict(extra="allow")
    participant: str
    name: str
    steps: dict[str, str]
    captures: list[_Capture]


class _Track(BaseModel):
    model_config = ConfigDict(extra="allow")
    track_id: str
    time_segment: tuple[float, float]
    masks: list[str] = []


class _Association(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    tracks: list[_Track]


_RECIPES = TypeAdapter(dict[str, _Recipe])
_ASSOC = TypeAdapter(dict[str, dict[str, _Association]])


def _read_json(path: Path, adapter: TypeAdapter, problems: list[Problem]):
    name = _display(path)
    text = _read_text(path, problems)
    if text is None:
        return None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(Problem(name, exc.lineno, f"char {exc.colno}", f"invalid JSON: {exc.msg}"))
        return None
    try:
        return adapter.validate_python(raw)
    except ValidationError as exc:
        for err in exc.errors():
            loc = [str(x) for x in err["loc"]]
            row = "/".join(loc[:-1]) or "(top level)"
            column = loc[-1] if loc else "-"
            problems.append(Problem(name, row, column, f"wrong JSON shape: {err['msg']}"))
        return None


def _read_recipes(path: Path) -> Loaded:
    problems: list[Problem] = []
    name = _display(path)
    recipes = _read_json(path, _RECIPES, problems)
    if recipes is None:
        return Loaded("hd_epic_recipes", "recipe_steps", empty_table("recipe_steps"), problems)
    rows = []
    for key, recipe in recipes.items():
        step_numbers = {sid: i + 1 for i, sid in enumerate(sorted(recipe.steps))}
        for c, capture in enumerate(recipe.captures):
            for step_id, spans in capture.step_times.items():
                where = f"{key}/captures/{c}/step_times/{step_id}"
                if step_id not in recipe.steps:
                    problems.append(Problem(name, where, "step_id", f"step {step_id!r} has times but no text in 'steps'"))
                    continue
                for i, span in enumerate(spans):
                    loc = f"{where}/{i}"
                    if span.start < 0 or span.end < 0:
                        problems.append(Problem(name, loc, "start" if span.start < 0 else "end", "negative time"))
                        continue
                    if span.end < span.start:
                        problems.append(Problem(name, loc, "end", f"end {span.end} is before start {span.start}"))
                        continue
                    if span.end == span.start:
                        problems.append(Problem(name, loc, "end", "zero-length span; left out", "dropped"))
                        continue
                    rows.append((key, recipe.name, step_id, recipe.steps[step_id], step_numbers[step_id],
                                 span.video, span.start, span.end, i, path.name, loc))
    frame = pd.DataFrame(rows, columns=RECIPE_STEP_COLUMNS) if rows else empty_table("recipe_steps")
    return Loaded("hd_epic_recipes", "recipe_steps", frame, problems)


def _read_assoc(path: Path) -> Loaded:
    problems: list[Problem] = []
    name = _display(path)
    data = _read_json(path, _ASSOC, problems)
    if data is None:
        return Loaded("hd_epic_object_tracks", "object_tracks", empty_table("object_tracks"), problems)
    rows = []
    seen: dict[str, str] = {}
    for video_id, associations in data.items():
        for association_id, assoc in associations.items():
            for i, track in enumerate(assoc.tracks):
                loc = f"{video_id}/{association_id}/tracks/{i}"
                start, stop = track.time_segment
                if start < 0 or stop < 0:
                    problems.append(Problem(name, loc, "time_segment", "negative time"))
                    continue
                if stop < start:
                    problems.append(Problem(name, loc, "time_segment", f"end {stop} is before start {start}"))
                    continue
                if track.track_id in seen:
                    problems.append(Problem(name, loc, "track_id", f"duplicate id {track.track_id!r} (first at {seen[track.track_id]})"))
                    continue
                seen[track.track_id] = loc
                if stop == start:
                    problems.append(Problem(name, loc, "time_segment", "zero-length span; left out", "dropped"))
                    continue
                rows.append((track.track_id, association_id, video_id, assoc.name, normalise_object_name(assoc.name),
                             start, stop, len(track.masks), path.name, loc))
    frame = pd.DataFrame(rows, columns=OBJECT_TRACK_COLUMNS) if rows else empty_table("object_tracks")
    return Loaded("hd_epic_object_tracks", "object_tracks", frame, problems)


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

from . import hd_epic_streams  # noqa: E402  (HD-EPIC's own sounds and narrations; it reads this module only when called)

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


def discover(paths: list[Path]) -> tuple[list[Path], list[Path]]:
    """Expand folders (each an annotations root: :func:`.layout.locate` decides which of its files are read);
    return (annotation files, files skipped: test split, shadowed copies, files no kind reads)."""
    from .layout import locate

    found: list[Path] = []
    skipped: list[Path] = []
    for path in paths:
        if path.is_dir():
            layout = locate(path)
            found += layout.files
            skipped += layout.skipped
        else:
            found.append(path)  # named explicitly: an unknown file is itself a problem
    return found, skipped


def read_file(path: Path, durations: dict[str, float] | None = None) -> Loaded:
    if not path.exists():
        return Loaded("missing", "-", pd.DataFrame(), [Problem(_display(path), 0, "-", "no such file or folder")])
    kind = file_kind(path)
    if kind is None:
        patterns = "; ".join(k.pattern for k in FILE_KINDS)
        return Loaded("unknown", "-", pd.DataFrame(),
                      [Problem(_display(path), 0, "-", f"not an annotation file epic-levels reads (names: {patterns})")])
    if kind.name == "hd_epic_activities":
        return _read_activities(path, durations)
    return kind.reader(path)


# ----------------------------------------------------------------------------------------------------
# All annotations of a data folder
# ----------------------------------------------------------------------------------------------------


@dataclass
class Annotations:
    """The typed tables of one annotation folder, plus what was dropped on the way and why."""

    sounds: pd.DataFrame
    narrations: pd.DataFrame
    activities: pd.DataFrame
    recipe_steps: pd.DataFrame
    object_tracks: pd.DataFrame
    vocabulary: pd.DataFrame
    videos: pd.DataFrame
    files: list[str] = field(default_factory=list)
    dropped: list[Problem] = field(default_factory=list)

    def table(self, name: str) -> pd.DataFrame:
        return getattr(self, name)

    def dropped_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for p in self.dropped:
            reason = p.message.split(";")[0].split(" (")[0]
            counts[reason] = counts.get(reason, 0) + 1
        return counts


def read_tables(files: list[Path]) -> tuple[dict[str, pd.DataFrame], list[Problem]]:
    """Read files (videos first, so HD-EPIC ``end`` can resolve) into canonical tables."""
    problems: list[Problem] = []
    loaded: dict[str, list[pd.DataFrame]] = {name: [] for name in TABLE_COLUMNS}
    video_files = [f for f in files if (k := file_kind(f)) and k.table == "videos"]
    durations: dict[str, float] = {}
    for f in video_files:
        result = read_file(f)
        problems += result.problems
        loaded["videos"].append(result.frame)
        durations.update(dict(zip(result.frame["video_id"], result.frame["duration_s"])))
    for f in files:
        if f in video_files:
            continue
        result = read_file(f, durations)
        problems += result.problems
        if result.table in loaded:
            loaded[result.table].append(result.frame)
    tables = {}
    for name, frames in loaded.items():
        frames = [f for f in frames if len(f)]
        tables[name] = pd.concat(frames, ignore_index=True) if frames else empty_table(name)
    # Ids must be unique across files of one kind too (a sound id in two files would be ambiguous).
    for name, id_col in (("sounds", "annotation_id"), ("narrations", "narration_id")):
        t = tables[name]
        dup = t[id_col].duplicated(keep="first")
        for _, r in t.loc[dup].iterrows():
            problems.append(Problem(r["source_file"], int(r["source_row"]), id_col, f"duplicate id {r[id_col]!r} (also in another file)"))
    return tables, problems


def load_annotations(root: Path) -> Annotations:
    """Read every annotation file under ``root``; raise :class:`AnnotationError` on any error."""
    files, _ = discover([root])
    if not files:
        raise AnnotationError([Problem(str(root), 0, "-", "no annotation files found")])
    tables, problems = read_tables(files)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise AnnotationError(errors)
    return Annotations(**tables, files=[str(f) for f in files], dropped=[p for p in problems if p.severity == "dropped"])


def files_fingerprint(root: Path, extra: list[Path] | None = None) -> str:
    """A content hash of every annotation file under ``root`` (plus ``extra`` files such as the manifest):
    changes exactly when a byte of a file read by epic-levels changes, or a file appears or goes."""
    import hashlib

    files, _ = discover([root]) if root.exists() else ([], [])
    digest = hashlib.sha256()
    for path in sorted(files) + sorted(p for p in (extra or []) if p.exists()):
        digest.update(str(path.relative_to(root) if path.is_relative_to(root) else path.name).encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def validate_paths(paths: list[Path]) -> tuple[list[Problem], list[Path], list[Path]]:
    """Every problem in the given files/folders; also the files read and the files skipped."""
    files, skipped = discover(paths)
    _, problems = read_tables(files)
    return problems, files, skipped
