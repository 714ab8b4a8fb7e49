"""HD-EPIC's own sound annotations and narrations, read into the ``sounds`` and ``narrations`` tables beside
EPIC-SOUNDS' and EPIC-KITCHENS-100's, so an HD-EPIC clip has the same streams. The CSV is read before its pickle
twin; each main action of a narration is one row; class ids are shared with EPIC-KITCHENS-100. The column
mapping and its reasons: docs/design/annotations.md."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import Problem
from .canonical import Loaded, empty_table
from .language import SOUND_CUES
from .validation import (_check_nonempty, _check_span, _check_unique, _display, _flag, _numbered, _times,
                         parse_timestamps, read_csv_strings)

SOUNDS_KIND = "hd_epic_sounds"
NARRATIONS_KIND = "hd_epic_narrations"
SOUND_REQUIRED = ["participant_id", "video_id", "start_timestamp", "stop_timestamp", "class", "class_id"]
NARRATION_REQUIRED = ["unique_narration_id", "participant_id", "video_id", "narration", "start_timestamp",
                      "end_timestamp", "nouns", "noun_classes", "main_actions", "main_action_classes"]


def is_hd_epic_row(source_file: pd.Series) -> pd.Series:
    """Which rows of the sounds or narrations table come from HD-EPIC's files (by ``source_file``)."""
    return source_file.astype(str).str.startswith("HD_EPIC_")


# ----------------------------------------------------------------------------------------------------
# Pickled tables
# ----------------------------------------------------------------------------------------------------


def read_pickled_table(path: Path, required: list[str], problems: list[Problem]) -> pd.DataFrame | None:
    """A pickled DataFrame with ``_row`` = each row's position; None (with the problem noted) if unusable.
    An id kept as the index (``unique_narration_id`` as the index's name) is made a column."""
    name = _display(path)
    try:
        frame = pd.read_pickle(path)
    except Exception as exc:  # a truncated or foreign pickle raises whatever its bytes lead to
        problems.append(Problem(name, 0, "-", f"cannot read pickle: {type(exc).__name__}: {exc}"))
        return None
    if not isinstance(frame, pd.DataFrame):
        problems.append(Problem(name, 0, "-", f"the pickle holds a {type(frame).__name__}, not a table (DataFrame)"))
        return None
    if frame.index.name in required and frame.index.name not in frame.columns:
        frame = frame.reset_index()
    frame = frame.reset_index(drop=True)
    frame.columns = [str(c).strip() for c in frame.columns]
    missing = [c for c in required if c not in frame.columns]
    for column in missing:
        problems.append(Problem(name, 0, column, f"missing column '{column}' (table has: {', '.join(frame.columns)})"))
    if missing:
        return None
    if not len(frame):
        problems.append(Problem(name, 0, "-", "the table is empty"))
        return None
    frame["_row"] = np.arange(len(frame))
    return frame


def _text(values: pd.Series) -> pd.Series:
    """Cells as stripped text, nulls as ""."""
    return pd.Series(["" if _null(v) else str(v).strip() for v in values.tolist()], index=values.index, dtype=object)


def _null(value) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


# ----------------------------------------------------------------------------------------------------
# Sounds
# ----------------------------------------------------------------------------------------------------


def read_sounds(path: Path) -> Loaded:
    """``HD_EPIC_Sounds.csv`` or ``HD_EPIC_Sounds.pkl`` into the ``sounds`` table."""

    problems: list[Problem] = []
    name = _display(path)
    if path.suffix == ".pkl":
        twin = path.with_suffix(".csv")
        if twin.exists():
            problems.append(Problem(name, 0, "-", f"the same sounds as {twin.name} beside it; file left out "
                                                  f"(the CSV is read)", "dropped"))
            return Loaded(SOUNDS_KIND, "sounds", empty_table("sounds"), problems)
        raw = read_pickled_table(path, SOUND_REQUIRED, problems)
        frame = None if raw is None else raw.drop(columns="_row").apply(_text).assign(_row=raw["_row"])
    else:
        frame = read_csv_strings(path, SOUND_REQUIRED, problems)
    if frame is None:
        return Loaded(SOUNDS_KIND, "sounds", empty_table("sounds"), problems)
    ok = _check_nonempty(problems, name, frame, ["video_id"])
    start = _times(problems, name, frame, "start_timestamp", parse_timestamps)
    stop = _times(problems, name, frame, "stop_timestamp", parse_timestamps)
    ok &= start.notna() & stop.notna()
    ok &= _check_span(problems, name, frame, "start_timestamp", "stop_timestamp", start, stop)
    sound_class = frame["class"].str.strip()
    known = sound_class.isin(list(SOUND_CUES)) | (sound_class == "")
    _flag(problems, name, frame, ~known, "class",
          lambda r: f"unknown sound class {r['class']!r} (HD-EPIC sounds use the {len(SOUND_CUES)} EPIC-SOUNDS "
                    "classes: 'rustle', 'water', 'open / close', … as listed in annotations/language.py SOUND_CUES)")
    ok &= known
    class_id = pd.to_numeric(frame["class_id"].str.strip(), errors="coerce")
    bad_id = (sound_class != "") & (class_id.isna() | (class_id != class_id.round()))
    _flag(problems, name, frame, bad_id, "class_id", lambda r: f"class_id {r['class_id']!r} is not a whole number")
    ok &= ~bad_id
    video = frame["video_id"].str.strip()
    if "annotation_id" in frame.columns:
        ids = frame["annotation_id"].str.strip()
        ok &= _check_nonempty(problems, name, frame, ["annotation_id"])
        ok &= _check_unique(problems, name, frame, "annotation_id")
    else:
        ids = _numbered(pd.Series([f"{v}@{a:.3f}-{b:.3f}/{c}" for v, a, b, c in zip(
            video, start.fillna(-1), stop.fillna(-1), frame["class_id"].str.strip())], index=frame.index, dtype=object))
    out = pd.DataFrame({
        "annotation_id": ids,
        "participant_id": frame["participant_id"].str.strip(),
        "video_id": video,
        "start_s": start, "stop_s": stop,
        "description": pd.Series(None, index=frame.index, dtype="object"),
        "sound_class": sound_class.replace("", None),
        "class_id": class_id.where(sound_class != "").astype("Int64"),
        "categorised": sound_class != "",
        "source_file": path.name,
        "source_row": frame["_row"],
    })
    return Loaded(SOUNDS_KIND, "sounds", out.loc[ok].reset_index(drop=True), problems)


# ----------------------------------------------------------------------------------------------------
# Narrations
# ----------------------------------------------------------------------------------------------------


def _sequence(value) -> list | None:
    """A list cell as a list (lists, tuples and arrays); anything else None."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return list(value)
    return None


def _whole(value) -> int | None:
    """A class id: a whole, non-negative number (numpy ints and integral floats included), else None."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value) if value >= 0 else None
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer() and value >= 0:
        return int(value)
    return None


def _pairs(value, kind) -> list[tuple] | None:
    """A list of (verb, noun) pairs, each element converted by ``kind`` (None when one is not)."""
    items = _sequence(value)
    if items is None:
        return None
    out = []
    for item in items:
        pair = _sequence(item)
        if pair is None or len(pair) != 2:
            return None
        converted = tuple(kind(x) for x in pair)
        if any(x is None for x in converted):
            return None
        out.append(converted)
    return out


def _word(value) -> str | None:
    return str(value).strip() if isinstance(value, str) and str(value).strip() else None


def action_words(verb: str, noun: str) -> str:
    """A main action as the narration phrase the questions word: ``("pick-up", "plate")`` → ``pick up plate``."""
    return " ".join(f"{verb.replace('-', ' ')} {noun}".split())


def read_narrations(path: Path) -> Loaded:
    """``HD_EPIC_Narrations.pkl`` into the ``narrations`` table (one row per main action)."""

    problems: list[Problem] = []
    name = _display(path)
    frame = read_pickled_table(path, NARRATION_REQUIRED, problems)
    if frame is None:
        return Loaded(NARRATIONS_KIND, "narrations", empty_table("narrations"), problems)
    for column in ("unique_narration_id", "participant_id", "video_id"):
        frame[column] = _text(frame[column])
    ok = _check_nonempty(problems, name, frame, ["unique_narration_id", "video_id"])
    ok &= _check_unique(problems, name, frame, "unique_narration_id")
    times = {}
    for column in ("start_timestamp", "end_timestamp"):
        raw = frame[column]
        seconds = pd.Series([float(v) if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
                             else math.nan for v in raw.tolist()], index=frame.index, dtype=float)
        bad = ~np.isfinite(seconds)
        _flag(problems, name, frame, bad, column, lambda r, c=column: f"{c} {r[c]!r} is not a number of seconds")
        times[column] = seconds.where(~bad)
        ok &= ~bad
    start, stop = times["start_timestamp"], times["end_timestamp"]
    ok &= _check_span(problems, name, frame, "start_timestamp", "end_timestamp", start, stop)
    nouns = frame["nouns"].map(lambda v: None if (s := _sequence(v)) is None or any(_word(x) is None for x in s)
                               else [_word(x) for x in s])
    noun_classes = frame["noun_classes"].map(lambda v: None if (s := _sequence(v)) is None or any(_whole(x) is None for x in s)
                                             else [_whole(x) for x in s])
    mains = frame["main_actions"].map(lambda v: _pairs(v, _word))
    main_classes = frame["main_action_classes"].map(lambda v: _pairs(v, _whole))
    for column, parsed, what in (("nouns", nouns, "a list of noun words"),
                                 ("noun_classes", noun_classes, "a list of class ids (whole numbers ≥ 0)"),
                                 ("main_actions", mains, "a list of (verb, noun) word pairs"),
                                 ("main_action_classes", main_classes, "a list of (verb class, noun class) id pairs")):
        bad = parsed.isna()
        _flag(problems, name, frame, bad, column, lambda r, c=column, w=what: f"{c} {r[c]!r} is not {w}")
        ok &= ~bad
    both = nouns.notna() & noun_classes.notna()
    uneven = both & (nouns.map(lambda v: len(v) if v is not None else 0) != noun_classes.map(lambda v: len(v) if v is not None else 0))
    _flag(problems, name, frame, uneven, "noun_classes",
          lambda r: f"{len(_sequence(r['noun_classes']))} noun classes for {len(_sequence(r['nouns']))} nouns")
    ok &= ~uneven
    both = mains.notna() & main_classes.notna()
    uneven = both & (mains.map(lambda v: len(v) if v is not None else 0) != main_classes.map(lambda v: len(v) if v is not None else 0))
    _flag(problems, name, frame, uneven, "main_action_classes",
          lambda r: f"{len(_sequence(r['main_action_classes']))} main action classes for "
                    f"{len(_sequence(r['main_actions']))} main actions")
    ok &= ~uneven
    rows = []
    label_source = f"{path.name} (official)"
    for i in np.flatnonzero(ok.to_numpy()):
        narration_id, participant, video = (frame.at[i, c] for c in ("unique_narration_id", "participant_id", "video_id"))
        all_nouns, all_classes = nouns.iat[i], noun_classes.iat[i]
        base = (participant, video, float(start.iat[i]), float(stop.iat[i]))
        row = int(frame.at[i, "_row"])
        actions = list(zip(mains.iat[i], main_classes.iat[i]))
        if not actions:  # what it does has no class: a moment of unknown content
            rows.append((narration_id, *base, None, None, pd.NA, None, pd.NA, list(all_nouns), list(all_classes),
                         False, label_source, path.name, row))
        for k, ((verb, noun), (verb_class, noun_class)) in enumerate(actions):
            rows.append((narration_id if k == 0 else f"{narration_id}#{k + 1}", *base, action_words(verb, noun), verb,
                         verb_class, noun, noun_class, list(all_nouns), list(all_classes), True, label_source,
                         path.name, row))
    if not rows:
        return Loaded(NARRATIONS_KIND, "narrations", empty_table("narrations"), problems)
    out = pd.DataFrame(rows, columns=["narration_id", "participant_id", "video_id", "start_s", "stop_s", "narration",
                                      "verb", "verb_class", "noun", "noun_class", "all_nouns", "all_noun_classes",
                                      "labelled", "label_source", "source_file", "source_row"])
    out["verb_class"] = pd.array(out["verb_class"].tolist(), dtype="Int64")
    out["noun_class"] = pd.array(out["noun_class"].tolist(), dtype="Int64")
    return Loaded(NARRATIONS_KIND, "narrations", out, problems)


# The file kinds :data:`.file_kinds.FILE_KINDS` registers: (name, table, file-name pattern, reader, dataset).
KINDS = [
    (SOUNDS_KIND, "sounds", r"^HD_EPIC_Sounds\.(csv|pkl)$", read_sounds, "hd_epic"),
    (NARRATIONS_KIND, "narrations", r"^HD_EPIC_Narrations\.pkl$", read_narrations, "hd_epic"),
]
