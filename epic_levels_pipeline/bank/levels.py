"""Levels are defined by evidence: the scope a question's answer needs, and the level that follows from it.

A question's provenance is a list of :class:`Evidence` rows. Each names the annotation row (stream and id,
because EPIC-SOUNDS and EPIC-KITCHENS-100 ids share one format), its span, and — when the answer relies on
*when* the row happens — the instant it is read at (``at_s``). :func:`derive_scope` reads only that:

- ``beyond``   if any evidence row is a recipe step outside the clip's window (task knowledge);
- ``sequence`` if the time-anchored rows fall on two or more moments (instants more than
               :data:`MOMENT_GAP_S` apart);
- ``moment``   if they fall on exactly one moment;
- ``presence`` if no row is time-anchored (only *that* something occurs matters, not when).

The level of a subtype is derived from its declared scope by :data:`LEVEL_OF_SCOPE`, never typed in;
the ``level matches provenance`` check compares the two for every generated question.
"""

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

    The rule: context and answer rows lie inside the window for at least :data:`MIN_INSIDE_S` and at
    least half their length. Read literally it cannot be met by two kinds of row, so it is read as:

    - a row shorter than :data:`MIN_INSIDE_S` (a 0.3 s object movement) must lie wholly inside;
    - a row longer than the window (an object carried for a minute) must cover at least half the window.
      "Half its length" would ask more of it than the window holds once it is twice the window's length,
      and at exactly the window's length both readings ask for half of it, so the bound is continuous.

    So a row counts when ``inside >= min(MIN_INSIDE_S, length)`` and ``inside >= min(length, window) / 2``.
    Only rows read at a moment (sounds, narrations, object tracks) are held to it; activities and recipe
    steps describe tasks that outlast any window and are exempt, and so are cue, occurrence and sequence
    rows (a cue is already required to lie wholly inside the window; presence and goal questions do not
    hinge on one row). It applies to both datasets: on EPIC-SOUNDS it drops contexts such as a narration
    of 44.37–45.22 s in a window from 45 s."""
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
