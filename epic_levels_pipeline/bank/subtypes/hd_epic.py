"""HD-EPIC subtypes: activities, objects moved (object tracks) and recipe steps."""

from __future__ import annotations

from dataclasses import replace

from ...annotations.catalogue import is_placeholder_name
from ...annotations.language import first_sentence, seconds_phrase
from ...annotations.values import CandidateValue
from .. import cues, solvers as S
from ...records import is_null
from ..clip_view import ClipView
from ..rows import rows_with
from ..cues import CUE_CLEAR_S, CUE_COVER_S
from ..distractors import offered, option_texts, render
from ..options import ENTITY_KINDS
from ..levels import Evidence, moments, outside_window
from .registry import LEAKY_TOO, Draft, Subtype, answer_candidate, register, skip


def _main_activity(view: ClipView):
    labels = S.main_activities(view)
    if len(labels) != 1:
        return None, ("no activity covers half of the window" if not labels else "two activities cover the window")
    (label,) = labels  # (the view's own set: read, not popped)
    return (label, rows_with(view.activity_records, "label", label)), ""


def rank_shortfall(view: ClipView, draft: Draft, strategy: str) -> str:
    """Why the key cannot take every corpus-frequency rank among ``strategy``'s candidates ("" when it can:
    three as frequent as the key, or three more and three less frequent, none clashing with it).

    The strategy's draw places the key at a uniformly drawn rank; a key that cannot take every rank would
    get another one, and over many questions the common (or rare) keys would come out on top. A subtype
    whose pool is drawn from the whole catalogue, where that only happens at the corpus's extremes, asks
    this of its drafts and leaves out those that fail (``medium_goal``: activity labels sharing the clip's
    objects, from the whole catalogue; the draw itself asks it of ``absent_from_clip`` pools)."""
    freq = view.catalogue.frequency
    key_f = freq.get(draft.answer.value, 0)
    entity = CandidateValue.parse(draft.answer.value).kind in ENTITY_KINDS
    texts = option_texts(view.catalogue)
    sides = [0, 0, 0]
    source = offered(strategy, view, draft)  # answer and exclusions left out; values read, no candidates made
    for p, f in enumerate(source.freq.tolist()):
        if texts.clash(render(view, source.value(p)), draft.answer.text, entity):
            continue
        sides[(f > key_f) - (f < key_f) + 1] += 1
        if _every_rank(*sides):  # enough already: the rest cannot undo it (the counts only matter when short)
            return ""
    lower, equal, higher = sides
    return (f"the key is among the three most or least frequent of its {strategy} candidates "
            f"({higher} more, {equal} as, {lower} less frequent): no frequency-matched options")


def _every_rank(lower: int, equal: int, higher: int) -> bool:
    """Can the key take every rank: three as frequent, or three more and three less frequent?"""
    return equal >= 3 or (higher >= 3 and lower >= 3)


def _goal_draft(view: ClipView, subtype: str, extra: list[Evidence], label: str, rows: list) -> Draft:
    stand_alone = len({r.label for r in view.activity_records if not is_null(r.label)}) == 1
    return Draft(
        subtype, {}, "What activity is the camera wearer working on?",
        "What activity is the camera wearer working on?",
        "The camera wearer is working on this activity: {option}.",
        answer_candidate(view, f"activity:{label}", [f"activity:{r.row_id}" for r in rows]), "activity", "activity",
        [Evidence("activity", r.row_id, float(r.start_s), float(r.stop_s), "answer", label=label) for r in rows] + extra,
        stand_alone, "one activity spans the window" if stand_alone else "several activities overlap the window",
    )


def gen_easy_goal(view: ClipView):
    found, reason = _main_activity(view)
    if not found:
        yield skip(reason)
        return
    yield _goal_draft(view, "easy_goal", [], *found)


def gen_medium_goal(view: ClipView):
    found, reason = _main_activity(view)
    if not found:
        yield skip(reason)
        return
    tracks = [r for r in view.track_records if r.start_s >= view.clip.start_s]
    evidence = [Evidence("object_track", r.row_id, float(r.start_s), float(r.stop_s), "sequence", at_s=round(float(r.start_s), 3),
                         label=str(r.object_name)) for r in tracks]
    if len(moments([e.at_s for e in evidence])) < 2:
        yield skip("fewer than two object movements start in the window: no action sequence")
        return
    draft = _goal_draft(view, "medium_goal", evidence, *found)
    reason = rank_shortfall(view, draft, "shares_objects")
    yield skip(reason) if reason else draft


def gen_easy_object(view: ClipView):
    names = sorted(n for n in view.present_objects if not is_placeholder_name(n))
    if not names:
        yield skip("no named object moved in the window")
        return
    stand_alone = len(names) == 1
    for name in names:
        rows = view.rows_by("track_records", "object_name")[name]
        yield Draft(
            "easy_object", {}, "Which of these objects does the camera wearer move during the clip?",
            "Which object does the camera wearer move during the clip?",
            "During this clip, the camera wearer moves the {option}.",
            answer_candidate(view, f"object:{name}", [f"object_track:{r.row_id}" for r in rows]), "object", "entity",
            [Evidence("object_track", r.row_id, float(r.start_s), float(r.stop_s), "occurrence", label=f"{name} (raw: {r.raw_name})")
             for r in rows],
            stand_alone, "one object moved in the window" if stand_alone else "several objects are moved in the window",
        )


def cue_seconds(view: ClipView, row) -> list[int]:
    """The whole seconds N at which "about N seconds into the clip" may ask about the track ``row``
    (:func:`..cues.cue_seconds`); best first: the fewest other objects moving within ±:data:`CUE_CLEAR_S`
    of N (more of the clip's objects stay available as options)."""
    name = row.object_name

    def crowding(t: float) -> int:  # len(near - {name}), without making the difference
        near = S.objects_near(view, t, CUE_CLEAR_S)
        return len(near) - (name in near)

    return cues.cue_seconds(view.clip, row.start_s, row.stop_s, crowding)


def gen_object_moment(view: ClipView):
    """"About N seconds into the clip, which object is the camera wearer moving?" — asked of every named
    track whose row lies inside the window (:func:`levels.outside_window`), at a second N its track covers
    within ±:data:`CUE_COVER_S` (:func:`cue_seconds`: the first of them no other draft cues). Every other
    object moving within ±:data:`CUE_CLEAR_S` of N is excluded from the options, so the rule is about the
    options: other objects may move at N, but none of them is offered. Then the question needs its options
    (another object is a true open answer), so it stands alone only when nothing else moves near N.
    ``at_s`` is N, read inside the row."""
    clip = view.clip
    if not view.track_records:
        yield skip("no object moved in the window")
        return
    used: set[int] = set()
    for r in view.track_records:
        if is_placeholder_name(r.object_name):
            yield skip("the object moved has no name (placeholder track name)")
            continue
        answer = Evidence("object_track", r.row_id, float(r.start_s), float(r.stop_s), "answer",
                          label=f"{r.object_name} (raw: {r.raw_name})")
        reason = outside_window([answer], clip)
        if reason:
            yield skip(reason)
            continue
        offset = cues.first_free(cue_seconds(view, r), used)
        if offset is None:
            yield skip(f"no free second of the window that the key's row covers within {CUE_COVER_S} s")
            continue
        instant = clip.start_s + offset
        near = S.objects_near(view, instant, CUE_CLEAR_S)
        alone = near == {r.object_name}
        when = seconds_phrase(offset)
        yield Draft(
            "low_object_moment", {"offset_s": offset},
            f"About {when} into the clip, which object is the camera wearer moving?",
            f"About {when} into the clip, which object is the camera wearer moving?",
            f"About {when} into the clip, the camera wearer is moving the {{option}}.",
            answer_candidate(view, f"object:{r.object_name}", [f"object_track:{r.row_id}"]), "object", "entity",
            [replace(answer, at_s=float(instant))],
            alone, "exactly one object moves at the cued time" if alone
            else "other objects move at the cued time too (none of them is an option): options are needed",
            exclude={f"object:{n}" for n in near},
        )


def gen_object_order(view: ClipView):
    names = sorted(n for n in view.present_objects if not is_placeholder_name(n))
    if len(names) < 2:
        yield skip("fewer than two objects moved in the window")
        return
    for anchor in names:
        found, reason = S.next_object_or_why(view, anchor)
        if not found:
            yield skip(reason)
            continue
        a, b = found
        if is_placeholder_name(b.object_name):
            yield skip("the next object has no name (placeholder track name)")
            continue
        if b.start_s - a.start_s < 1.0:
            yield skip("the next movement starts within a second of the anchor")
            continue
        yield Draft(
            "medium_object_order", {"anchor": anchor},
            f"Right after moving the {anchor}, which object does the camera wearer move next?",
            f"Right after moving the {anchor}, which object does the camera wearer move next?",
            f"Right after moving the {anchor}, the camera wearer next moves the {{option}}.",
            answer_candidate(view, f"object:{b.object_name}", [f"object_track:{b.row_id}"]), "object", "entity",
            [Evidence("object_track", a.row_id, float(a.start_s), float(a.stop_s), "context", at_s=float(a.start_s), label=anchor),
             Evidence("object_track", b.row_id, float(b.start_s), float(b.stop_s), "answer", at_s=float(b.start_s),
                      label=str(b.object_name))],
            True, "one object is moved next",
            exclude={f"object:{anchor}"},
        )


def gen_next_step(view: ClipView):
    steps = view.step_records
    if not steps:
        yield skip("no recipe step in the window")
        return
    for recipe_key in sorted({r.recipe_key for r in steps if bool(r.in_window)}):
        found = S.next_step(view, recipe_key)
        if not found:
            yield skip("no step after the current one starts after the window")
            continue
        current, nxt = found
        clip = view.clip
        mid = (max(current.start_s, clip.start_s) + min(current.stop_s, clip.end_s)) / 2
        provenance = [
            Evidence("recipe_step", current.row_id, float(current.start_s), float(current.stop_s), "answer", at_s=round(float(mid), 3),
                     in_window=True, label=first_sentence(current.label)),
            Evidence("recipe_step", nxt.row_id, float(nxt.start_s), float(nxt.stop_s), "recipe", at_s=float(nxt.start_s),
                     in_window=False, label=first_sentence(nxt.label)),
        ]
        yield Draft(
            "hard_next_step", {"recipe_key": recipe_key},
            "Which step of the recipe does the camera wearer carry out next, after this clip?",
            "Which step of the recipe does the camera wearer carry out next, after this clip?",
            "After this clip, the next recipe step the camera wearer carries out is: {option}.",
            answer_candidate(view, f"step:{nxt.step_id}", [f"recipe_step:{nxt.row_id}"]), "step", "recipe_step",
            provenance, False, "a recipe step has no single short wording: options are needed",
            exclude={f"step:{current.step_id}"},
        )


for _s in [
    Subtype("easy_goal", "hd_epic", ("activity", "object_track"), "presence", "absent_from_clip", "activity", gen_easy_goal,
            "the activity; wrong options share no object with the clip"),
    Subtype("medium_goal", "hd_epic", ("activity", "object_track"), "sequence", "shares_objects", "activity", gen_medium_goal,
            "the activity; wrong options share objects, so the action sequence decides"),
    Subtype("easy_object", "hd_epic", ("object_track",), "presence", "absent_from_clip", "entity", gen_easy_object,
            "which object is moved anywhere in the clip"),
    Subtype("low_object_moment", "hd_epic", ("object_track",), "moment", "same_clip_other_moments", "entity", gen_object_moment,
            "which object is moved at a given time", variants=LEAKY_TOO),
    Subtype("medium_object_order", "hd_epic", ("object_track",), "sequence", "same_clip_other_moments", "entity", gen_object_order,
            "which object is moved right after another", variants=LEAKY_TOO),
    Subtype("hard_next_step", "hd_epic", ("recipe_step",), "beyond", "same_recipe_other_steps", "recipe_step", gen_next_step,
            "which recipe step comes next (task knowledge beyond the window)"),
]:
    register(_s)
