"""What can be read off one clip's annotation rows: cues, moments, who handles what, and presence.

A :class:`ClipView` is built from the ``clip_annotations`` rows of a clip, optionally restricted to the
streams a perceiver has (the offline responders under ``silenced`` see every stream but ``sound``).
Generators, solvers and the presence oracle all read clips through it, so they agree on what a
"moment", a "cue" or "present" means:

- sound segments of one class that overlap or touch are one occurrence (merged);
- a cue is a sound class with exactly one occurrence in the window, lying fully inside the window;
- the narrations *at* a moment are the labelled narrations whose span overlaps it (overlap > 0);
- an entity is *present* when any row in the window shows it, regardless of time.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import pandas as pd

from ..annotations.catalogue import Catalogue
from ..annotations.clips import Clip
from . import kinds
from .levels import Evidence


def records(frame: pd.DataFrame):
    """Rows as namedtuples, built from column lists: much faster than ``DataFrame.itertuples`` on the
    Arrow-backed string columns of pandas 3."""
    if not len(frame):
        return []
    Row = _row_type(tuple(frame.columns))
    return [Row(*values) for values in zip(*(frame[c].tolist() for c in frame.columns))]


_ROW_TYPES: dict[tuple, type] = {}


def _row_type(columns: tuple):
    from collections import namedtuple

    if columns not in _ROW_TYPES:
        _ROW_TYPES[columns] = namedtuple("Row", columns, rename=True)
    return _ROW_TYPES[columns]


@dataclass(frozen=True)
class Occurrence:
    sound_class: str
    start_s: float
    stop_s: float
    row_ids: tuple[str, ...]

    @property
    def mid_s(self) -> float:
        return (self.start_s + self.stop_s) / 2


class ClipView:
    def __init__(self, clip: Clip, rows: pd.DataFrame, catalogue: Catalogue, streams: set[str] | None = None):
        self.clip = clip
        self.catalogue = catalogue
        if streams is not None:
            rows = rows[rows["stream"].isin(streams)]
        self.rows = rows
        self.streams = set(rows["stream"]) if streams is None else set(streams)

    # --- row groups --------------------------------------------------------------------------------
    _COLUMNS = {
        "sound": ["row_id", "start_s", "stop_s", "sound_class", "description", "categorised"],
        "narration": ["row_id", "start_s", "stop_s", "narration", "verb", "verb_class", "noun_class", "noun", "all_nouns",
                      "all_noun_classes", "labelled"],
        "object_track": ["row_id", "start_s", "stop_s", "object_name", "raw_name"],
        "activity": ["row_id", "start_s", "stop_s", "label"],
        "recipe_step": ["row_id", "start_s", "stop_s", "label", "step_id", "recipe_key", "in_window"],
    }

    def _stream(self, name: str, in_window: bool = True) -> pd.DataFrame:
        """One stream's rows, narrowed to the columns it uses, as plain numpy/object columns (small frames
        are filtered many times; Arrow-backed strings and wide frames make each filter slow)."""
        r = self.rows[self.rows["stream"] == name]
        if in_window:
            r = r[r["in_window"].astype(bool)]
        r = r[self._COLUMNS[name]].sort_values(["start_s", "row_id"], kind="stable").reset_index(drop=True)
        for column in r.columns:
            if column in ("start_s", "stop_s"):
                r[column] = r[column].astype(float)
            elif column in ("verb_class", "noun_class"):
                r[column] = r[column].astype("float").astype("Int64") if r[column].isna().any() else r[column].astype("int64")
            else:
                r[column] = r[column].astype(object)
        return r

    @cached_property
    def sounds(self) -> pd.DataFrame:
        return self._stream("sound")

    @cached_property
    def categorised(self) -> pd.DataFrame:
        s = self.sounds
        return s[s["categorised"].fillna(False).astype(bool)]

    @cached_property
    def uncategorised(self) -> pd.DataFrame:
        s = self.sounds
        return s[~s["categorised"].fillna(False).astype(bool)]

    @cached_property
    def narrations(self) -> pd.DataFrame:
        n = self._stream("narration")
        return n[n["labelled"].fillna(False).astype(bool)]

    @cached_property
    def unlabelled_narrations(self) -> pd.DataFrame:
        n = self._stream("narration")
        return n[~n["labelled"].fillna(False).astype(bool)]

    @cached_property
    def tracks(self) -> pd.DataFrame:
        return self._stream("object_track")

    @cached_property
    def activities(self) -> pd.DataFrame:
        return self._stream("activity")

    @cached_property
    def recipe_steps(self) -> pd.DataFrame:
        return self._stream("recipe_step", in_window=False)

    # --- sounds ------------------------------------------------------------------------------------
    @cached_property
    def occurrences(self) -> dict[str, list[Occurrence]]:
        out: dict[str, list[Occurrence]] = {}
        for sound_class, group in self.categorised.groupby("sound_class"):
            merged: list[list] = []
            for r in records(group.sort_values("start_s")):
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
        for description in set(self.uncategorised["description"].dropna()):
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
        rows = self.categorised[self.categorised["row_id"].isin(occ.row_ids)]
        return [Evidence("sound", r.row_id, float(r.start_s), float(r.stop_s), role, at_s=round(occ.mid_s, 3),
                         label=str(r.sound_class)) for r in records(rows)]

    # --- narrations --------------------------------------------------------------------------------
    def narrations_at(self, start: float, stop: float) -> pd.DataFrame:
        n = self.narrations
        return n[(n["start_s"] < stop) & (n["stop_s"] > start)]

    def unlabelled_at(self, start: float, stop: float) -> pd.DataFrame:
        n = self.unlabelled_narrations
        return n[(n["start_s"] < stop) & (n["stop_s"] > start)]

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
        later = self.narrations[self.narrations["start_s"] > anchor.start_s]
        objects = self.objects_of(anchor)
        keep = [self.pair(r) != self.pair(anchor) and (not shares_object or bool(self.objects_of(r) & objects))
                for r in records(later)]
        later = later[keep] if len(later) else later
        if not len(later):
            return None, ("no later action in the window involves an object of the cued action" if shares_object
                          else "no later action in the window")
        nxt = later.iloc[0]
        if len(later) > 1 and later.iloc[1]["start_s"] - nxt["start_s"] < 0.5:
            return None, "two actions start within 0.5 s: 'next' is ambiguous"
        gap = self.unlabelled_narrations
        if ((gap["start_s"] > anchor.start_s) & (gap["start_s"] < nxt["start_s"])).any():
            return None, "an unlabelled narration lies between: 'next' is unverifiable"
        return records(later.head(1))[0], ""

    # --- presence ----------------------------------------------------------------------------------
    @cached_property
    def present_sound_classes(self) -> set[str]:
        return set(self.categorised["sound_class"].dropna())

    @cached_property
    def present_noun_classes(self) -> set[int]:
        out: set[int] = set()
        for classes in self.narrations["all_noun_classes"]:
            out |= {int(c) for c in classes}
        out |= {int(c) for c in self.narrations["noun_class"].dropna()}
        return out

    @cached_property
    def narration_records(self) -> list:
        return records(self.narrations)

    @cached_property
    def first_narration_of(self) -> dict[tuple[int, int], object]:
        out: dict[tuple[int, int], object] = {}
        for r in self.narration_records:
            out.setdefault(self.pair(r), r)
        return out

    @cached_property
    def present_actions(self) -> set[tuple[int, int]]:
        return set(self.first_narration_of)

    @cached_property
    def present_objects(self) -> set[str]:
        return set(self.tracks["object_name"].dropna())

    def present(self, value: str) -> bool | None:
        """Does the entity occur anywhere in the window? None when presence cannot tell (numbers)."""
        return kinds.present(self, value)
