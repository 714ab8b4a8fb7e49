"""EPIC-SOUNDS subtypes (with EPIC-KITCHENS-100 narrations): sounds, objects and actions at sound cues.

HD-EPIC clips get them too where HD-EPIC's own sounds and narrations cover the window (``also_on``)."""

from __future__ import annotations

from dataclasses import replace

from ...annotations.language import action_phrase, cue_phrase, seconds_phrase
from .. import cues, solvers as S
from ...records import is_null
from ..clip_view import ClipView
from ..cues import CUE_CLEAR_S, CUE_COVER_S
from ..distractors import Candidate
from ..levels import Evidence, moments, outside_window
from .registry import LEAKY_TOO, Draft, Subtype, answer_candidate, register, skip


def _unlabelled_caveat(view: ClipView) -> list[str]:
    n = len(view.unlabelled_records)
    return [f"{n} narration rows of this window have no label; 'absent' means absent from the labelled rows"] if n else []


def gen_sound_presence(view: ClipView):
    if not len(view.categorised_records):
        yield skip("no categorised sound in the window")
        return
    classes = sorted(view.present_sound_classes)
    stand_alone = len(classes) == 1 and not len(view.uncategorised_records)
    for c in classes:
        rows = view.rows_by("categorised_records", "sound_class")[c]
        yield Draft(
            "easy_sound_presence", {}, "Which of these sounds can be heard in the clip?",
            "What sound can be heard in the clip?", "{option} can be heard during this clip.",
            answer_candidate(view, f"sound:{c}", [f"sound:{r.row_id}" for r in rows]), "sound", "sound",
            [Evidence("sound", r.row_id, float(r.start_s), float(r.stop_s), "occurrence", label=c) for r in rows],
            stand_alone, "exactly one sound class in the window" if stand_alone else f"{len(classes)} sound classes (and {len(view.uncategorised_records)} uncategorised sounds) in the window",
            exclude={f"sound:{k}" for k in classes},
        )


def gen_sound_object(view: ClipView):
    nouns = sorted({int(r.noun_class) for r in view.narration_records if not is_null(r.noun_class)})
    if not nouns:
        yield skip("no labelled narration in the window")
        return
    stand_alone = len(view.present_noun_classes) == 1 and not len(view.unlabelled_records)
    for n in nouns:
        rows = view.rows_by("narration_records", "noun_class")[n]
        yield Draft(
            "easy_sound_object", {}, "Which of these objects does the camera wearer handle during the clip?",
            "Which object does the camera wearer handle during the clip?",
            "During this clip, the camera wearer handles the {option}.",
            answer_candidate(view, f"noun:{n}", [f"narration:{r.row_id}" for r in rows]), "noun", "entity",
            [view.narration_evidence(r, "occurrence", None) for r in rows],
            stand_alone, "one object handled in the window" if stand_alone else "several objects are handled in the window",
            caveats=_unlabelled_caveat(view),
        )


def gen_action_presence(view: ClipView):
    """"Which of these actions does the camera wearer do during the clip?" One draft per labelled action
    (verb–noun pair) of the window; wrong options are actions none of whose nouns occur in the window
    (``absent_from_clip``), so each is done nowhere in it. Stands alone only when the window has one action."""
    actions = sorted(view.present_actions)
    if not actions:
        yield skip("no labelled narration in the window")
        return
    stand_alone = len(actions) == 1 and not len(view.unlabelled_records)
    for v, n in actions:
        rows = view.narrations_by_pair[(v, n)]
        yield Draft(
            "easy_sound_action", {}, "Which of these actions does the camera wearer do during the clip?",
            "What does the camera wearer do during the clip?",
            "During this clip, the camera wearer is {option}.",
            answer_candidate(view, f"action:{v}:{n}", [f"narration:{r.row_id}" for r in rows]), "action", "action",
            [view.narration_evidence(r, "occurrence", None) for r in rows],
            stand_alone, "one action in the window" if stand_alone else f"{len(actions)} actions in the window",
            exclude={f"action:{a}:{b}" for a, b in actions}, caveats=_unlabelled_caveat(view),
        )


def _cues(view: ClipView):
    """Sound classes heard exactly once, inside the window, with labelled narrations at that moment."""
    if not len(view.categorised_records):
        yield skip("no categorised sound in the window: no cue")
        return
    for c in sorted(view.occurrences):
        occ = view.cue(c)
        if occ is None:
            yield skip("cue class heard more than once or crosses the window edge")
            continue
        if view.unlabelled_overlaps(occ.start_s, occ.stop_s):
            yield skip("an unlabelled narration overlaps the cue: what is handled is unknown")
            continue
        at = view.records_at(occ.start_s, occ.stop_s)
        if not at:
            yield skip("no narration at the cued moment")
            continue
        yield c, occ, at


def _cue_caveats(view: ClipView, sound_class: str) -> list[str]:
    """A cue is a class heard once among the categorised sounds. Not-categorised sounds have no class (EPIC-SOUNDS
    could not assign one), but some descriptions are often categorised as this class: say so on the question."""
    if sound_class not in view.possibly_heard:
        return []
    rows = ", ".join(r.row_id for r in view.uncategorised_records[:4])
    return [f"uncategorised sounds in the window ({rows}) have descriptions sometimes categorised as "
            f"'{sound_class}'; the cue is unique among categorised sounds"]


def _keyed_at_cue(occ, at, value_of) -> tuple[object, list]:
    """The value a cue question is keyed on, and the rows at the cue that show it.

    With one value at the cue (one object handled, one action done) that value. With several, the value
    of the narration overlapping the cue longest (ties: the earlier start, then the row id); the others
    are true at the cue too, so the draft excludes them from the options (``exclude``) instead of being
    dropped: exactly one option is then true, but the question cannot stand without its options."""
    rows = at
    overlap = {r.row_id: min(r.stop_s, occ.stop_s) - max(r.start_s, occ.start_s) for r in rows}
    best = min(rows, key=lambda r: (-overlap[r.row_id], r.start_s, r.row_id))
    key = value_of(best)
    return key, [r for r in rows if value_of(r) == key]


def _stand_alone(values: set, one: str, several: str) -> tuple[bool, str]:
    return (True, one) if len(values) == 1 else (False, several.format(n=len(values)))


def gen_sound_object_at_cue(view: ClipView):
    """"At the moment you hear <cue>, which object is the camera wearer handling?" Keyed on the object of
    the narrations at the cue. When several objects are handled at the cue, the draft is keyed on one
    (:func:`_keyed_at_cue`) and every object named at the cue is kept out of the options, so exactly one
    option is true; the question then keeps its options (it cannot stand alone)."""
    for item in _cues(view):
        if item[0] == "skip":
            yield item
            continue
        c, occ, at = item
        n, rows = _keyed_at_cue(occ, at, lambda r: int(r.noun_class))
        stand_alone, reason = _stand_alone({int(r.noun_class) for r in at}, "exactly one object is handled at the cued moment",
                                           "{n} objects are handled at the cued moment: only the options single one out")
        cue = cue_phrase(c)
        mention = {int(x) for r in at for x in r.all_noun_classes} | {int(r.noun_class) for r in at}
        yield Draft(
            "low_sound_object", {"cue_class": c},
            f"At the moment you hear {cue}, which object is the camera wearer handling?",
            f"At the moment you hear {cue}, which object is the camera wearer handling?",
            f"At the moment you hear {cue}, the camera wearer is handling the {{option}}.",
            answer_candidate(view, f"noun:{n}", [f"narration:{r.row_id}" for r in rows]), "noun", "entity",
            view.sound_evidence(occ, "cue") + [view.narration_evidence(r, "answer", occ.mid_s) for r in rows],
            stand_alone, reason,
            exclude={f"noun:{x}" for x in mention}, caveats=_unlabelled_caveat(view) + _cue_caveats(view, c),
        )


def gen_movement_at_cue(view: ClipView):
    """"At the moment you hear <cue>, what is the camera wearer doing?" Keyed on the action (verb–noun pair)
    of the narrations at the cue; with several actions at the cue, keyed on one and the others kept out of
    the options, as for :func:`gen_sound_object_at_cue`."""
    for item in _cues(view):
        if item[0] == "skip":
            yield item
            continue
        c, occ, at = item
        (v, n), rows = _keyed_at_cue(occ, at, view.pair)
        pairs = {view.pair(r) for r in at}
        stand_alone, reason = _stand_alone(pairs, "exactly one action at the cued moment",
                                           "{n} actions at the cued moment: only the options single one out")
        cue = cue_phrase(c)
        yield Draft(
            "low_sound_movement", {"cue_class": c},
            f"At the moment you hear {cue}, what is the camera wearer doing?",
            f"At the moment you hear {cue}, what is the camera wearer doing?",
            f"At the moment you hear {cue}, the camera wearer is {{option}}.",
            answer_candidate(view, f"action:{v}:{n}", [f"narration:{r.row_id}" for r in rows]), "action", "action",
            view.sound_evidence(occ, "cue") + [view.narration_evidence(r, "answer", occ.mid_s) for r in rows],
            stand_alone, reason,
            exclude={f"action:{a}:{b}" for a, b in pairs}, caveats=_unlabelled_caveat(view) + _cue_caveats(view, c),
        )


def gen_purpose(view: ClipView):
    """"At the moment you hear <cue>, what is the camera wearer getting ready to do?" The key is what the
    cued action leads to: the next labelled action (a different verb–noun pair) that involves an object
    of the cued action — its main noun or any other noun it names ("take glass" → "pour water into the
    glass"). When no later action in the window shares an object, there is no question (counted as a
    drop); a later action that shares none is not a purpose, however soon it follows. It must start at
    least 1 s after the cue, and no unlabelled narration may start in between (it could be the one)."""
    for item in _cues(view):
        if item[0] == "skip":
            yield item
            continue
        c, occ, at = item
        if len({view.pair(r) for r in at}) != 1:
            yield skip("more than one action at the cued moment")
            continue
        found = S.next_after_cue(view, {"cue_class": c})
        anchor, nxt = found if found else (None, None)
        if nxt is None:
            _, reason = view.next_narration(anchor, shares_object=True) if anchor is not None else (None, "no action at the cue")
            yield skip(reason or "no next action")
            continue
        if nxt.start_s - occ.mid_s < 1.0:
            yield skip("what the action leads to starts within the cued moment")
            continue
        v, n = view.pair(nxt)
        cue = cue_phrase(c)
        yield Draft(
            "medium_sound_purpose", {"cue_class": c},
            f"At the moment you hear {cue}, what is the camera wearer getting ready to do?",
            f"At the moment you hear {cue}, what is the camera wearer getting ready to do?",
            f"At the moment you hear {cue}, the camera wearer is getting ready to {{option}}.",
            answer_candidate(view, f"purpose:{v}:{n}", [f"narration:{nxt.row_id}"]), "purpose", "purpose",
            view.sound_evidence(occ, "cue") + [view.narration_evidence(anchor, "context", occ.mid_s),
                                               view.narration_evidence(nxt, "answer", nxt.start_s)],
            True, "one next action follows the cued moment",
            exclude={f"purpose:{a}:{b}" for a, b in {view.pair(r) for r in at}},
            caveats=_unlabelled_caveat(view) + _cue_caveats(view, c),
        )


def sounds_near_cue(view: ClipView, instant: float) -> tuple[set[str], set[str], list[str]]:
    """What might be heard within ±:data:`CUE_CLEAR_S` of ``instant``: the categorised classes, the classes
    a not-categorised sound there might be (by its description, as :attr:`ClipView.possibly_heard` reads the
    whole window), and the ids of those not-categorised rows."""
    return view.memo(("sounds_near_cue", instant), lambda: _sounds_near_cue(view, instant))


def _sounds_near_cue(view: ClipView, instant: float) -> tuple[set[str], set[str], list[str]]:
    u = [r for r in view.uncategorised_records if cues.covers(r.start_s, r.stop_s, instant, CUE_CLEAR_S)]
    maybe: set[str] = set()
    for r in u:
        maybe |= view.catalogue.description_classes.get(r.description, set())
    return S.sounds_near(view, instant, CUE_CLEAR_S), maybe, [r.row_id for r in u]


def gen_sound_moment(view: ClipView):
    """"About N seconds into the clip, which sound do you hear?" — asked of every categorised sound (a merged
    occurrence, :attr:`ClipView.occurrences`) lying inside the window (:func:`levels.outside_window`), at a
    whole second N it covers within ±:data:`CUE_COVER_S`, at least :data:`..cues.CUE_MARGIN_S` from either
    edge (:func:`..cues.cue_seconds`: the first second no other draft of the clip cues, preferring one with
    fewer other sounds near it). Every other class heard within ±:data:`CUE_CLEAR_S` of N, and every class a
    not-categorised sound there might be, is left out of the options, so no wrong option could be heard
    about N seconds in; the question then needs its options, so it stands alone only when nothing else
    sounds near N. ``at_s`` is N, read inside the segment of the occurrence nearest to it."""
    clip = view.clip
    if not len(view.categorised_records):
        yield skip("no categorised sound in the window: no time cue")
        return
    used: set[int] = set()
    for occ in sorted((o for group in view.occurrences.values() for o in group), key=lambda o: (o.start_s, o.sound_class)):
        reason = outside_window([Evidence("sound", "+".join(occ.row_ids), occ.start_s, occ.stop_s, "answer")], clip)
        if reason:
            yield skip(reason)
            continue
        def others(t: float, c: str = occ.sound_class) -> int:  # len((heard | maybe) - {c}), one set fewer made
            heard, maybe, _ = sounds_near_cue(view, t)
            either = heard | maybe
            return len(either) - (c in either)

        offset = cues.first_free(cues.cue_seconds(clip, occ.start_s, occ.stop_s, others), used)
        if offset is None:
            yield skip(f"no free second of the window that the sound covers within {CUE_COVER_S} s")
            continue
        instant = clip.start_s + offset
        heard, maybe, unknown = sounds_near_cue(view, instant)
        ids = set(occ.row_ids)
        segments = [r for r in view.categorised_records if r.row_id in ids]
        row = min(segments, key=lambda r: (max(r.start_s - instant, instant - r.stop_s, 0.0), r.start_s, r.row_id))
        alone = heard == {occ.sound_class} and not unknown
        when = seconds_phrase(offset)
        caveats = [f"not-categorised sounds near the cued time ({', '.join(unknown[:4])}): the classes they might "
                   "be are not offered"] if unknown else []
        yield Draft(
            "low_sound_moment", {"offset_s": offset},
            f"About {when} into the clip, which sound do you hear?",
            f"About {when} into the clip, which sound do you hear?",
            f"{{option}} can be heard about {when} into the clip.",
            answer_candidate(view, f"sound:{occ.sound_class}", [f"sound:{r}" for r in occ.row_ids]), "sound", "sound",
            [Evidence("sound", row.row_id, float(row.start_s), float(row.stop_s), "answer", at_s=float(instant),
                      label=str(row.sound_class))],
            alone, "exactly one sound is heard at the cued time" if alone
            else "other sounds are heard at the cued time too (none of them is an option): options are needed",
            exclude={f"sound:{c}" for c in heard | maybe}, caveats=caveats,
        )


def gen_count(view: ClipView):
    if not len(view.categorised_records):
        yield skip("no categorised sound in the window")
        return
    for c, occ in sorted(view.occurrences.items()):
        if len(occ) < 2:
            continue
        if len(moments([o.mid_s for o in occ])) < 2:
            yield skip("occurrences too close together to be told apart as separate moments")
            continue
        n = S.countable(view, c)
        if n is None:
            yield skip("count not trustworthy: an uncategorised sound may be this class, or it crosses the edge")
            continue
        cue = cue_phrase(c)
        evidence = [e for o in occ for e in view.sound_evidence(o, "sequence")]
        yield Draft(
            "medium_sound_count", {"cue_class": c},
            f"How many times do you hear {cue} in the clip?",
            f"How many times do you hear {cue} in the clip?",
            f"You hear {cue} exactly {{option}} times in this clip.",
            Candidate(f"count:{n}", str(n), "answer", None, tuple(f"sound:{r}" for o in occ for r in o.row_ids), "the key"),
            "count", "number", evidence, True, "a count has one value",
        )


def gen_sound_order(view: ClipView):
    """"After you hear <cue>, which sound do you hear next?" The cue is a class heard once in the window; the
    key is the class of the next categorised sound to start after the cue has ended
    (:func:`..solvers.next_sound`, which also says when there is no fair question: a sound starting during
    the cue, two starting together, one starting within the cued moment, a not-categorised sound in
    between). Wrong options are other sounds of the clip (or, in the leaky variant, absent ones); the cue's
    own class is never one."""
    if not len(view.categorised_records):
        yield skip("no categorised sound in the window: no cue")
        return
    for c in sorted(view.occurrences):
        found, reason = S.next_sound(view, c)
        if found is None:
            yield skip(reason)
            continue
        occ, nxt = found
        cue = cue_phrase(c)
        yield Draft(
            "medium_sound_order", {"cue_class": c},
            f"After you hear {cue}, which sound do you hear next?",
            f"After you hear {cue}, which sound do you hear next?",
            f"{{option}} is the next sound you hear after you hear {cue}.",
            answer_candidate(view, f"sound:{nxt.sound_class}", [f"sound:{r}" for r in nxt.row_ids]), "sound", "sound",
            view.sound_evidence(occ, "cue") + view.sound_evidence(nxt, "answer"),
            True, "one sound is heard next after the cue",
            exclude={f"sound:{c}"}, caveats=_cue_caveats(view, c),
        )


def gen_action_next(view: ClipView):
    narr = view.narration_records
    if len(narr) < 2:
        yield skip("fewer than two labelled actions in the window")
        return
    by_pair = view.narrations_by_pair
    for r, pair in zip(narr, view.narration_pairs):
        if len(by_pair[pair]) != 1:
            yield skip("the anchor action is done more than once in the window: 'after' it is ambiguous")
            continue
        found = S.anchored_next(view, {"anchor_pair": list(pair)})
        nxt = found[1] if found else None
        if nxt is None:
            yield skip(view.next_narration(r)[1] or "no next action")
            continue
        if nxt.start_s - r.start_s < 1.0:
            yield skip("the next action starts within a second")
            continue
        anchor_text = action_phrase(r.narration, list(r.all_nouns), "gerund", r.verb)
        v, n = view.pair(nxt)
        yield Draft(
            "medium_action_next", {"anchor_pair": list(pair)},
            f"What is the camera wearer's next action after {anchor_text}?",
            f"What is the camera wearer's next action after {anchor_text}?",
            f"Right after {anchor_text}, the camera wearer's next action is {{option}}.",
            answer_candidate(view, f"action:{v}:{n}", [f"narration:{nxt.row_id}"]), "action", "action",
            [view.narration_evidence(r, "context", r.start_s), view.narration_evidence(nxt, "answer", nxt.start_s)],
            True, "one next action follows the anchor",
            exclude={f"action:{pair[0]}:{pair[1]}"}, caveats=_unlabelled_caveat(view),
        )


# HD-EPIC has sounds (EPIC-SOUNDS classes) and narrations of its own: its clips get every subtype here, with
# the same generators, solvers and distractor strategies, where they hold the subtype's streams.
HD_EPIC_TOO = ("hd_epic",)

for _s in [
    Subtype("easy_sound_presence", "epic_sounds", ("sound",), "presence", "absent_from_clip", "sound", gen_sound_presence,
            "which sound can be heard anywhere in the clip"),
    Subtype("easy_sound_object", "epic_sounds", ("narration",), "presence", "absent_from_clip", "entity", gen_sound_object,
            "which object is handled anywhere in the clip"),
    Subtype("easy_sound_action", "epic_sounds", ("narration",), "presence", "absent_from_clip", "action",
            gen_action_presence, "which action is done anywhere in the clip"),
    Subtype("low_sound_object", "epic_sounds", ("sound", "narration"), "moment", "same_clip_other_moments", "entity",
            gen_sound_object_at_cue, "which object is handled at the moment a sound is heard", variants=LEAKY_TOO),
    Subtype("low_sound_movement", "epic_sounds", ("sound", "narration"), "moment", "same_clip_other_moments", "action",
            gen_movement_at_cue, "what the wearer is doing at the moment a sound is heard", variants=LEAKY_TOO),
    Subtype("low_sound_moment", "epic_sounds", ("sound",), "moment", "same_clip_other_moments", "sound",
            gen_sound_moment, "which sound is heard at a given time", variants=LEAKY_TOO),
    Subtype("medium_sound_purpose", "epic_sounds", ("sound", "narration"), "sequence", "same_clip_other_moments", "purpose",
            gen_purpose, "what the action making a sound leads to", variants=LEAKY_TOO),
    Subtype("medium_sound_count", "epic_sounds", ("sound",), "sequence", "other_counts", "number", gen_count,
            "how many times a sound is heard"),
    Subtype("medium_sound_order", "epic_sounds", ("sound",), "sequence", "same_clip_other_moments", "sound",
            gen_sound_order, "which sound is heard next after a cue", variants=LEAKY_TOO),
    Subtype("medium_action_next", "epic_sounds", ("narration",), "sequence", "same_clip_other_moments", "action",
            gen_action_next, "which action follows a given action", variants=LEAKY_TOO),
]:
    register(replace(_s, also_on=HD_EPIC_TOO))
