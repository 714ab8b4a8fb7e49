"""Answer-key solvers, one per subtype, registered by name. A solver reads only the clip's annotations (through a
:class:`ClipView`), the question's parameters and a candidate set, never the intended answer, and says which
candidates are true; the same solvers decide format 3's statements and drive the ``oracle`` responder."""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..annotations.values import CandidateValue
from ..records import is_null
from .clip_view import ClipView
from .cues import CUE_COVER_S, covers

SOLVERS: dict[str, Callable[[ClipView, dict, list[str]], list[bool]]] = {}
MAIN_ACTIVITY_SHARE = 0.5
OBJECT_MOMENT_HALF_WIDTH_S = 1.0


def solver(name: str):
    def register(fn):
        SOLVERS[name] = fn
        return fn
    return register


def solve(subtype: str, view: ClipView, params: dict, candidates: list[str]) -> list[bool]:
    """The truth of each candidate for a question of ``subtype``, from the annotations alone."""
    try:
        fn = SOLVERS[subtype]
    except KeyError:
        raise LookupError(f"subtype {subtype!r} has no solver: add one with @solver({subtype!r}) in "
                          "epic_levels_pipeline/bank/solvers.py") from None
    return fn(view, params, candidates)


def _payloads(candidates: list[str], kind: str) -> list[str | None]:
    """Each candidate's payload where it is a value of ``kind``, else None (each value parsed once)."""
    out: list[str | None] = []
    for c in candidates:
        v = CandidateValue.parse(c)
        out.append(v.payload if v.kind == kind else None)
    return out


def _pair(rest: str) -> tuple[int, int]:
    v, n = rest.split(":")
    return int(v), int(n)


# --- epic_sounds ---------------------------------------------------------------------------------------


@solver("easy_sound_presence")
def _sound_presence(view: ClipView, params: dict, candidates: list[str]) -> list[bool]:
    return [p is not None and p in view.present_sound_classes for p in _payloads(candidates, "sound")]


@solver("easy_sound_object")
def _sound_object_presence(view: ClipView, params: dict, candidates: list[str]) -> list[bool]:
    return [p is not None and int(p) in view.present_noun_classes for p in _payloads(candidates, "noun")]


@solver("easy_sound_action")
def _action_presence(view: ClipView, params: dict, candidates: list[str]) -> list[bool]:
    return [p is not None and _pair(p) in view.present_actions for p in _payloads(candidates, "action")]


def _at_cue(view: ClipView, params: dict) -> list | None:
    """The labelled narrations at the cue (:meth:`ClipView.records_at`), or None without a cue."""
    occ = view.cue(params["cue_class"])
    if occ is None:
        return None
    return view.records_at(occ.start_s, occ.stop_s)


@solver("low_sound_object")
def _sound_object_at_cue(view: ClipView, params: dict, candidates: list[str]) -> list[bool]:
    at = _at_cue(view, params)
    if at is None:
        return [False] * len(candidates)
    nouns = {int(r.noun_class) for r in at if not is_null(r.noun_class)}
    return [p is not None and int(p) in nouns for p in _payloads(candidates, "noun")]


@solver("low_sound_movement")
def _movement_at_cue(view: ClipView, params: dict, candidates: list[str]) -> list[bool]:
    at = _at_cue(view, params)
    if at is None:
        return [False] * len(candidates)
    pairs = {view.pair(r) for r in at}
    return [p is not None and _pair(p) in pairs for p in _payloads(candidates, "action")]


def next_after_cue(view: ClipView, params: dict):
    """(the cued action, what it leads to): the next different action that involves an object of the
    cued action ("take glass" → "pour water into glass"); None for the second when there is none."""
    at = _at_cue(view, params)
    if at is None or not len(at):
        return None
    anchor = at[0]
    nxt, _ = view.next_narration(anchor, shares_object=True)
    return anchor, nxt


@solver("medium_sound_purpose")
def _purpose(view: ClipView, params: dict, candidates: list[str]) -> list[bool]:
    found = next_after_cue(view, params)
    if not found or found[1] is None:
        return [False] * len(candidates)
    target = view.pair(found[1])
    return [p is not None and _pair(p) == target for p in _payloads(candidates, "purpose")]


def countable(view: ClipView, sound_class: str) -> int | None:
    """How many times a class is heard in the window; None when the count cannot be trusted."""
    if sound_class in view.possibly_heard:
        return None
    occ = view.occurrences.get(sound_class, [])
    if any(o.start_s < view.clip.start_s or o.stop_s > view.clip.end_s for o in occ):
        return None
    return len(occ)


@solver("medium_sound_count")
def _count(view: ClipView, params: dict, candidates: list[str]) -> list[bool]:
    n = countable(view, params["cue_class"])
    return [n is not None and p is not None and int(p) == n for p in _payloads(candidates, "count")]


def sounds_near(view: ClipView, instant: float, width: float = CUE_COVER_S) -> set[str]:
    """Classes of the categorised sounds heard within ``width`` seconds of ``instant`` (ends included)."""
    return view.memo(("sounds_near", instant, width), lambda: {
        r.sound_class for r in view.categorised_records if covers(r.start_s, r.stop_s, instant, width)})


@solver("low_sound_moment")
def _sound_moment(view: ClipView, params: dict, candidates: list[str]) -> list[bool]:
    """The classes whose categorised rows cover the cued instant (within the cue's ±0.5 s)."""
    heard = sounds_near(view, view.clip.start_s + params["offset_s"])
    return [p is not None and p in heard for p in _payloads(candidates, "sound")]


NEXT_SOUND_GAP_S = 1.0  # the next sound starts at least this long after the cue's middle: two moments
NEXT_SOUND_TIE_S = 0.5  # two sounds starting closer than this after the cue: "next" is ambiguous


def next_sound(view: ClipView, cue_class: str):
    """(the cue, the next sound heard after it) or (None, reason).

    The cue is a class heard once (:meth:`ClipView.cue`); the next sound is the first occurrence of another
    categorised class that starts after the cue has ended. Not asked when another sound starts while the
    cue is still heard (which one is "next" is unclear), when two sounds start within
    :data:`NEXT_SOUND_TIE_S` of each other, when the next one starts less than :data:`NEXT_SOUND_GAP_S`
    after the cue's middle (one moment, not two), when it crosses the window's end, or when a
    not-categorised sound is heard between them (it could be the next sound, of any class)."""
    occ = view.cue(cue_class)
    if occ is None:
        return None, "cue class heard more than once or crosses the window edge"
    others = sorted((o for c, group in view.occurrences.items() if c != cue_class for o in group),
                    key=lambda o: (o.start_s, o.sound_class))
    if any(occ.start_s <= o.start_s < occ.stop_s for o in others):
        return None, "another sound starts while the cue is heard"
    later = [o for o in others if o.start_s >= occ.stop_s]
    if not later:
        return None, "no sound heard after the cue in the window"
    nxt = later[0]
    if len(later) > 1 and later[1].start_s - nxt.start_s < NEXT_SOUND_TIE_S:
        return None, f"two sounds start within {NEXT_SOUND_TIE_S} s after the cue: 'next' is ambiguous"
    if nxt.start_s - occ.mid_s < NEXT_SOUND_GAP_S:
        return None, "the next sound starts within the cued moment"
    if nxt.stop_s > view.clip.end_s:
        return None, "the next sound crosses the window's end"
    if any(r.start_s < nxt.start_s and r.stop_s > occ.start_s for r in view.uncategorised_records):
        return None, "a not-categorised sound is heard between the cue and the next sound"
    return (occ, nxt), ""


@solver("medium_sound_order")
def _sound_order(view: ClipView, params: dict, candidates: list[str]) -> list[bool]:
    found, _ = next_sound(view, params["cue_class"])
    target = found[1].sound_class if found else None
    return [p is not None and p == target for p in _payloads(candidates, "sound")]


def anchored_next(view: ClipView, params: dict):
    pair = tuple(params["anchor_pair"])
    rows = view.narrations_by_pair.get(pair, [])
    if len(rows) != 1:
        return None
    nxt, _ = view.next_narration(rows[0])
    return rows[0], nxt


@solver("medium_action_next")
def _action_next(view: ClipView, params: dict, candidates: list[str]) -> list[bool]:
    found = anchored_next(view, params)
    if not found or found[1] is None:
        return [False] * len(candidates)
    target = view.pair(found[1])
    return [p is not None and _pair(p) == target for p in _payloads(candidates, "action")]


# --- hd_epic -------------------------------------------------------------------------------------------


def main_activities(view: ClipView) -> set[str]:
    """Labels of activity rows covering at least half of the window (worked out once per view: both goal
    generators and every goal question's solver ask; do not modify the set)."""
    def build() -> set[str]:
        clip = view.clip
        starts, stops, labels = view.activity_spans
        if not len(labels):
            return set()
        overlap = np.minimum(stops, clip.end_s) - np.maximum(starts, clip.start_s)
        return set(labels[overlap >= MAIN_ACTIVITY_SHARE * clip.duration_s].tolist())

    return view.memo("main_activities", build)


@solver("easy_goal")
@solver("medium_goal")
def _goal(view: ClipView, params: dict, candidates: list[str]) -> list[bool]:
    labels = main_activities(view)
    return [p is not None and p in labels for p in _payloads(candidates, "activity")]


@solver("easy_object")
def _object_presence(view: ClipView, params: dict, candidates: list[str]) -> list[bool]:
    return [p is not None and p in view.present_objects for p in _payloads(candidates, "object")]


def objects_near(view: ClipView, instant: float, width: float) -> set[str]:
    """Objects whose movement comes within ``width`` seconds of ``instant`` (worked out once per instant
    and view: the cue seconds of every track ask about the same seconds; do not modify the set). A loop
    over the track records: a clip has a few tracks, too few for a numpy mask over :attr:`ClipView.track_spans`
    to pay its set-up (the same comparisons of the same floats, so the same names in the same order)."""
    def near() -> set[str]:
        high, low = instant + width, instant - width
        return {r.object_name for r in view.track_records if r.start_s < high and r.stop_s > low}

    return view.memo(("objects_near", instant, width), near)


def objects_at(view: ClipView, instant: float) -> set[str]:
    return objects_near(view, instant, OBJECT_MOMENT_HALF_WIDTH_S)


@solver("low_object_moment")
def _object_moment(view: ClipView, params: dict, candidates: list[str]) -> list[bool]:
    names = objects_at(view, view.clip.start_s + params["offset_s"])
    return [p is not None and p in names for p in _payloads(candidates, "object")]


def next_object(view: ClipView, anchor: str):
    """(anchor track, next track) — the next object whose movement starts after the anchor's; or None."""
    return next_object_or_why(view, anchor)[0]


def next_object_or_why(view: ClipView, anchor: str):
    """((anchor track, next track), "") or (None, why there is no single next object).

    The anchor must be moved exactly once in the window, starting inside it; the next object is the first
    other object whose movement starts after the anchor's, inside the window, and no second one starts
    within 0.5 s of it ("next" would be ambiguous)."""
    clip = view.clip
    tracks = view.track_records
    is_anchor = [isinstance(r.object_name, str) and r.object_name == anchor for r in tracks]
    if sum(is_anchor) != 1:
        return None, "the anchor object is moved more than once in the window: 'after moving it' is ambiguous"
    a = is_anchor.index(True)
    after = tracks[a].start_s
    if not clip.start_s <= after < clip.end_s:
        return None, "the anchor object's movement starts before the window"
    # The other movements starting after the anchor's, inside the window. Only the earliest start and the
    # one after it decide (the first two of ``sort_values("start_s")``): when the earliest start is shared
    # the answer is "ambiguous" whichever comes first, so the order among equal starts does not matter.
    # (A loop over the clip's few tracks: numpy masks cost more than they save here.)
    later = [i for i, r in enumerate(tracks)
             if not is_anchor[i] and clip.start_s <= r.start_s < clip.end_s and r.start_s > after]
    if not later:
        return None, "no other object's movement starts after the anchor's in the window"
    b = min(later, key=lambda i: tracks[i].start_s)  # the first of the earliest (unique when it matters)
    if len(later) > 1 and min(tracks[i].start_s for i in later if i != b) - tracks[b].start_s < 0.5:
        return None, "two objects start moving within 0.5 s of each other: 'next' is ambiguous"
    return (tracks[a], tracks[b]), ""


@solver("medium_object_order")
def _object_order(view: ClipView, params: dict, candidates: list[str]) -> list[bool]:
    found = next_object(view, params["anchor"])
    target = found[1].object_name if found else None
    return [p is not None and p == target for p in _payloads(candidates, "object")]


def next_step(view: ClipView, recipe_key: str):
    """(current step span, next step span) by time within the video, not by step id; or None.

    The current step is the recipe span overlapping the window longest (at least 5 s); the next is the
    earliest span of another step of the same recipe starting after it, and it must start after the
    window ends (otherwise it is visible, not beyond). Worked out once per recipe and view (the generator
    and every question's solver ask).
    """
    return view.memo(("next_step", recipe_key), lambda: _next_step_of(view, recipe_key))


def _next_step_of(view: ClipView, recipe_key: str):
    clip = view.clip
    steps = [r for r in view.step_records if not is_null(r.recipe_key) and r.recipe_key == recipe_key]
    inside = [r for r in steps if bool(r.in_window)]
    if not inside:
        return None
    # each span's overlap with the window: the floats ``np.minimum``/``np.maximum`` give (a NaN end, first
    # in ``min``/``max``, stays NaN as there); without a NaN, the first longest is ``nanargmax``'s pick
    overlap = [min(float(r.stop_s), clip.end_s) - max(float(r.start_s), clip.start_s) for r in inside]
    if any(o != o for o in overlap):  # a NaN span: numpy's nan-aware reductions decide
        overlap = np.array(overlap, dtype=float)
        if np.nanmax(overlap) < 5:
            return None
        current = inside[int(np.nanargmax(overlap))]  # the first longest, as ``idxmax``
    else:
        longest = max(overlap)
        if longest < 5:
            return None
        current = inside[overlap.index(longest)]  # the first longest, as ``idxmax``
    later = [r for r in steps if r.start_s > current.start_s and (is_null(r.step_id) or r.step_id != current.step_id)]
    # in the order of ``sort_values("start_s")`` (its default sort, ties included)
    later = [later[i] for i in np.argsort(np.array([r.start_s for r in later], dtype=float), kind="quicksort")]
    if not later:
        return None
    nxt = later[0]
    if len(later) > 1 and later[1].step_id != nxt.step_id and later[1].start_s - nxt.start_s < 0.5:
        return None  # two steps start together: "next" is ambiguous
    if nxt.start_s < clip.end_s:
        return None
    return current, nxt


@solver("hard_next_step")
def _next_step(view: ClipView, params: dict, candidates: list[str]) -> list[bool]:
    found = next_step(view, params["recipe_key"])
    target = found[1].step_id if found else None
    return [p is not None and p == target for p in _payloads(candidates, "step")]
