"""The in-memory form of a caption, shared by the reference and by parsed replies: a :class:`Structure` of
references (no time), events and actions (seconds from the clip start) and the event → action and action →
reference links between them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

KINDS = ("event", "action", "reference")
LINK_KINDS = {("event", "action"), ("action", "reference")}


@dataclass(frozen=True)
class Unit:
    """One unit. ``label`` is its text as shown (sound, action description, entity name); the other label
    fields are what the rules compare (reference units carry classes and synonyms, replies only text)."""

    kind: str
    id: str
    start_s: float | None = None
    stop_s: float | None = None
    label: str = ""
    sound_class: str | None = None   # event: EPIC-SOUNDS class (None: not categorised)
    description: str | None = None   # event: free-text description; action: narration
    verb: str | None = None
    verb_class: int | None = None
    noun: str | None = None
    noun_class: int | None = None
    object_name: str | None = None   # hd_epic reference / action: the normalised object name
    synonyms: tuple[str, ...] = ()
    source_stream: str | None = None
    source_id: str | None = None

    @property
    def length_s(self) -> float:
        return float(self.stop_s - self.start_s) if self.start_s is not None and self.stop_s is not None else 0.0


@dataclass
class Structure:
    dataset: str
    duration_s: float
    events: list[Unit] = field(default_factory=list)
    actions: list[Unit] = field(default_factory=list)
    references: list[Unit] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def units(self, kind: str) -> list[Unit]:
        return {"event": self.events, "action": self.actions, "reference": self.references}[kind]

    def by_id(self) -> dict[str, Unit]:
        return {u.id: u for kind in KINDS for u in self.units(kind)}

    def links_of(self, kinds: tuple[str, str]) -> list[tuple[str, str]]:
        index = self.by_id()
        return [(a, b) for a, b in self.links
                if a in index and b in index and (index[a].kind, index[b].kind) == kinds]


_NUMBER = re.compile(r"(\d+)")


def id_order(unit_id: str) -> tuple:
    """Natural order of ids (``E2`` before ``E10``): the "smaller id" of the tie rules."""
    return tuple(int(p) if p.isdigit() else p for p in _NUMBER.split(str(unit_id)))


def overlap_s(a: Unit, b: Unit) -> float:
    return max(0.0, min(a.stop_s, b.stop_s) - max(a.start_s, b.start_s))
