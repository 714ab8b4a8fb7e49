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

import operator
import struct
from dataclasses import asdict, dataclass, field
from typing import Callable, Iterable, Iterator

import numpy as np

from ..annotations.catalogue import is_placeholder_name, object_class
from ..annotations.values import CandidateValue
from ..seeding import shuffle
from .clip_view import ClipView, _missing
from .kinds import render, rows_where  # noqa: F401  (render: option text, used by subtypes and responders)
from .options import ENTITY_KINDS, OptionSet, OptionTexts

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


def _candidate(value: str, text: str, strategy: str, present: bool | None, rows: list[str], note: str) -> Candidate:
    """``Candidate(value, text, strategy, present, rows, note)``: every field set in field order, without the
    call of the dataclass ``__init__`` (a quarter of a candidate's making; the sources make a million per
    run). A test holds it to the constructor, field by field."""
    cand = _new(Candidate)
    cand.value = value
    cand.text = text
    cand.strategy = strategy
    cand.present = present
    cand.rows = rows
    cand.note = note
    return cand


_new = object.__new__


class _Table:
    """One kind's catalogue entities as arrays, in catalogue order, built once per catalogue: values, their
    corpus frequencies, the rows justifying each and what decides presence (noun classes, action pairs, or
    the objects an activity's span moves)."""

    def __init__(self, values: list[str], rows: list[list[str]], frequency: dict[str, int], note: str):
        self.values = values
        self.rows = rows
        self.note = note
        self.position = {v: i for i, v in enumerate(values)}
        self.freq = np.array([frequency.get(v, 0) for v in values], dtype=np.int64)


def _tables(cat) -> dict[str, "_Table"]:
    f = cat.frequency
    out: dict[str, _Table] = {}
    nouns = list(cat.nouns)
    t = out["noun"] = _Table([f"noun:{n}" for n in nouns], [[f"narration:{r}" for r in cat.nouns[n]["rows"]] for n in nouns],
                             f, "handled elsewhere, not in this window")
    t.keys = np.array(nouns, dtype=np.int64)
    t.by_key = _places(t.keys)
    pairs = list(cat.actions)
    for kind in ("action", "purpose"):
        t = out[kind] = _Table([f"{kind}:{v}:{n}" for v, n in pairs],
                               [[f"narration:{r}" for r in cat.actions[p]["rows"]] for p in pairs], f,
                               "done elsewhere, not in this window")
        t.codes = np.array([_code(p) for p in pairs], dtype=np.int64)
        t.nouns = np.array([p[1] for p in pairs], dtype=np.int64)
        t.by_code, t.by_noun = _places(t.codes), _places(t.nouns)
    labels = list(cat.activities)
    t = out["activity"] = _Table([f"activity:{label}" for label in labels],
                                 [[f"activity:{r}" for r in cat.activities[label]["rows"]] for label in labels], f,
                                 "none of its objects is moved in this clip")
    t.labels = labels
    t.objects = [set(cat.activities[label]["objects"]) for label in labels]
    t.has_objects = np.array([bool(cat.activities[label]["objects"]) for label in labels], dtype=bool)
    t.by_object = {}
    for i, objects in enumerate(t.objects):
        for name in objects:
            t.by_object.setdefault(name, []).append(i)
    names = list(cat.objects)
    t = out["object"] = _Table([f"object:{n}" for n in names], [cat.objects[n]["rows"] for n in names], f,
                               "moved in another video")
    t.by_class = {}
    for i, name in enumerate(names):
        t.by_class.setdefault(cat.objects[name]["class"], []).append(i)
    t.by_video = {video: np.array([t.position[f"object:{n}"] for n in group], dtype=np.int64)
                  for video, group in cat.objects_by_video.items()}
    return out


def _places(keys: np.ndarray) -> dict[int, list[int]]:
    """Where each key stands in the array: the positions ``np.isin(keys, [key])`` marks, looked up by key."""
    out: dict[int, list[int]] = {}
    for i, key in enumerate(keys.tolist()):
        out.setdefault(key, []).append(i)
    return out


def _without(n: int, places: dict[int, list[int]], present) -> np.ndarray:
    """``~np.isin(keys, present)`` for the keys whose :func:`_places` these are: only the present ones looked at."""
    mask = np.ones(n, dtype=bool)
    mask[_placed(places, present)] = False
    return mask


def _placed(places: dict, keys) -> list[int]:
    """Every place of the ``keys`` (:func:`_places`, or any such index by key) in one list: a mask cleared
    with it in one assignment clears what one assignment per key clears, at the cost of one."""
    return [i for key in keys for i in places.get(key, ())]


def _code(pair: tuple[int, int]) -> int:
    return int(pair[0]) * 1_000_003 + int(pair[1])


class _Source:
    """A strategy's candidates for one draft (answer and exclusions left out), made only when looked at:
    ``values`` and ``freq`` per position, :meth:`get` the :class:`Candidate` at a position. A candidate is
    made once per view: the sources of one base or list (a view memo) share the candidates they make, each
    the same whatever the draft (its strategy, presence and note depend on the entity alone), so a clip's
    pools that draw one entity hand out one object (read, never changed but for the text and presence
    :func:`pool` fills in, which are the entity's). So are the sources themselves, one per set of entities
    left out (most drafts of a clip leave out none of a base, or the same of a list): what a draw reads of
    their frequencies is worked out once per source."""

    def __init__(self, values, freq: np.ndarray, make, value: Callable[[int], str]):
        self.values = values
        self.freq = freq
        self._make = make
        self._value = value
        self._sorted: np.ndarray | None = None
        self._listed: list[int] | None = None

    def around(self, f: int) -> tuple[int, int]:
        """How many candidates are more frequent than ``f`` and how many less (the counts of ``freq > f``
        and ``freq < f``: two searches of the frequencies sorted once)."""
        ordered = self._sorted
        if ordered is None:
            ordered = self._sorted = np.sort(self.freq)
        return len(ordered) - int(ordered.searchsorted(f, "right")), int(ordered.searchsorted(f, "left"))

    def freq_list(self) -> list[int]:
        """``freq.tolist()`` (the frequencies read one by one: made once)."""
        if self._listed is None:
            self._listed = self.freq.tolist()
        return self._listed

    def value(self, p: int) -> str:
        """The candidate value at a position, without making the candidate."""
        return self._value(p)

    def __len__(self) -> int:
        return len(self.values)

    def get(self, p: int) -> Candidate:
        return self._make(p)

    @classmethod
    def of_list(cls, candidates: list[Candidate], draft, frequency: dict[str, int]) -> "_Source":
        kept = [c for c in candidates if c.value != draft.answer.value and c.value not in draft.exclude]
        values = [c.value for c in kept]
        return cls(values, np.array([frequency.get(v, 0) for v in values], dtype=np.int64), kept.__getitem__,
                   values.__getitem__)

    @classmethod
    def of_entities(cls, view: ClipView, name: str, entities, draft, strategy: str, present: bool,
                    texts: dict[str, str] | None = None) -> "_Source":
        """A clip's (value, rows, note) entities (``entities()``, worked out once per view under ``name``) less
        the answer and the exclusions; their texts from ``texts`` (:func:`_absent_texts`) or, without it,
        rendered when drawn. These lists are short (a clip's own entities, the sound classes): the places kept
        are a Python list (numpy's calls cost more than the work on a few dozen), and a list left whole shares
        the view's frequencies. The source of each set of places left out is kept with the list (the drafts
        of one key leave out the same)."""
        (listed, where, freq), made, sources = view.memo(name, lambda: (_indexed(view, entities()), {}, {}))
        drop = frozenset(i for v in {draft.answer.value, *draft.exclude} for i in where(v))
        source = sources.get(drop)
        if source is None:
            source = sources[drop] = cls._of_listed(view, listed, freq, made, drop, strategy, present, texts)
        return source

    @classmethod
    def _of_listed(cls, view: ClipView, listed: list[tuple], freq: np.ndarray, made: dict[int, Candidate],
                   drop: frozenset[int], strategy: str, present: bool, texts: dict[str, str] | None) -> "_Source":
        """:meth:`of_entities`' source of the ``listed`` entities but those at ``drop``."""
        if drop:
            idx = [k for k in range(len(listed)) if k not in drop]
            freq = freq[idx]
        else:
            idx = range(len(listed))

        def make(p: int) -> Candidate:
            k = idx[p]
            cand = made.get(k)
            if cand is None:
                value, rows, note = listed[k]
                text = "" if texts is None else texts.get(value) or texts.setdefault(value, render(view, value))
                cand = made[k] = _candidate(value, text, strategy, present, [] if rows is None else list(rows), note)
            return cand

        return cls(idx, freq, make, lambda p: listed[idx[p]][0])

    @classmethod
    def of_table(cls, view: ClipView, table: _Table, base: "_Base", draft, strategy: str, present: bool = False,
                 note: Callable[[int], str] | None = None, first_note: str = "") -> "_Source":
        """The entities at the catalogue positions of ``base`` (its ``positions``) less the answer and the
        exclusions, noted ``note(i)`` of their position (else ``table.note``). The positions are ascending
        and distinct, or (absent objects) the first ``base.first`` of them are noted ``first_note`` and the
        rest may repeat them. Absent entities take their texts from :func:`_absent_texts`; present ones
        (``present``) are rendered when drawn. Most drafts drop nothing from a base (an absent pool rarely
        holds the key or an exclusion): the source then reads the base's frequencies, kept with it."""
        positions, first = base.positions, base.first
        drop = [i for i in (table.position.get(v) for v in (draft.answer.value, *draft.exclude)) if i is not None]
        if not any(map(base.holds.__getitem__, drop)):
            if base.source is None:  # (the same for every draft that leaves nothing out: made once)
                base.source = cls._of_positions(view, table, base, positions, first, strategy, present, note,
                                                first_note)
            return base.source
        if first:  # positions may repeat: every place of each (a few values: equality at C speed)
            hit = positions == drop[0]
            for i in drop[1:]:
                hit |= positions == i
            first -= int(np.count_nonzero(hit[:first]))  # where the ``first`` positions end without them
            idx = positions[~hit]
        else:
            at = _found(positions, drop)
            idx = _deleted(positions, at)
        return cls._of_positions(view, table, base, idx, first, strategy, present, note, first_note)

    @classmethod
    def _of_positions(cls, view: ClipView, table: _Table, base: "_Base", idx: np.ndarray, first: int, strategy: str,
                      present: bool, note: Callable[[int], str] | None, first_note: str) -> "_Source":
        """:meth:`of_table`'s source of the catalogue positions ``idx`` of ``base`` (the first ``first`` of
        them noted ``first_note``)."""
        texts = None if present else _absent_texts(view)
        made = base.made

        def make(p: int) -> Candidate:
            i = idx.item(p)  # (``int(idx[p])`` without the numpy scalar between: half the cost)
            lead = p < first
            cand = made.get(-1 - i if lead else i)  # (an object may stand both among the first and after them)
            if cand is None:
                value = table.values[i]
                text = "" if texts is None else texts.get(value) or texts.setdefault(value, render(view, value))
                said = first_note if lead else table.note if note is None else note(i)
                cand = made[-1 - i if lead else i] = _candidate(value, text, strategy, present, list(table.rows[i]),
                                                                said)
            return cand

        return cls(idx, table.freq[idx], make, lambda p: table.values[idx.item(p)])


class _Base:
    """Catalogue positions a clip offers of one kind (:meth:`_Source.of_table`), with what its pools share,
    worked out once per view (a clip draws several pools from one base, and a base runs to thousands):
    ``positions`` (the first ``first`` of them the same video's objects), ``holds`` (is a catalogue position
    among them: a mask over the table), ``made`` the candidates its sources made, by catalogue position
    (``-1 - i`` for position ``i`` among the first: a base is drawn by one strategy, which decides their
    fields), and ``source`` the source of the whole base, once made."""

    def __init__(self, table: _Table, positions: np.ndarray, first: int = 0):
        self.positions = positions
        self.first = first
        self.holds = np.zeros(len(table.values), dtype=bool)
        self.holds[positions] = True
        self.made: dict[int, Candidate] = {}
        self.source: _Source | None = None  # the source of the whole base (:meth:`_Source.of_table`)


def _absent_texts(view: ClipView) -> dict[str, str]:
    """Option texts of entities absent from a clip, by value, kept with the catalogue: a clip's own words
    name only what the clip holds (:mod:`.kinds` renders a noun or an action from its narrations only when
    they have it), so an absent entity's text is the same in every clip and is rendered once."""
    return view.catalogue.derived("absent_texts", lambda cat: {})


def _indexed(view: ClipView, listed: list[tuple]) -> tuple[list[tuple], Callable, np.ndarray]:
    """(value, ...) entities, where a value stands among them (a list: absent objects may list one twice)
    and their corpus frequencies. Lists run to thousands: the first and the last place of each value are
    two dicts made at C speed, and only a value standing in more than one place is looked for between them."""
    values = [e[0] for e in listed]
    last = dict(zip(values, range(len(values))))
    first = dict(zip(reversed(values), range(len(values) - 1, -1, -1)))

    def where(value: str) -> list[int]:
        i = first.get(value)
        if i is None:
            return []
        j = last[value]
        return [i] if i == j else [k for k in range(i, j + 1) if values[k] == value]

    frequency = view.catalogue.frequency
    return listed, where, np.array([frequency.get(v, 0) for v in values], dtype=np.int64)


def _deleted(a: np.ndarray, at) -> np.ndarray:
    """``np.delete(a, at)`` for a 1-d array and non-negative positions (repeats deleted once), without
    ``np.delete``'s argument handling, which costs more than the deletion on pools of a few thousand."""
    keep = np.empty(len(a), dtype=bool)
    keep.fill(True)  # (``np.ones`` is these two calls behind a Python function, which costs more than they do)
    keep[at] = False
    return a[keep]


def _found(ascending: np.ndarray, values: list[int]) -> np.ndarray:
    """Where ``values`` stand in the ascending array of distinct ints (those it holds): ``np.isin``'s hits."""
    values = np.asarray(values)  # (read once, searched by the method: ``np.searchsorted`` is a wrapper of it)
    at = ascending.searchsorted(values)
    inside = at < len(ascending)
    return at[inside][ascending[at[inside]] == values[inside]]


def _absent_positions(view: ClipView, kind: str, t: _Table) -> np.ndarray:
    """Catalogue positions of the entities of ``kind`` absent from the clip (ascending), once per view."""
    if kind == "noun":
        mask = _without(len(t.keys), t.by_key, view.present_noun_classes)
    elif kind in ("action", "purpose"):
        mask = (_without(len(t.codes), t.by_code, [_code(p) for p in view.present_actions])
                & _without(len(t.nouns), t.by_noun, view.present_noun_classes))
    else:  # activity: has objects, is not the window's own, none of its objects moved in the clip
        mask = t.has_objects.copy()
        for label in _window_labels(view):
            i = t.position.get(f"activity:{label}")
            if i is not None:
                mask[i] = False
        mask[_placed(t.by_object, view.present_objects)] = False
    return np.flatnonzero(mask)


def _window_labels(view: ClipView) -> set:
    """The labels of the window's own activities (the ``label`` column's values, read from the records)."""
    return {r.label for r in view.activity_records}


def _absent_objects(view: ClipView, t: _Table) -> tuple[np.ndarray, int]:
    """Catalogue positions of the objects absent from the clip, in the order they are offered, and how many
    lead as "moved elsewhere in the video" (once per view). An absent object must not be another name for
    something moved in the clip ("bottle of dishwashing liquid" vs "dishwashing soap bottle"): noun classes
    are compared. Objects of the same video come first (plausible in this kitchen); when they are fewer
    than 12, every absent object of the catalogue follows, the same video's again among them."""
    mask = np.ones(len(t.values), dtype=bool)
    mask[_placed(t.by_class, {object_class(view.catalogue, n) for n in view.present_objects})] = False
    for name in view.present_objects:
        i = t.position.get(f"object:{name}")
        if i is not None:
            mask[i] = False
    same = t.by_video.get(view.clip.video_id, np.zeros(0, dtype=np.int64))
    same = same[mask[same]]
    if len(same) >= 12:
        return same, len(same)
    return np.concatenate([same, np.flatnonzero(mask)]), len(same)


def _absent(view: ClipView, draft) -> _Source | list[Candidate]:
    cat = view.catalogue
    kind = draft.kind
    if kind in ("noun", "action", "purpose", "activity"):
        t = cat.derived("distractor_tables", _tables)[kind]
        base = view.memo(f"absent_positions:{kind}", lambda: _Base(t, _absent_positions(view, kind, t)))
        return _Source.of_table(view, t, base, draft, "absent_from_clip")
    if kind == "object":
        t = cat.derived("distractor_tables", _tables)["object"]
        base = view.memo("absent_positions:object", lambda: _Base(t, *_absent_objects(view, t)))
        return _Source.of_table(view, t, base, draft, "absent_from_clip", first_note="moved elsewhere in the video")
    if kind != "sound":
        return []
    return _Source.of_entities(view, "absent:sound", lambda: _absent_sounds(view), draft,
                               "absent_from_clip", False, _absent_texts(view))


def _absent_sounds(view: ClipView) -> list[tuple[str, None, str]]:
    """(value, rows, note) of the sound classes absent from the clip, in catalogue order (they depend on
    the clip only: worked out once per view, made into candidates per draft)."""
    return [(f"sound:{c}", None, "no segment of this class in the window") for c in view.catalogue.sound_classes
            if c not in view.present_sound_classes and c not in view.possibly_heard]


def _other_moments(view: ClipView, draft) -> _Source:
    kind = draft.kind
    key_class = None
    if kind == "object":  # other names for the key's thing are not offered: its noun class keys the memo
        key_class = object_class(view.catalogue, CandidateValue.parse(draft.answer.value).payload)
    return _Source.of_entities(view, f"other_moments:{kind}:{key_class}", lambda: _moment_entities(view, kind, key_class),
                               draft, "same_clip_other_moments", True)


def _moment_entities(view: ClipView, kind: str, key_class: str | None) -> list[tuple[str, list[str], str]]:
    """(value, rows, note) of the entities of ``kind`` that occur in the clip, in the order they are offered;
    for objects, those of the key's noun class left out (they depend on the clip, and for objects on the
    key's noun class: worked out once per view and class, made into candidates per draft; the clip's own
    entities and their rows, once per view)."""
    listed, classes = view.memo(f"moment_entities:{kind}", lambda: _clip_entities(view, kind))
    if kind != "object":
        return listed
    return [e for e, c in zip(listed, classes) if c != key_class]


def _clip_entities(view: ClipView, kind: str) -> tuple[list[tuple[str, list[str], str]], list[str] | None]:
    """(value, rows, note) of the entities of ``kind`` that occur in the clip, in the order they are offered,
    and for objects the noun class of each (:func:`_moment_entities` leaves the key's out)."""
    values: list[str] = []
    classes = None
    if kind == "noun":
        present = dict.fromkeys(int(r.noun_class) for r in view.narration_records if not _missing(r.noun_class))
        values = [f"noun:{c}" for c in present]
    elif kind in ("action", "purpose"):
        values = [f"{kind}:{v}:{n}" for v, n in sorted(view.present_actions)]
    elif kind == "object":
        names = [n for n in sorted(view.present_objects) if not is_placeholder_name(n)]
        values = [f"object:{n}" for n in names]
        classes = [object_class(view.catalogue, n) for n in names]
    elif kind == "sound":
        values = [f"sound:{c}" for c in sorted(view.present_sound_classes)]
    return [(value, rows_where(view, value), "occurs in the clip, not at the cued moment") for value in values], classes


def _shares_objects(view: ClipView, draft) -> _Source:
    t = view.catalogue.derived("distractor_tables", _tables)["activity"]
    base = view.memo("shares_objects", lambda: _Base(t, _sharing_activities(view, t)))

    def note(i: int) -> str:
        return "shares objects: " + ", ".join(sorted(t.objects[i] & view.present_objects)[:4])

    return _Source.of_table(view, t, base, draft, "shares_objects", True, note)


def _sharing_activities(view: ClipView, t: _Table) -> np.ndarray:
    """Catalogue positions (ascending) of the activity labels, not the window's own, whose objects are moved
    in the clip (they depend on the clip only: worked out once per view, made into candidates per draft,
    each noted with the objects it shares when drawn)."""
    window = [t.position[f"activity:{label}"] for label in _window_labels(view) if f"activity:{label}" in t.position]
    sharing = {i for name in view.present_objects for i in t.by_object.get(name, [])}.difference(window)
    return np.array(sorted(sharing), dtype=np.int64)


def _recipe_steps(view: ClipView, draft) -> list[Candidate]:
    recipe = draft.params["recipe_key"]
    groups: dict[str, list] = {}
    for r in view.step_records:
        if r.recipe_key == recipe and not _missing(r.step_id):
            groups.setdefault(r.step_id, []).append(r)
    out = []
    for step_id in sorted(groups):
        group = groups[step_id]
        value = f"step:{step_id}"
        if value in draft.exclude:
            continue
        out.append(Candidate(value, "", "same_recipe_other_steps", any(bool(r.in_window) for r in group),
                             [f"recipe_step:{r.row_id}" for r in group], "another step of the same recipe"))
    return out


def _counts(view: ClipView, draft) -> list[Candidate]:
    n = int(CandidateValue.parse(draft.answer.value).payload)
    near = sorted({k for k in range(max(1, n - 3), n + 4) if k != n}, key=lambda k: (abs(k - n), k))
    return [Candidate(f"count:{k}", str(k), "other_counts", None, [], "a nearby count") for k in near]


def option_texts(catalogue) -> OptionTexts:
    """The catalogue's :class:`.options.OptionTexts` (one per catalogue: its texts' words, read once)."""
    return catalogue.derived("option_texts", lambda cat: OptionTexts())


POOLS: dict[str, Callable] = {
    "absent_from_clip": _absent,
    "same_clip_other_moments": _other_moments,
    "shares_objects": _shares_objects,
    "same_recipe_other_steps": _recipe_steps,
    "other_counts": _counts,
}


RULES = ("exchangeable", "uniform_rank", "uniform")
# Strategies whose key and distractors are the same kind of thing drawn from the same place (what the clip
# holds at its moments): under the ``exchangeable`` rule they draw uniformly, the subtype's other answers first.
EXCHANGEABLE = ("same_clip_other_moments",)
N_DISTRACTORS = 3


@dataclass
class Drawn:
    """A strategy's draw for one draft: candidates (the chosen ones first), how many the strategy offered,
    and why no option set could be drawn ("" when one was)."""

    candidates: list[Candidate]
    offered: int
    shortfall: str = ""


def pool(strategy: str, view: ClipView, draft, rng=None, limit: int = 12, rule: str = "exchangeable",
         peers: frozenset[str] = frozenset()) -> Drawn:
    """Wrong-option candidates the strategy offers for a draft (answer excluded), rendered, the
    :data:`N_DISTRACTORS` chosen ones first, up to ``limit`` in all; and how many the strategy offered.

    A candidate whose text clashes with the key's or with a candidate already taken (the same entity, or
    nested: :func:`.options.clash`) is skipped. The ``rule`` (:data:`RULES`) says how the three are drawn:

    - ``uniform_rank``: matched to the key's corpus frequency — three exactly as frequent as the key when
      the pool has them (a frequency prior then has nothing to go on), else stratified around it: a seeded
      draw says how many of the three are more frequent than the key (0–3, uniformly) and the rest are less
      frequent, so the key's frequency rank among the options is uniform and a prior that picks the most
      or the least frequent option is at chance. When the drawn rank cannot be filled from the strategy's
      own pool, another rank is tried in a seeded order; when none can, or (``absent_from_clip``, whose
      pool is the whole catalogue) when not every rank could be filled — the key is among the three most
      or least frequent of its kind, and keeping only its lucky draws would favour the prior — no option
      set is drawn (``shortfall`` says why; the question is dropped with that reason).
    - ``exchangeable`` (the default): ``uniform_rank`` for every strategy but the clip's own pools
      (:data:`EXCHANGEABLE`). There the key and the distractors are things the clip holds at its moments,
      and what makes a text prior useless is that, given the four options, each is equally likely to be the
      key. So the three are drawn uniformly, the subtype's other answers in this clip (``peers``: the keys
      of its other drafts) first, and :func:`.build.build_bank` lets a clip's questions of one subtype take
      turns over their keys (each key as likely to be asked as any other). Rank stratification would be
      wrong there: a small clip pool fills only the ranks the key's place in the clip allows, and falling
      back to those leans the ranks of many questions to the extremes (measured by
      ``bench/option_priors.py``).
    - ``uniform``: a uniform draw from the pool, no frequency matching.

    Kinds without a corpus frequency (counts, recipe steps) draw uniformly under every rule.
    Only the candidates kept are rendered: absent-from-clip pools hold thousands of entities."""
    if strategy not in POOLS:
        raise ValueError(f"unknown distractor strategy {strategy!r} (known: {', '.join(POOLS)})")
    if rule not in RULES:
        raise ValueError(f"unknown distractor rule {rule!r} (known: {', '.join(RULES)})")
    peers_first = rule == "exchangeable" and strategy in EXCHANGEABLE
    if rule == "exchangeable" and not peers_first:
        rule = "uniform_rank"
    freq = view.catalogue.frequency
    source = offered(strategy, view, draft)
    n = len(source)
    taken: list[Candidate] = []
    taken_at: set[int] = set()

    make = source._make  # (:meth:`_Source.get`, inline: a draw looks at a few candidates of thousands)

    def admit(p: int) -> bool:
        cand = make(p)
        cand.text = cand.text or render(view, cand.value)
        if not beside.join(cand.text):
            return False
        if cand.present is None:
            cand.present = view.present(cand.value)
        taken.append(cand)
        taken_at.add(p)
        return True

    def take(side: Callable[[str, int], Iterable[int]], name: str, want: int) -> bool:
        got = 0
        if want:
            for p in side(name, want):
                if p not in taken_at and admit(p):
                    got += 1
                    if got == want:
                        break
        return got == want

    ranked = rule == "uniform_rank" and has_prior(draft.answer.value)
    if ranked:
        key_f = freq.get(draft.answer.value, 0)
        higher, lower = source.around(key_f)
        # Absent-from-clip pools hold the whole catalogue: a rank they cannot fill means the key is at the
        # corpus's extreme, and another rank would hand the prior the key. Only the clip's own pools retry.
        # Kept only if every rank could be drawn: dropping just the unlucky draws would keep the corpus's
        # most frequent keys exactly when they come out on top. (No draw is needed to know that: the order
        # and the option set below are made only for the pools that go on.)
        if strategy == "absent_from_clip" and n - higher - lower < N_DISTRACTORS and (
                higher < N_DISTRACTORS or lower < N_DISTRACTORS):
            return Drawn([], n, "the key is among the three most or least frequent of its kind: "
                                "no frequency-matched options")
    beside = OptionSet(option_texts(view.catalogue), draft.answer.text,  # the key's text and those taken
                       CandidateValue.parse(draft.answer.value).kind in ENTITY_KINDS)
    order = _positions(n)  # positions in the source; shuffled as the candidates themselves would be
    if rng is not None:
        shuffle(rng, order)
    if ranked:
        # The shuffled positions on each side of the key's frequency, in shuffled order, picked out only for a
        # side a design draws from (most draws try one or two of the three); how many each holds is known
        # already. A side dense enough that a design finds its few in the first few dozen positions is read
        # off the order as it goes (:func:`_scan`); a sparse one of a long pool is picked out at C speed.
        held = {"higher": higher, "equal": n - higher - lower, "lower": lower}
        sides: dict[str, np.ndarray] = {}

        def side(name: str, want: int) -> Iterable[int]:
            if n * want <= held[name] * _SCANNED:
                return _scan(order, source.freq_list(), name, key_f)
            got = sides.get(name)
            if got is None:
                if not sides:
                    # ``np.array(order, dtype=np.int64)``: packed as 64-bit ints first (``np.array`` looks at
                    # every item's type first, at almost three times the instructions on pools of a thousand)
                    shuffled = sides["order"] = np.frombuffer(struct.pack(f"{n}q", *order), dtype=np.int64)
                    sides["freq"] = source.freq[shuffled]
                got = sides[name] = sides["order"][_SIDES[name](sides["freq"], key_f)]
            return _ints(got)

        drawn = int(rng.randrange(N_DISTRACTORS + 1)) if rng is not None else 0
        # Designs, best first: all three as frequent as the key (both priors exactly at chance), then the
        # drawn rank (``drawn`` distractors more frequent, the rest less), then the other ranks in a seeded order.
        others = [k for k in range(N_DISTRACTORS + 1) if k != drawn]
        if rng is not None:
            shuffle(rng, others)
        designs = [{"equal": N_DISTRACTORS}] + [{"higher": k, "lower": N_DISTRACTORS - k} for k in [drawn] + others]
        for design in designs:
            if any(held[name] < want for name, want in design.items()):
                continue  # (it cannot be filled: drawing for it would only make candidates and drop them)
            taken.clear()
            taken_at.clear()
            beside.clear()
            if all(take(side, name, want) for name, want in design.items()):
                break
        else:
            taken.clear()
            return Drawn([], n, "no distractors to place the key at a frequency rank (pool too small)")
    elif peers_first:
        peer = {p: source.value(p) in peers for p in order}  # (values only: no candidate made)
        order = [p for p in order if peer[p]] + [p for p in order if not peer[p]]
    for p in order:
        if len(taken) >= limit:
            break
        if p not in taken_at:
            admit(p)
    return Drawn(taken, n)


# Which side of the key's corpus frequency a candidate's frequency is on (:func:`pool`'s ranked draw).
_SIDES = {"higher": operator.gt, "equal": operator.eq, "lower": operator.lt}
# A side is read off the shuffled order (:func:`_scan`) when a design expects to find its few within this
# many positions (``want`` of ``held`` in ``n``: about ``want * n / held``), else picked out with numpy.
_SCANNED = 64


def _scan(order: list[int], freq: list[int], name: str, f: int) -> Iterator[int]:
    """The positions of ``order`` whose frequency is on side ``name`` of ``f``, in order: what
    ``shuffled[_SIDES[name](freq[shuffled], f)]`` holds, read only as far as a design reads it."""
    if name == "higher":
        return (p for p in order if freq[p] > f)
    if name == "lower":
        return (p for p in order if freq[p] < f)
    return (p for p in order if freq[p] == f)

_RANGE: list[int] = []  # ``list(range(k))`` for the largest pool seen (:func:`_positions`)


def _positions(n: int) -> list[int]:
    """``list(range(n))``, sliced from one such list kept for the purpose: a slice shares its ints, where
    ``range`` makes every int above 256 anew (ten times the cost on pools of a thousand)."""
    global _RANGE
    if n > len(_RANGE):
        _RANGE = list(range(max(n, 2 * len(_RANGE))))
    return _RANGE[:n]


def _ints(a: np.ndarray, first: int = 8):
    """``a.tolist()``'s ints one by one, the rest converted only if the first ``first`` do not do: a draw
    looks at a few positions of a side that may hold thousands."""
    yield from a[:first].tolist()
    if len(a) > first:
        yield from a[first:].tolist()


def offered(strategy: str, view: ClipView, draft) -> _Source:
    """The strategy's candidates for a draft, answer and exclusions left out (made only when looked at)."""
    source = POOLS[strategy](view, draft)
    if not isinstance(source, _Source):
        source = _Source.of_list(source, draft, view.catalogue.frequency)
    return source


def has_prior(value: str) -> bool:
    """Does the corpus give this kind of value a frequency (a text-only prior)? Not counts or steps."""
    return CandidateValue.parse(value).kind not in ("count", "step")
