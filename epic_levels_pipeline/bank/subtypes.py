"""The subtype registry: what each question subtype asks, what evidence it needs, how drafts are made.

Each :class:`Subtype` declares its dataset, the annotation streams it reads, its evidence ``scope`` and
its default distractor strategy; its ``level`` is derived from the scope (:mod:`levels`), never typed in.
A generator turns a clip into *drafts*: the question in words, the solver's parameters, the intended
answer, the values that must not become distractors, and the provenance. The answer key itself is
decided later by the solver (:mod:`solvers`), which never sees the intended answer.

Which distractor strategies a run generates per subtype is configuration (:data:`DEFAULT_VARIANTS`,
overridable in :class:`BankConfig`): moment and sequence subtypes of ``epic_sounds`` are generated with
the fixed ``same_clip_other_moments`` and, for the shortcut audit, the leaky ``absent_from_clip``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator

from ..annotations.catalogue import is_placeholder_name
from .clip_view import ClipView, records
from .distractors import Candidate, render
from ..annotations.language import action_phrase, cue_phrase, first_sentence, seconds_phrase
from .levels import Evidence, level_of, moments
from . import solvers as S
from ..seeding import DEFAULT_SEED


@dataclass
class Draft:
    subtype: str
    params: dict
    question: str          # multiple-choice stem
    open_question: str     # the same question standing without options (used only if can_stand_alone)
    statement: str         # declarative template with {option}
    answer: Candidate
    kind: str              # candidate kind: sound, noun, action, purpose, object, activity, step, count
    answer_type: str       # entity, sound, action, purpose, activity, recipe_step, number
    provenance: list[Evidence]
    can_stand_alone: bool
    stand_alone_reason: str
    exclude: set[str] = field(default_factory=set)
    caveats: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Subtype:
    name: str
    dataset: str
    streams: tuple[str, ...]
    scope: str
    strategy: str
    answer_type: str
    generate: Callable[[ClipView], Iterator[Draft | tuple[str, str]]]
    description: str = ""

    @property
    def level(self) -> str:
        return level_of(self.scope)


SUBTYPES: dict[str, Subtype] = {}


def is_primary(subtype: str, strategy: str) -> bool:
    """Is this the subtype's own distractor strategy (not an extra variant generated for the audit)?

    Roll-ups over subtypes count each base question once, in its primary variant: the leaky
    ``absent_from_clip`` copies of moment questions are scored and audited per subtype, never pooled."""
    spec = SUBTYPES.get(subtype)
    return spec is None or spec.strategy == strategy


def register(subtype: Subtype) -> Subtype:
    """Add a subtype (tests use this to register deliberately wrong ones)."""
    SUBTYPES[subtype.name] = subtype
    return subtype


def unregister(name: str) -> None:
    SUBTYPES.pop(name, None)


OPEN_FORMATS = {
    "entity": "Answer with the name of the object.",
    "sound": "Answer with a short description of the sound.",
    "action": "Answer with a short phrase describing the action.",
    "purpose": "Answer with a short phrase saying what they are getting ready to do.",
    "activity": "Answer with a short description of the activity.",
    "recipe_step": "Answer with the recipe step.",
    "number": "Answer with a number.",
}


def _answer(view: ClipView, value: str, rows: list[str]) -> Candidate:
    return Candidate(value, render(view, value), "answer", view.present(value), rows, "the key")


def _skip(reason: str) -> tuple[str, str]:
    return ("skip", reason)


# ----------------------------------------------------------------------------------------------------
# epic_sounds
# ----------------------------------------------------------------------------------------------------


def _unlabelled_caveat(view: ClipView) -> list[str]:
    n = len(view.unlabelled_narrations)
    return [f"{n} narration rows of this window have no label; 'absent' means absent from the labelled rows"] if n else []


def gen_sound_presence(view: ClipView):
    if not len(view.categorised):
        yield _skip("no categorised sound in the window")
        return
    classes = sorted(view.present_sound_classes)
    stand_alone = len(classes) == 1 and not len(view.uncategorised)
    for c in classes:
        rows = view.categorised[view.categorised["sound_class"] == c]
        yield Draft(
            "easy_sound_presence", {}, "Which of these sounds can be heard in the clip?",
            "What sound can be heard in the clip?", "{option} can be heard during this clip.",
            _answer(view, f"sound:{c}", [f"sound:{r}" for r in rows["row_id"]]), "sound", "sound",
            [Evidence("sound", r.row_id, float(r.start_s), float(r.stop_s), "occurrence", label=c) for r in records(rows)],
            stand_alone, "exactly one sound class in the window" if stand_alone else f"{len(classes)} sound classes (and {len(view.uncategorised)} uncategorised sounds) in the window",
            exclude={f"sound:{k}" for k in classes},
        )


def gen_sound_object(view: ClipView):
    nouns = sorted({int(c) for c in view.narrations["noun_class"].dropna()})
    if not nouns:
        yield _skip("no labelled narration in the window")
        return
    stand_alone = len(view.present_noun_classes) == 1 and not len(view.unlabelled_narrations)
    for n in nouns:
        rows = view.narrations[view.narrations["noun_class"] == n]
        yield Draft(
            "easy_sound_object", {}, "Which of these objects does the camera wearer handle during the clip?",
            "Which object does the camera wearer handle during the clip?",
            "During this clip, the camera wearer handles the {option}.",
            _answer(view, f"noun:{n}", [f"narration:{r}" for r in rows["row_id"]]), "noun", "entity",
            [view.narration_evidence(r, "occurrence", None) for r in records(rows)],
            stand_alone, "one object handled in the window" if stand_alone else "several objects are handled in the window",
            caveats=_unlabelled_caveat(view),
        )


def _cues(view: ClipView):
    """Sound classes heard exactly once, inside the window, with labelled narrations at that moment."""
    if not len(view.categorised):
        yield _skip("no categorised sound in the window: no cue")
        return
    for c in sorted(view.occurrences):
        occ = view.cue(c)
        if occ is None:
            yield _skip("cue class heard more than once or crosses the window edge")
            continue
        if len(view.unlabelled_at(occ.start_s, occ.stop_s)):
            yield _skip("an unlabelled narration overlaps the cue: what is handled is unknown")
            continue
        at = view.narrations_at(occ.start_s, occ.stop_s)
        if not len(at):
            yield _skip("no narration at the cued moment")
            continue
        yield c, occ, at


def _cue_caveats(view: ClipView, sound_class: str) -> list[str]:
    """A cue is a class heard once among the categorised sounds. Not-categorised sounds have no class (EPIC-SOUNDS
    could not assign one), but some descriptions are often categorised as this class: say so on the question."""
    if sound_class not in view.possibly_heard:
        return []
    rows = ", ".join(view.uncategorised["row_id"].head(4))
    return [f"uncategorised sounds in the window ({rows}) have descriptions sometimes categorised as "
            f"'{sound_class}'; the cue is unique among categorised sounds"]


def gen_sound_object_at_cue(view: ClipView):
    for item in _cues(view):
        if item[0] == "skip":
            yield item
            continue
        c, occ, at = item
        nouns = {int(x) for x in at["noun_class"]}
        if len(nouns) != 1:
            yield _skip("more than one object handled at the cued moment")
            continue
        n = nouns.pop()
        cue = cue_phrase(c)
        mention = {int(x) for cl in at["all_noun_classes"] for x in cl} | {n}
        yield Draft(
            "low_sound_object", {"cue_class": c},
            f"At the moment you hear {cue}, which object is the camera wearer handling?",
            f"At the moment you hear {cue}, which object is the camera wearer handling?",
            f"At the moment you hear {cue}, the camera wearer is handling the {{option}}.",
            _answer(view, f"noun:{n}", [f"narration:{r}" for r in at["row_id"]]), "noun", "entity",
            view.sound_evidence(occ, "cue") + [view.narration_evidence(r, "answer", occ.mid_s) for r in records(at)],
            True, "exactly one object is handled at the cued moment",
            exclude={f"noun:{x}" for x in mention}, caveats=_unlabelled_caveat(view) + _cue_caveats(view, c),
        )


def gen_movement_at_cue(view: ClipView):
    for item in _cues(view):
        if item[0] == "skip":
            yield item
            continue
        c, occ, at = item
        pairs = {view.pair(r) for r in records(at)}
        if len(pairs) != 1:
            yield _skip("more than one action at the cued moment")
            continue
        v, n = pairs.pop()
        cue = cue_phrase(c)
        yield Draft(
            "low_sound_movement", {"cue_class": c},
            f"At the moment you hear {cue}, what is the camera wearer doing?",
            f"At the moment you hear {cue}, what is the camera wearer doing?",
            f"At the moment you hear {cue}, the camera wearer is {{option}}.",
            _answer(view, f"action:{v}:{n}", [f"narration:{r}" for r in at["row_id"]]), "action", "action",
            view.sound_evidence(occ, "cue") + [view.narration_evidence(r, "answer", occ.mid_s) for r in records(at)],
            True, "exactly one action at the cued moment",
            exclude={f"action:{v}:{n}"}, caveats=_unlabelled_caveat(view) + _cue_caveats(view, c),
        )


def gen_purpose(view: ClipView):
    for item in _cues(view):
        if item[0] == "skip":
            yield item
            continue
        c, occ, at = item
        if len({view.pair(r) for r in records(at)}) != 1:
            yield _skip("more than one action at the cued moment")
            continue
        found = S.next_after_cue(view, {"cue_class": c})
        anchor, nxt = found if found else (None, None)
        if nxt is None:
            _, reason = view.next_narration(anchor) if anchor is not None else (None, "no action at the cue")
            yield _skip(reason or "no next action")
            continue
        if nxt.start_s - occ.mid_s < 1.0:
            yield _skip("what the action leads to starts within the cued moment")
            continue
        v, n = view.pair(nxt)
        cue = cue_phrase(c)
        yield Draft(
            "medium_sound_purpose", {"cue_class": c},
            f"At the moment you hear {cue}, what is the camera wearer getting ready to do?",
            f"At the moment you hear {cue}, what is the camera wearer getting ready to do?",
            f"At the moment you hear {cue}, the camera wearer is getting ready to {{option}}.",
            _answer(view, f"purpose:{v}:{n}", [f"narration:{nxt.row_id}"]), "purpose", "purpose",
            view.sound_evidence(occ, "cue") + [view.narration_evidence(anchor, "context", occ.mid_s),
                                               view.narration_evidence(nxt, "answer", nxt.start_s)],
            True, "one next action follows the cued moment",
            exclude={f"purpose:{a}:{b}" for a, b in {view.pair(r) for r in records(at)}},
            caveats=_unlabelled_caveat(view) + _cue_caveats(view, c),
        )


def gen_count(view: ClipView):
    if not len(view.categorised):
        yield _skip("no categorised sound in the window")
        return
    for c, occ in sorted(view.occurrences.items()):
        if len(occ) < 2:
            continue
        if len(moments([o.mid_s for o in occ])) < 2:
            yield _skip("occurrences too close together to be told apart as separate moments")
            continue
        n = S.countable(view, c)
        if n is None:
            yield _skip("count not trustworthy: an uncategorised sound may be this class, or it crosses the edge")
            continue
        cue = cue_phrase(c)
        evidence = [e for o in occ for e in view.sound_evidence(o, "sequence")]
        yield Draft(
            "medium_sound_count", {"cue_class": c},
            f"How many times do you hear {cue} in the clip?",
            f"How many times do you hear {cue} in the clip?",
            f"You hear {cue} exactly {{option}} times in this clip.",
            Candidate(f"count:{n}", str(n), "answer", None, [f"sound:{r}" for o in occ for r in o.row_ids], "the key"),
            "count", "number", evidence, True, "a count has one value",
        )


def gen_action_next(view: ClipView):
    narr = view.narrations
    if len(narr) < 2:
        yield _skip("fewer than two labelled actions in the window")
        return
    counts: dict[tuple[int, int], int] = {}
    for r in records(narr):
        counts[view.pair(r)] = counts.get(view.pair(r), 0) + 1
    for r in records(narr):
        pair = view.pair(r)
        if counts[pair] != 1:
            continue
        found = S.anchored_next(view, {"anchor_pair": list(pair)})
        nxt = found[1] if found else None
        if nxt is None:
            yield _skip(view.next_narration(r)[1] or "no next action")
            continue
        if nxt.start_s - r.start_s < 1.0:
            yield _skip("the next action starts within a second")
            continue
        anchor_text = action_phrase(r.narration, list(r.all_nouns), "gerund", r.verb)
        v, n = view.pair(nxt)
        yield Draft(
            "medium_action_next", {"anchor_pair": list(pair)},
            f"What is the camera wearer's next action after {anchor_text}?",
            f"What is the camera wearer's next action after {anchor_text}?",
            f"Right after {anchor_text}, the camera wearer's next action is {{option}}.",
            _answer(view, f"action:{v}:{n}", [f"narration:{nxt.row_id}"]), "action", "action",
            [view.narration_evidence(r, "context", r.start_s), view.narration_evidence(nxt, "answer", nxt.start_s)],
            True, "one next action follows the anchor",
            exclude={f"action:{pair[0]}:{pair[1]}"}, caveats=_unlabelled_caveat(view),
        )


# ----------------------------------------------------------------------------------------------------
# hd_epic
# ----------------------------------------------------------------------------------------------------


def _main_activity(view: ClipView):
    labels = S.main_activities(view)
    if len(labels) != 1:
        return None, ("no activity covers half of the window" if not labels else "two activities cover the window")
    label = labels.pop()
    rows = view.activities[view.activities["label"] == label]
    return (label, rows), ""


def _goal_draft(view: ClipView, subtype: str, extra: list[Evidence], label: str, rows) -> Draft:
    stand_alone = view.activities["label"].nunique() == 1
    return Draft(
        subtype, {}, "What activity is the camera wearer working on?",
        "What activity is the camera wearer working on?",
        "The camera wearer is working on this activity: {option}.",
        _answer(view, f"activity:{label}", [f"activity:{r}" for r in rows["row_id"]]), "activity", "activity",
        [Evidence("activity", r.row_id, float(r.start_s), float(r.stop_s), "answer", label=label) for r in records(rows)] + extra,
        stand_alone, "one activity spans the window" if stand_alone else "several activities overlap the window",
    )


def gen_easy_goal(view: ClipView):
    found, reason = _main_activity(view)
    if not found:
        yield _skip(reason)
        return
    yield _goal_draft(view, "easy_goal", [], *found)


def gen_medium_goal(view: ClipView):
    found, reason = _main_activity(view)
    if not found:
        yield _skip(reason)
        return
    tracks = view.tracks[view.tracks["start_s"] >= view.clip.start_s]
    evidence = [Evidence("object_track", r.row_id, float(r.start_s), float(r.stop_s), "sequence", at_s=round(float(r.start_s), 3),
                         label=str(r.object_name)) for r in records(tracks)]
    if len(moments([e.at_s for e in evidence])) < 2:
        yield _skip("fewer than two object movements start in the window: no action sequence")
        return
    yield _goal_draft(view, "medium_goal", evidence, *found)


def gen_easy_object(view: ClipView):
    names = sorted(n for n in view.present_objects if not is_placeholder_name(n))
    if not names:
        yield _skip("no named object moved in the window")
        return
    stand_alone = len(names) == 1
    for name in names:
        rows = view.tracks[view.tracks["object_name"] == name]
        yield Draft(
            "easy_object", {}, "Which of these objects does the camera wearer move during the clip?",
            "Which object does the camera wearer move during the clip?",
            "During this clip, the camera wearer moves the {option}.",
            _answer(view, f"object:{name}", [f"object_track:{r}" for r in rows["row_id"]]), "object", "entity",
            [Evidence("object_track", r.row_id, float(r.start_s), float(r.stop_s), "occurrence", label=f"{name} (raw: {r.raw_name})")
             for r in records(rows)],
            stand_alone, "one object moved in the window" if stand_alone else "several objects are moved in the window",
        )


def gen_object_moment(view: ClipView):
    clip = view.clip
    tracks = view.tracks
    if not len(tracks):
        yield _skip("no object moved in the window")
        return
    used: set[int] = set()
    for r in records(tracks):
        mid = (max(r.start_s, clip.start_s) + min(r.stop_s, clip.end_s)) / 2
        offset = int(round(mid - clip.start_s))
        if offset < 3 or offset > clip.duration_s - 3 or offset in used:
            continue
        names = S.objects_at(view, clip.start_s + offset)
        if is_placeholder_name(r.object_name):
            yield _skip("the object moved has no name (placeholder track name)")
            continue
        if names != {r.object_name}:
            yield _skip("more than one object moves around the cued time")
            continue
        used.add(offset)
        when = seconds_phrase(offset)
        yield Draft(
            "low_object_moment", {"offset_s": offset},
            f"About {when} into the clip, which object is the camera wearer moving?",
            f"About {when} into the clip, which object is the camera wearer moving?",
            f"About {when} into the clip, the camera wearer is moving the {{option}}.",
            _answer(view, f"object:{r.object_name}", [f"object_track:{r.row_id}"]), "object", "entity",
            [Evidence("object_track", r.row_id, float(r.start_s), float(r.stop_s), "answer", at_s=float(clip.start_s + offset),
                      label=f"{r.object_name} (raw: {r.raw_name})")],
            True, "exactly one object moves at the cued time",
            exclude={f"object:{n}" for n in names},
        )


def gen_object_order(view: ClipView):
    names = sorted(n for n in view.present_objects if not is_placeholder_name(n))
    if len(names) < 2:
        yield _skip("fewer than two objects moved in the window")
        return
    for anchor in names:
        found = S.next_object(view, anchor)
        if not found:
            continue
        a, b = found
        if is_placeholder_name(b["object_name"]):
            yield _skip("the next object has no name (placeholder track name)")
            continue
        if b["start_s"] - a["start_s"] < 1.0:
            yield _skip("the next movement starts within a second of the anchor")
            continue
        yield Draft(
            "medium_object_order", {"anchor": anchor},
            f"Right after moving the {anchor}, which object does the camera wearer move next?",
            f"Right after moving the {anchor}, which object does the camera wearer move next?",
            f"Right after moving the {anchor}, the camera wearer next moves the {{option}}.",
            _answer(view, f"object:{b['object_name']}", [f"object_track:{b['row_id']}"]), "object", "entity",
            [Evidence("object_track", a["row_id"], float(a["start_s"]), float(a["stop_s"]), "context", at_s=float(a["start_s"]), label=anchor),
             Evidence("object_track", b["row_id"], float(b["start_s"]), float(b["stop_s"]), "answer", at_s=float(b["start_s"]),
                      label=str(b["object_name"]))],
            True, "one object is moved next",
            exclude={f"object:{anchor}"},
        )


def gen_next_step(view: ClipView):
    steps = view.recipe_steps
    if not len(steps):
        yield _skip("no recipe step in the window")
        return
    for recipe_key in sorted(set(steps.loc[steps["in_window"].astype(bool), "recipe_key"])):
        found = S.next_step(view, recipe_key)
        if not found:
            yield _skip("no step after the current one starts after the window")
            continue
        current, nxt = found
        clip = view.clip
        mid = (max(current["start_s"], clip.start_s) + min(current["stop_s"], clip.end_s)) / 2
        provenance = [
            Evidence("recipe_step", current["row_id"], float(current["start_s"]), float(current["stop_s"]), "answer", at_s=round(float(mid), 3),
                     in_window=True, label=first_sentence(current["label"])),
            Evidence("recipe_step", nxt["row_id"], float(nxt["start_s"]), float(nxt["stop_s"]), "recipe", at_s=float(nxt["start_s"]),
                     in_window=False, label=first_sentence(nxt["label"])),
        ]
        yield Draft(
            "hard_next_step", {"recipe_key": recipe_key},
            "Which step of the recipe does the camera wearer carry out next, after this clip?",
            "Which step of the recipe does the camera wearer carry out next, after this clip?",
            "After this clip, the next recipe step the camera wearer carries out is: {option}.",
            _answer(view, f"step:{nxt['step_id']}", [f"recipe_step:{nxt['row_id']}"]), "step", "recipe_step",
            provenance, False, "a recipe step has no single short wording: options are needed",
            exclude={f"step:{current['step_id']}"},
        )


# ----------------------------------------------------------------------------------------------------

for _s in [
    Subtype("easy_sound_presence", "epic_sounds", ("sound",), "presence", "absent_from_clip", "sound", gen_sound_presence,
            "which sound can be heard anywhere in the clip"),
    Subtype("easy_sound_object", "epic_sounds", ("narration",), "presence", "absent_from_clip", "entity", gen_sound_object,
            "which object is handled anywhere in the clip"),
    Subtype("low_sound_object", "epic_sounds", ("sound", "narration"), "moment", "same_clip_other_moments", "entity",
            gen_sound_object_at_cue, "which object is handled at the moment a sound is heard"),
    Subtype("low_sound_movement", "epic_sounds", ("sound", "narration"), "moment", "same_clip_other_moments", "action",
            gen_movement_at_cue, "what the wearer is doing at the moment a sound is heard"),
    Subtype("medium_sound_purpose", "epic_sounds", ("sound", "narration"), "sequence", "same_clip_other_moments", "purpose",
            gen_purpose, "what the action making a sound leads to"),
    Subtype("medium_sound_count", "epic_sounds", ("sound",), "sequence", "other_counts", "number", gen_count,
            "how many times a sound is heard"),
    Subtype("medium_action_next", "epic_sounds", ("narration",), "sequence", "same_clip_other_moments", "action",
            gen_action_next, "which action follows a given action"),
    Subtype("easy_goal", "hd_epic", ("activity", "object_track"), "presence", "absent_from_clip", "activity", gen_easy_goal,
            "the activity; wrong options share no object with the clip"),
    Subtype("medium_goal", "hd_epic", ("activity", "object_track"), "sequence", "shares_objects", "activity", gen_medium_goal,
            "the activity; wrong options share objects, so the action sequence decides"),
    Subtype("easy_object", "hd_epic", ("object_track",), "presence", "absent_from_clip", "entity", gen_easy_object,
            "which object is moved anywhere in the clip"),
    Subtype("low_object_moment", "hd_epic", ("object_track",), "moment", "same_clip_other_moments", "entity", gen_object_moment,
            "which object is moved at a given time"),
    Subtype("medium_object_order", "hd_epic", ("object_track",), "sequence", "same_clip_other_moments", "entity", gen_object_order,
            "which object is moved right after another"),
    Subtype("hard_next_step", "hd_epic", ("recipe_step",), "beyond", "same_recipe_other_steps", "recipe_step", gen_next_step,
            "which recipe step comes next (task knowledge beyond the window)"),
]:
    register(_s)


# Strategies generated per subtype by default. The leaky variant of each moment/sequence subtype whose
# options are entities is generated beside the fixed one, so the shortcut audit can compare them.
DEFAULT_VARIANTS: dict[str, tuple[str, ...]] = {
    "low_sound_object": ("same_clip_other_moments", "absent_from_clip"),
    "low_sound_movement": ("same_clip_other_moments", "absent_from_clip"),
    "medium_sound_purpose": ("same_clip_other_moments", "absent_from_clip"),
    "low_object_moment": ("same_clip_other_moments", "absent_from_clip"),
}


@dataclass
class BankConfig:
    variants: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(DEFAULT_VARIANTS))
    max_per_subtype: int = 3
    seed: int = DEFAULT_SEED
    subtypes: tuple[str, ...] | None = None  # None = all registered

    def strategies(self, subtype: Subtype) -> tuple[str, ...]:
        return tuple(self.variants.get(subtype.name, (subtype.strategy,)))
