"""What can be read off one clip's annotation rows: cues, moments, who handles what, and presence. Generators,
solvers and the presence oracle all read a clip through a :class:`ClipView`, so they agree on what a moment, a
cue or "present" means (docs/design/question-bank.md)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
import pyarrow as pa

from ..annotations.catalogue import Catalogue
from ..annotations.clips import Clip
from .clip_presence import Presence
from .levels import Evidence
from ..records import is_null, records_of
from .rows import _frame, _grouped


_SPAN_COLUMNS = ("start_s", "stop_s")  # read as floats (:meth:`ClipView._column`); every other column as objects


def _strings(values: pd.Series) -> np.ndarray:
    """``values.to_numpy(dtype=object)`` of an Arrow-backed string column, through Arrow's own conversion (one
    pass; pandas' filters the array twice when it has nulls): the strings, the dtype's null where missing.
    (The column's array goes to Arrow by its ``__arrow_array__``: no conversion of the Series as a whole.)"""
    arrow = pa.array(values.array)
    out = arrow.to_numpy(zero_copy_only=False)
    if arrow.null_count:
        out[np.equal(out, None)] = values.dtype.na_value
    return out


@dataclass(frozen=True)
class Occurrence:
    sound_class: str
    start_s: float
    stop_s: float
    row_ids: tuple[str, ...]

    @property
    def mid_s(self) -> float:
        return (self.start_s + self.stop_s) / 2


class ClipView(Presence):
    def __init__(self, clip: Clip, rows: pd.DataFrame, catalogue: Catalogue, streams: set[str] | None = None):
        self.clip = clip
        self.catalogue = catalogue
        if streams is not None:
            rows = rows[rows["stream"].isin(streams)]
        self.rows = rows
        self._arrays: dict[str, np.ndarray] = {}
        self.streams = set(self._column("stream")) if streams is None else set(streams)
        self.render_memo: dict[str, str] = {}  # option text by candidate value (:func:`.kinds.render`)
        self._memo: dict = {}

    def memo(self, name: str, build):
        """What ``build()`` gives, worked out once per view (structures its users derive from the clip)."""
        try:
            return self._memo[name]
        except KeyError:
            value = self._memo[name] = build()
            return value

    # --- row groups --------------------------------------------------------------------------------
    _COLUMNS = {
        "sound": ["row_id", "start_s", "stop_s", "sound_class", "description", "categorised"],
        "narration": ["row_id", "start_s", "stop_s", "narration", "verb", "verb_class", "noun_class", "noun", "all_nouns",
                      "all_noun_classes", "labelled"],
        "object_track": ["row_id", "start_s", "stop_s", "object_name", "raw_name"],
        "activity": ["row_id", "start_s", "stop_s", "label"],
        "recipe_step": ["row_id", "start_s", "stop_s", "label", "step_id", "recipe_key", "in_window"],
    }

    _INT_COLUMNS = ("verb_class", "noun_class")

    def _column(self, column: str) -> np.ndarray:
        """One column of the clip's rows as a numpy array (floats for spans, NaN where missing; else Python
        objects, the column's own null where missing), read once."""
        got = self._arrays.get(column)
        if got is None:
            values = self.rows[column]
            if column in _SPAN_COLUMNS:
                got = values.to_numpy(dtype=float, na_value=np.nan)
            elif isinstance(values.dtype, pd.StringDtype) and values.dtype.storage == "pyarrow":
                got = _strings(values)
            else:
                got = values.to_numpy(dtype=object)
            self._arrays[column] = got
        return got

    @cached_property
    def _stream_positions(self) -> dict[str, list[int]]:
        """The row positions of each stream, in row order: one pass over the stream column, not one
        comparison of the whole column per stream."""
        out: dict[str, list[int]] = {}
        for i, stream in enumerate(self._column("stream").tolist()):
            out.setdefault(stream, []).append(i)
        return out

    def _stream_data(self, name: str, in_window: bool) -> dict[str, np.ndarray]:
        """One stream's rows as column arrays, sorted by (start, row id): read from the clip's columns
        once, not by filtering the wide frame (Arrow-backed strings make each filter slow). A stream the
        clip has no rows of reads no column at all (its arrays are empty, of the dtypes :meth:`_column`
        gives: a clip of one dataset never has the other's streams)."""
        where = self._stream_positions.get(name, [])
        if where and in_window:
            flags = self._column("in_window").astype(bool).tolist()
            where = [i for i in where if flags[i]]
        if not where:
            return {column: np.empty(0, dtype=float if column in _SPAN_COLUMNS else object)
                    for column in self._COLUMNS[name]}
        starts, ids = self._column("start_s").tolist(), self._column("row_id").tolist()
        order = np.array(sorted(where, key=lambda i: (starts[i], ids[i])), dtype=np.intp)
        # (the class columns stay objects, Python ints and ``pd.NA``: what the records read; the frames type
        # them, :func:`_typed`)
        return {column: self._column(column)[order] for column in self._COLUMNS[name]}

    @staticmethod
    def _flag(values: np.ndarray) -> np.ndarray:
        """A nullable flag column as booleans (null counts as False: ``fillna(False).astype(bool)``)."""
        return np.array([False if is_null(v) else bool(v) for v in values.tolist()], dtype=bool)

    @classmethod
    def _typed(cls, data: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """A stream's arrays as its frames hold them: the class columns (:data:`_INT_COLUMNS`) as ``Int64``
        when any of the stream's rows lacks one, else ``int64`` (the records read the object arrays: the
        same Python ints and ``pd.NA``)."""
        out = dict(data)
        for column in cls._INT_COLUMNS:
            values = data.get(column)
            if values is None:
                continue
            missing = pd.isna(values)
            if missing.any():
                out[column] = pd.array(np.where(missing, np.nan, values).astype(float), dtype="Int64")
            else:
                out[column] = values.astype(np.int64)
        return out

    @classmethod
    def _part(cls, data: dict[str, np.ndarray], keep: np.ndarray) -> pd.DataFrame:
        """The rows where ``keep``, keeping their index in the stream's frame (as a boolean filter would)."""
        return _frame({c: v[keep] for c, v in cls._typed(data).items()}, pd.RangeIndex(len(keep))[keep])

    def _split(self, name: str, flag: str) -> tuple[dict[str, np.ndarray], np.ndarray, dict, dict]:
        """A flagged stream's column arrays, its flag as booleans, and the arrays of the rows flagged and not."""
        data = self._stream_data(name, True)
        keep = self._flag(data[flag])
        return data, keep, {c: v[keep] for c, v in data.items()}, {c: v[~keep] for c, v in data.items()}

    # The row groups as column arrays: what the records, spans and frames below are read from. Generators
    # and solvers read the records and spans; the frames are built only when a caller asks for them.
    @cached_property
    def _sound_data(self) -> tuple[dict[str, np.ndarray], np.ndarray, dict, dict]:
        return self._split("sound", "categorised")

    @cached_property
    def _narration_data(self) -> tuple[dict[str, np.ndarray], np.ndarray, dict, dict]:
        return self._split("narration", "labelled")

    @cached_property
    def _track_data(self) -> dict[str, np.ndarray]:
        return self._stream_data("object_track", True)

    @cached_property
    def _activity_data(self) -> dict[str, np.ndarray]:
        return self._stream_data("activity", True)

    @cached_property
    def _step_data(self) -> dict[str, np.ndarray]:
        return self._stream_data("recipe_step", False)

    # --- the row groups as frames (for callers that want pandas; do not modify them) ----------------
    @cached_property
    def sounds(self) -> pd.DataFrame:
        return _frame(self._typed(self._sound_data[0]))

    @cached_property
    def categorised(self) -> pd.DataFrame:
        data, keep, _, _ = self._sound_data
        return self._part(data, keep)

    @cached_property
    def uncategorised(self) -> pd.DataFrame:
        data, keep, _, _ = self._sound_data
        return self._part(data, ~keep)

    @cached_property
    def narrations(self) -> pd.DataFrame:
        data, keep, _, _ = self._narration_data
        return self._part(data, keep)

    @cached_property
    def unlabelled_narrations(self) -> pd.DataFrame:
        data, keep, _, _ = self._narration_data
        return self._part(data, ~keep)

    @cached_property
    def tracks(self) -> pd.DataFrame:
        return _frame(self._typed(self._track_data))

    @cached_property
    def activities(self) -> pd.DataFrame:
        return _frame(self._typed(self._activity_data))

    @cached_property
    def recipe_steps(self) -> pd.DataFrame:
        return _frame(self._typed(self._step_data))

    # --- the rows as plain tuples and arrays (read once per view) -----------------------------------
    @cached_property
    def categorised_records(self) -> list:
        return records_of(self._sound_data[2])

    @cached_property
    def track_records(self) -> list:
        return records_of(self._track_data)

    @cached_property
    def narration_records(self) -> list:
        return records_of(self._narration_data[2])

    @cached_property
    def uncategorised_records(self) -> list:
        return records_of(self._sound_data[3])

    @cached_property
    def unlabelled_records(self) -> list:
        return records_of(self._narration_data[3])

    @cached_property
    def activity_records(self) -> list:
        return records_of(self._activity_data)

    @cached_property
    def step_records(self) -> list:
        return records_of(self._step_data)

    @cached_property
    def track_spans(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(starts, stops, object names) of the tracks, as arrays in frame order."""
        t = self._track_data
        return t["start_s"], t["stop_s"], t["object_name"]

    @cached_property
    def activity_spans(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(starts, stops, labels) of the activities, as arrays in frame order."""
        a = self._activity_data
        return a["start_s"], a["stop_s"], a["label"]

    @cached_property
    def _narration_spans(self) -> tuple[np.ndarray, np.ndarray]:
        n = self._narration_data[2]
        return n["start_s"], n["stop_s"]

    @cached_property
    def _unlabelled_spans(self) -> tuple[np.ndarray, np.ndarray]:
        n = self._narration_data[3]
        return n["start_s"], n["stop_s"]

    def rows_by(self, records: str, column: str) -> dict:
        """The records named ``records`` (e.g. ``"narration_records"``) grouped by ``column`` (nulls left
        out, each group in record order): :func:`.rows.rows_with` of every value at once, read once per view
        (do not modify)."""
        return self.memo(("rows_by", records, column), lambda: _grouped(getattr(self, records), column))

    # --- sounds ------------------------------------------------------------------------------------
    @cached_property
    def occurrences(self) -> dict[str, list[Occurrence]]:
        groups: dict[str, list] = {}
        for r in self.categorised_records:
            if not is_null(r.sound_class):
                groups.setdefault(r.sound_class, []).append(r)
        out: dict[str, list[Occurrence]] = {}
        for sound_class in sorted(groups):
            group = groups[sound_class]
            # the order of ``sort_values("start_s")`` (its default sort, ties included)
            order = np.argsort(np.array([r.start_s for r in group], dtype=float), kind="quicksort")
            merged: list[list] = []
            for r in (group[i] for i in order):
                if merged and r.start_s <= merged[-1][1]:
                    merged[-1][1] = max(merged[-1][1], r.stop_s)
                    merged[-1][2].append(r.row_id)
                else:
                    merged.append([r.start_s, r.stop_s, [r.row_id]])
            out[sound_class] = [Occurrence(sound_class, a, b, tuple(ids)) for a, b, ids in merged]
        return out

    @cached_property
    def possibly_heard(self) -> set[str]:
        """Classes that a not-categorised row in the window might be (by its description)."""
        classes: set[str] = set()
        for description in {r.description for r in self.uncategorised_records if not is_null(r.description)}:
            classes |= self.catalogue.description_classes.get(description, set())
        return classes

    def cue(self, sound_class: str) -> Occurrence | None:
        occ = self.occurrences.get(sound_class, [])
        if len(occ) != 1:
            return None
        o = occ[0]
        if o.start_s < self.clip.start_s or o.stop_s > self.clip.end_s:
            return None
        return o

    def sound_evidence(self, occ: Occurrence, role: str) -> list[Evidence]:
        ids = set(occ.row_ids)
        return [Evidence("sound", r.row_id, float(r.start_s), float(r.stop_s), role, at_s=round(occ.mid_s, 3),
                         label=str(r.sound_class)) for r in self.categorised_records if r.row_id in ids]

    # --- narrations --------------------------------------------------------------------------------
    def narrations_at(self, start: float, stop: float) -> pd.DataFrame:
        """Labelled narrations overlapping (start, stop) (the same frame for the same span: do not modify it)."""
        key = ("narrations_at", start, stop)
        if key not in self._memo:
            starts, stops = self._narration_spans
            self._memo[key] = self.narrations[(starts < stop) & (stops > start)]
        return self._memo[key]

    def records_at(self, start: float, stop: float) -> list:
        """:meth:`narrations_at` as plain tuples (read once per span)."""
        key = ("records_at", start, stop)
        if key not in self._memo:
            starts, stops = self._narration_spans
            self._memo[key] = [self.narration_records[i] for i in np.flatnonzero((starts < stop) & (stops > start))]
        return self._memo[key]

    def unlabelled_overlaps(self, start: float, stop: float) -> bool:
        """Does an unlabelled narration overlap (start, stop)? (:meth:`unlabelled_at` is not empty.)"""
        starts, stops = self._unlabelled_spans
        return bool(((starts < stop) & (stops > start)).any())

    def unlabelled_at(self, start: float, stop: float) -> pd.DataFrame:
        """Unlabelled narrations overlapping (start, stop) (the same frame for the same span: do not modify it)."""
        key = ("unlabelled_at", start, stop)
        if key not in self._memo:
            starts, stops = self._unlabelled_spans
            self._memo[key] = self.unlabelled_narrations[(starts < stop) & (stops > start)]
        return self._memo[key]

    @staticmethod
    def pair(row) -> tuple[int, int]:
        return (int(row.verb_class), int(row.noun_class))

    def narration_evidence(self, row, role: str, at_s: float | None) -> Evidence:
        return Evidence("narration", row.row_id, float(row.start_s), float(row.stop_s), role,
                        at_s=None if at_s is None else round(float(at_s), 3), label=str(row.narration))

    @staticmethod
    def objects_of(row) -> set[int]:
        """The noun classes a narration involves (its main noun and every other one)."""
        return {int(c) for c in row.all_noun_classes} | {int(row.noun_class)}

    def next_narration(self, anchor, shares_object: bool = False) -> tuple[object | None, str]:
        """The first labelled narration starting after ``anchor`` starts with a different (verb, noun) —
        with ``shares_object``, the first that also involves an object of the anchor's.

        Returns (row, "") or (None, reason). Unverifiable when an unlabelled narration starts in between.
        """
        objects = self.objects_of(anchor)
        own = self.pair(anchor)
        after = anchor.start_s
        pairs, involved = self.narration_pairs, self._narration_objects if shares_object else None
        later = []  # the first two that qualify, in record order (only they decide)
        for i, r in enumerate(self.narration_records):
            if r.start_s > after and pairs[i] != own and (not shares_object or bool(involved[i] & objects)):
                later.append(r)
                if len(later) == 2:
                    break
        if not later:
            return None, ("no later action in the window involves an object of the cued action" if shares_object
                          else "no later action in the window")
        nxt = later[0]
        if len(later) > 1 and later[1].start_s - nxt.start_s < 0.5:
            return None, "two actions start within 0.5 s: 'next' is ambiguous"
        gap = self._unlabelled_spans[0]
        if ((gap > anchor.start_s) & (gap < nxt.start_s)).any():
            return None, "an unlabelled narration lies between: 'next' is unverifiable"
        return nxt, ""
