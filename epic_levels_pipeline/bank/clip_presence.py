"""What a clip holds, whenever it occurs: :class:`Presence`, the part of :class:`.clip_view.ClipView` that reads
which sound classes, nouns, actions and objects occur in the window, and where (read once per view)."""

from __future__ import annotations

from functools import cached_property

from ..records import is_null
from .rows import _ids_by


class Presence:
    """Presence and row lookups of a clip view (needs its ``*_records`` and ``pair``/``objects_of``)."""

    # --- presence ----------------------------------------------------------------------------------
    @cached_property
    def present_sound_classes(self) -> set[str]:
        return {r.sound_class for r in self.categorised_records if not is_null(r.sound_class)}

    @cached_property
    def present_noun_classes(self) -> set[int]:
        out: set[int] = set()
        for r in self.narration_records:
            out |= {int(c) for c in r.all_noun_classes}
        out |= {int(r.noun_class) for r in self.narration_records if not is_null(r.noun_class)}
        return out

    @cached_property
    def narration_pairs(self) -> list[tuple[int, int]]:
        """:meth:`pair` of each labelled narration, in record order (worked out once per view)."""
        return [self.pair(r) for r in self.narration_records]

    @cached_property
    def _narration_objects(self) -> list[set[int]]:
        """:meth:`objects_of` each labelled narration, in record order (do not modify the sets)."""
        return [self.objects_of(r) for r in self.narration_records]

    @cached_property
    def narrations_by_pair(self) -> dict[tuple[int, int], list]:
        """The labelled narrations of each (verb, noun) pair, in record order; the pairs in the order they
        first occur (do not modify)."""
        out: dict[tuple[int, int], list] = {}
        for pair, r in zip(self.narration_pairs, self.narration_records):
            out.setdefault(pair, []).append(r)
        return out

    @cached_property
    def first_narration_of(self) -> dict[tuple[int, int], object]:
        return {pair: rows[0] for pair, rows in self.narrations_by_pair.items()}

    # --- where each value occurs (rows in frame order), for option texts and pools ------------------
    @cached_property
    def sound_rows(self) -> dict[str, list[str]]:
        return _ids_by(self.categorised_records, lambda r: r.sound_class)

    @cached_property
    def noun_rows(self) -> dict[int, list[str]]:
        """Labelled narrations naming each noun class (as main noun or any other)."""
        out: dict[int, list[str]] = {}
        for r in self.narration_records:
            classes = {int(c) for c in r.all_noun_classes}
            if not is_null(r.noun_class):
                classes.add(int(r.noun_class))
            for c in classes:
                out.setdefault(c, []).append(r.row_id)
        return out

    @cached_property
    def first_noun_of(self) -> dict[int, str]:
        """The noun the first labelled narration with each main noun class wrote."""
        out: dict[int, str] = {}
        for r in self.narration_records:
            if not is_null(r.noun_class):
                out.setdefault(int(r.noun_class), r.noun)
        return out

    @cached_property
    def action_rows(self) -> dict[tuple[int, int], list[str]]:
        return _ids_by([r for r in self.narration_records if not is_null(r.verb_class) and not is_null(r.noun_class)],
                       self.pair)

    @cached_property
    def object_rows(self) -> dict[str, list[str]]:
        return _ids_by(self.track_records, lambda r: r.object_name)

    @cached_property
    def step_labels(self) -> dict[str, str]:
        """The label of each recipe step id's first span."""
        out: dict[str, str] = {}
        for r in self.step_records:
            out.setdefault(r.step_id, r.label)
        return out

    @cached_property
    def steps_in_window(self) -> set[str]:
        return {r.step_id for r in self.step_records if not is_null(r.in_window) and bool(r.in_window)}

    @cached_property
    def present_actions(self) -> set[tuple[int, int]]:
        return set(self.first_narration_of)

    @cached_property
    def present_objects(self) -> set[str]:
        return {r.object_name for r in self.track_records if not is_null(r.object_name)}
