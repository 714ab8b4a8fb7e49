"""Distractor strategies: named ways of drawing wrong options, each candidate with the rows justifying it.

- ``absent_from_clip``        same kind, occurs nowhere in the window (right for L1 by design). Sound
                              classes that a not-categorised row of the window might be are never used.
- ``same_clip_other_moments`` occurs in the window, but not at the cued moment(s): removes the shortcut
                              of absent options ("which of these four is in the clip").
- ``shares_objects``          activity labels whose objects were moved in this clip too (medium_goal).
- ``same_recipe_other_steps`` other steps of the same recipe (hard_next_step).
- ``other_counts``            nearby numbers (count questions).

A subtype's strategy is configuration (:mod:`epic_levels_pipeline.subtypes`), so the leaky and the fixed
variant of one subtype can be generated side by side.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable

from ..annotations.catalogue import is_placeholder_name, object_class
from ..annotations.values import CandidateValue
from .clip_view import ClipView
from .kinds import render, rows_where  # noqa: F401  (render: option text, used by subtypes and responders)
from .options import ENTITY_KINDS, clash

STRATEGIES = ("absent_from_clip", "same_clip_other_moments", "shares_objects", "same_recipe_other_steps", "other_counts")


@dataclass
class Candidate:
    value: str
    text: str
    strategy: str  # "answer" for the key, else the distractor strategy
    present: bool | None = None
    rows: list[str] = field(default_factory=list)  # "stream:row_id" of rows showing where it occurs
    note: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def _absent(view: ClipView, draft) -> list[Candidate]:
    cat = view.catalogue
    kind = draft.kind
    out: list[Candidate] = []
    if kind == "sound":
        for c in cat.sound_classes:
            if c not in view.present_sound_classes and c not in view.possibly_heard:
                out.append(Candidate(f"sound:{c}", "", "absent_from_clip", False, note="no segment of this class in the window"))
    elif kind == "noun":
        for noun_class, entry in cat.nouns.items():
            if noun_class not in view.present_noun_classes:
                out.append(Candidate(f"noun:{noun_class}", "", "absent_from_clip", False,
                                     [f"narration:{r}" for r in entry["rows"]], "handled elsewhere, not in this window"))
    elif kind in ("action", "purpose"):
        present_nouns = view.present_noun_classes
        for pair, entry in cat.actions.items():
            if pair not in view.present_actions and pair[1] not in present_nouns:
                out.append(Candidate(f"{kind}:{pair[0]}:{pair[1]}", "", "absent_from_clip", False,
                                     [f"narration:{r}" for r in entry["rows"]], "done elsewhere, not in this window"))
    elif kind == "object":
        # An absent object must not be another name for something moved in the clip
        # ("bottle of dishwashing liquid" vs "dishwashing soap bottle"): compare noun classes.
        present_classes = {object_class(cat, n) for n in view.present_objects}
        same_video = cat.objects_by_video.get(view.clip.video_id, [])
        # Objects of the same video first: plausible in this kitchen. Other videos only if too few.
        for group, note in ((same_video, "moved elsewhere in the video"), (list(cat.objects), "moved in another video")):
            for name in group:
                entry = cat.objects[name]
                if name not in view.present_objects and entry["class"] not in present_classes:
                    out.append(Candidate(f"object:{name}", "", "absent_from_clip", False, entry["rows"], note))
            if len(out) >= 12:
                break
    elif kind == "activity":
        window_labels = set(view.activities["label"])
        for label, entry in cat.activities.items():
            if label in window_labels or not entry["objects"]:
                continue
            if not set(entry["objects"]) & view.present_objects:
                out.append(Candidate(f"activity:{label}", "", "absent_from_clip", False,
                                     [f"activity:{r}" for r in entry["rows"]], "none of its objects is moved in this clip"))
    return out


def _other_moments(view: ClipView, draft) -> list[Candidate]:
    kind = draft.kind
    values: list[str] = []
    if kind == "noun":
        values = [f"noun:{int(c)}" for c in view.narrations["noun_class"].dropna().unique()]
    elif kind in ("action", "purpose"):
        values = [f"{kind}:{v}:{n}" for v, n in sorted(view.present_actions)]
    elif kind == "object":
        key_class = object_class(view.catalogue, CandidateValue.parse(draft.answer.value).payload)
        values = [f"object:{n}" for n in sorted(view.present_objects)
                  if not is_placeholder_name(n) and object_class(view.catalogue, n) != key_class]
    elif kind == "sound":
        values = [f"sound:{c}" for c in sorted(view.present_sound_classes)]
    out = []
    for value in values:
        if value in draft.exclude:
            continue
        out.append(Candidate(value, "", "same_clip_other_moments", True, rows_where(view, value),
                             "occurs in the clip, not at the cued moment"))
    return out


def _shares_objects(view: ClipView, draft) -> list[Candidate]:
    out = []
    window_labels = set(view.activities["label"])
    for label, entry in view.catalogue.activities.items():
        if label in window_labels:
            continue
        shared = sorted(set(entry["objects"]) & view.present_objects)
        if shared:
            out.append(Candidate(f"activity:{label}", "", "shares_objects", True,
                                 [f"activity:{r}" for r in entry["rows"]], "shares objects: " + ", ".join(shared[:4])))
    return out


def _recipe_steps(view: ClipView, draft) -> list[Candidate]:
    steps = view.recipe_steps
    steps = steps[steps["recipe_key"] == draft.params["recipe_key"]]
    out = []
    for step_id, group in steps.groupby("step_id"):
        value = f"step:{step_id}"
        if value in draft.exclude:
            continue
        out.append(Candidate(value, "", "same_recipe_other_steps", bool(group["in_window"].astype(bool).any()),
                             [f"recipe_step:{r}" for r in group["row_id"]], "another step of the same recipe"))
    return out


def _counts(view: ClipView, draft) -> list[Candidate]:
    n = int(CandidateValue.parse(draft.answer.value).payload)
    near = sorted({k for k in range(max(1, n - 3), n + 4) if k != n}, key=lambda k: (abs(k - n), k))
    return [Candidate(f"count:{k}", str(k), "other_counts", None, [], "a nearby count") for k in near]


POOLS: dict[str, Callable] = {
    "absent_from_clip": _absent,
    "same_clip_other_moments": _other_moments,
    "shares_objects": _shares_objects,
    "same_recipe_other_steps": _recipe_steps,
    "other_counts": _counts,
}


RULES = ("uniform_rank", "uniform")
N_DISTRACTORS = 3


@dataclass
class Drawn:
    """A strategy's draw for one draft: candidates (the chosen ones first), how many the strategy offered,
    and why no option set could be drawn ("" when one was)."""

    candidates: list[Candidate]
    offered: int
    shortfall: str = ""


def pool(strategy: str, view: ClipView, draft, rng=None, limit: int = 12, rule: str = "uniform_rank") -> Drawn:
    """Wrong-option candidates the strategy offers for a draft (answer excluded), rendered, the
    :data:`N_DISTRACTORS` chosen ones first, up to ``limit`` in all; and how many the strategy offered.

    A candidate whose text clashes with the key's or with a candidate already taken (the same entity, or
    nested: :func:`.options.clash`) is skipped. With ``rule="uniform_rank"`` (the default) the chosen
    distractors are matched to the key's corpus frequency: three exactly as frequent as the key when the
    pool has them (a frequency prior then has nothing to go on), else stratified around it — a seeded
    draw says how many of the three are more frequent than the key (0–3, uniformly) and the rest are less
    frequent, so the key's frequency rank among the options is uniform and a prior that picks the most or
    the least frequent option is at chance. When the drawn rank cannot be filled from the strategy's own
    pool, another rank is tried in a seeded order; when none can, or (``absent_from_clip``, whose pool is
    the whole catalogue) when not every rank could be filled — the key is among the three most or least
    frequent of its kind, and keeping only its lucky draws would favour the prior — no option set is drawn (``shortfall``
    says why; the question is dropped with that reason).
    Kinds without a corpus frequency (counts, recipe steps) and ``rule="uniform"`` draw uniformly.
    Only the candidates kept are rendered: absent-from-clip pools hold thousands of entities."""
    if strategy not in POOLS:
        raise ValueError(f"unknown distractor strategy {strategy!r} (known: {', '.join(POOLS)})")
    if rule not in RULES:
        raise ValueError(f"unknown distractor rule {rule!r} (known: {', '.join(RULES)})")
    raw = [c for c in POOLS[strategy](view, draft) if c.value != draft.answer.value and c.value not in draft.exclude]
    if rng is not None:
        rng.shuffle(raw)
    entity = CandidateValue.parse(draft.answer.value).kind in ENTITY_KINDS
    taken: list[Candidate] = []

    def admit(cand: Candidate) -> bool:
        cand.text = cand.text or render(view, cand.value)
        if any(clash(cand.text, t, entity) for t in [draft.answer.text] + [c.text for c in taken]):
            return False
        if cand.present is None:
            cand.present = view.present(cand.value)
        taken.append(cand)
        return True

    freq = view.catalogue.frequency
    if rule == "uniform_rank" and has_prior(draft.answer.value):
        key_f = freq.get(draft.answer.value, 0)
        sides = {
            "higher": [c for c in raw if freq.get(c.value, 0) > key_f],
            "equal": [c for c in raw if freq.get(c.value, 0) == key_f],
            "lower": [c for c in raw if freq.get(c.value, 0) < key_f],
        }
        drawn = int(rng.randrange(N_DISTRACTORS + 1)) if rng is not None else 0
        # Designs, best first: all three as frequent as the key (both priors exactly at chance), then the
        # drawn rank (``drawn`` distractors more frequent, the rest less), then the other ranks in a seeded order.
        # Absent-from-clip pools hold the whole catalogue: a rank they cannot fill means the key is at the
        # corpus's extreme, and another rank would hand the prior the key. Only the clip's own pools retry.
        others = [k for k in range(N_DISTRACTORS + 1) if k != drawn]
        if strategy == "absent_from_clip" and len(sides["equal"]) < N_DISTRACTORS and (
                len(sides["higher"]) < N_DISTRACTORS or len(sides["lower"]) < N_DISTRACTORS):
            # Kept only if every rank could be drawn: dropping just the unlucky draws would keep the
            # corpus's most frequent keys exactly when they come out on top.
            return Drawn([], len(raw), "the key is among the three most or least frequent of its kind: "
                                       "no frequency-matched options")
        if rng is not None:
            rng.shuffle(others)
        designs = [{"equal": N_DISTRACTORS}] + [{"higher": k, "lower": N_DISTRACTORS - k} for k in [drawn] + others]
        for design in designs:
            taken.clear()
            if all(_take(sides[side], want, taken, admit) for side, want in design.items()):
                break
        else:
            taken.clear()
            return Drawn([], len(raw), "no distractors to place the key at a frequency rank (pool too small)")
    for cand in raw:
        if len(taken) >= limit:
            break
        if cand not in taken:
            admit(cand)
    return Drawn(taken, len(raw))


def _take(side: list[Candidate], want: int, taken: list[Candidate], admit) -> bool:
    got = 0
    for cand in side:
        if got == want:
            break
        if cand not in taken and admit(cand):
            got += 1
    return got == want


def has_prior(value: str) -> bool:
    """Does the corpus give this kind of value a frequency (a text-only prior)? Not counts or steps."""
    return CandidateValue.parse(value).kind not in ("count", "step")
