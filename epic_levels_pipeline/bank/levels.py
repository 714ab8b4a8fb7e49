"""Levels are defined by evidence: :func:`derive_scope` reads a question's provenance (which rows, at which
instants) and the level follows from the scope (:data:`LEVEL_OF_SCOPE`), never typed in; the window rule
(:func:`outside_window`) says which rows are fair to ask about (docs/design/question-bank.md)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace

SCOPES = ("presence", "moment", "sequence", "beyond")
LEVEL_OF_SCOPE = {"presence": "L1", "moment": "L2", "sequence": "L3", "beyond": "L4"}
MOMENT_GAP_S = 1.0
STREAMS = ("sound", "narration", "activity", "object_track", "recipe_step")


@dataclass(frozen=True)
class Evidence:
    stream: str
    row_id: str
    start_s: float
    stop_s: float
    role: str  # answer | cue | occurrence | sequence | recipe | context
    at_s: float | None = None  # the instant the answer reads this row at; None = timing does not matter
    in_window: bool = True
    label: str = ""

    def read_inside(self) -> "Evidence":
        """The same row read at an instant inside it (``at_s`` moved to the nearest end of the row)."""
        if self.at_s is None or self.start_s <= self.at_s <= self.stop_s:
            return self
        return replace(self, at_s=min(max(float(self.at_s), self.start_s), self.stop_s))

    def to_dict(self) -> dict:
        return asdict(self)


def evidence_json(rows: list[Evidence]) -> str:
    """The provenance column's text: ``json.dumps`` of the rows' fields (:meth:`Evidence.to_dict`, read without
    the copy), by the standard encoder."""
    return json.dumps([vars(e) for e in rows])


MIN_INSIDE_S = 1.0
TASK_STREAMS = ("activity", "recipe_step")  # tasks span longer than any window: exempt from the rule below


def outside_window(evidence: list[Evidence], clip) -> str:
    """Why a draft's context or answer rows are not fair to ask about in this window ("" when they are).

    A row counts when ``inside >= min(MIN_INSIDE_S, length)`` and ``inside >= min(length, window) / 2``; only rows
    read at a moment are held to it (tasks, cues, occurrences and sequences are exempt). Why this reading of the
    rule: docs/design/question-bank.md."""
    for e in evidence:
        if e.role not in ("context", "answer") or e.stream in TASK_STREAMS or not e.in_window:
            continue
        length = max(e.stop_s - e.start_s, 0.0)
        inside = min(e.stop_s, clip.end_s) - max(e.start_s, clip.start_s)
        half = min(length, clip.end_s - clip.start_s) / 2
        if inside < min(MIN_INSIDE_S, length) - 1e-9 or inside < half - 1e-9:
            return f"the {e.role} row {e.stream}:{e.row_id} lies mostly outside the window ({max(inside, 0):.2f} of {length:.2f} s inside)"
    return ""


def level_of(scope: str) -> str:
    if scope not in LEVEL_OF_SCOPE:
        raise ValueError(f"unknown evidence scope {scope!r} (expected one of {SCOPES})")
    return LEVEL_OF_SCOPE[scope]


def moments(instants: list[float], gap: float = MOMENT_GAP_S) -> list[list[float]]:
    """Group instants into moments: sorted instants closer than ``gap`` seconds belong together."""
    groups: list[list[float]] = []
    for t in sorted(instants):
        if groups and t - groups[-1][-1] < gap:
            groups[-1].append(t)
        else:
            groups.append([t])
    return groups


def derive_scope(evidence: list[Evidence] | list[dict]) -> str:
    rows = [Evidence(**e) if isinstance(e, dict) else e for e in evidence]
    if any(r.stream == "recipe_step" and not r.in_window for r in rows):
        return "beyond"
    anchored = [r.at_s for r in rows if r.at_s is not None]
    if not anchored:
        return "presence"
    return "sequence" if len(moments(anchored)) >= 2 else "moment"
