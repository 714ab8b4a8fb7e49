"""What each distractor strategy (:data:`POOLS`) offers for a draft: a :class:`.candidates.Pool`. A strategy's
base pool depends on the clip only and is made once per view; a draft's pool is the base less the key and the
draft's exclusions."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..annotations.catalogue import is_placeholder_name, object_class
from ..annotations.values import CandidateValue
from .candidates import Pool
from ..records import is_null
from .clip_view import ClipView
from .kinds import rows_where
from .options import OptionTexts

STRATEGIES = ("absent_from_clip", "same_clip_other_moments", "shares_objects", "same_recipe_other_steps", "other_counts")


class Table:
    """One kind's catalogue entities as arrays, in catalogue order, built once per catalogue: values (an
    object array), their corpus frequencies, the rows justifying each (a tuple each), the note of an absent
    one, and what decides presence (``keys``: noun classes; ``codes`` / ``nouns``: action pairs;
    ``objects``: the objects an activity's span moves; ``classes``: an object's noun class), each looked up
    by key in ``by_*``."""

    def __init__(self, values: list[str], rows: list[Sequence[str]], frequency: dict[str, int], note: str):
        self.values = np.array(values, dtype=object)
        self.rows = [tuple(r) for r in rows]  # (immutable: a draw hands them on as they are)
        self.note = note
        self.position = {v: i for i, v in enumerate(values)}
        self.freq = np.array([frequency.get(v, 0) for v in values], dtype=np.int64)
        # each entity's code in the pools of this table (:attr:`.candidates.Pool.codes`): its value's position
        self.codes = np.array([self.position[v] for v in values], dtype=np.int64)


def tables(cat) -> dict[str, Table]:
    """The catalogue's :class:`Table` per kind (made once per catalogue: ``cat.derived``)."""
    f = cat.frequency
    out: dict[str, Table] = {}
    nouns = list(cat.nouns)
    t = out["noun"] = Table([f"noun:{n}" for n in nouns], [[f"narration:{r}" for r in cat.nouns[n]["rows"]] for n in nouns],
                            f, "handled elsewhere, not in this window")
    t.by_key = _places(nouns)
    pairs = list(cat.actions)
    for kind in ("action", "purpose"):
        t = out[kind] = Table([f"{kind}:{v}:{n}" for v, n in pairs],
                              [[f"narration:{r}" for r in cat.actions[p]["rows"]] for p in pairs], f,
                              "done elsewhere, not in this window")
        t.by_code, t.by_noun = _places([_code(p) for p in pairs]), _places([int(p[1]) for p in pairs])
    labels = list(cat.activities)
    t = out["activity"] = Table([f"activity:{label}" for label in labels],
                                [[f"activity:{r}" for r in cat.activities[label]["rows"]] for label in labels], f,
                                "none of its objects is moved in this clip")
    t.objects = [frozenset(cat.activities[label]["objects"]) for label in labels]
    t.has_objects = np.array([bool(o) for o in t.objects], dtype=bool)
    t.by_object = {}
    for i, objects in enumerate(t.objects):
        for name in objects:
            t.by_object.setdefault(name, []).append(i)
    names = list(cat.objects)
    t = out["object"] = Table([f"object:{n}" for n in names], [cat.objects[n]["rows"] for n in names], f,
                              "moved in another video")
    t.by_class = _places([cat.objects[n]["class"] for n in names])
    t.by_video = {video: np.array([t.position[f"object:{n}"] for n in group], dtype=np.int64)
                  for video, group in cat.objects_by_video.items()}
    return out


def _places(keys: list) -> dict:
    """The positions of each key in the list, by key."""
    out: dict = {}
    for i, key in enumerate(keys):
        out.setdefault(key, []).append(i)
    return out


def _cleared(n: int, places: dict, keys) -> np.ndarray:
    """A mask of ``n`` positions, False at every place of the ``keys`` (``places``: :func:`_places`)."""
    mask = np.ones(n, dtype=bool)
    mask[[i for key in keys for i in places.get(key, ())]] = False
    return mask


def _code(pair: tuple[int, int]) -> int:
    return int(pair[0]) * 1_000_003 + int(pair[1])


def absent_texts(view: ClipView) -> dict[str, str]:
    """Option texts of entities absent from a clip, by value, kept with the catalogue: a clip's own words
    name only what the clip holds (:mod:`.kinds` renders a noun or an action from its narrations only when
    they have it), so an absent entity's text is the same in every clip."""
    return view.catalogue.derived("absent_texts", lambda cat: {})


def option_texts(catalogue) -> OptionTexts:
    """The catalogue's :class:`.options.OptionTexts` (one per catalogue: its texts' words, read once)."""
    return catalogue.derived("option_texts", lambda cat: OptionTexts())


def _of_table(table: Table, positions: np.ndarray, strategy: str, present: bool | None, texts: dict | None,
              note_of: Callable[[int], str] | None = None) -> Pool:
    """The pool of a table's entities at ``positions`` (catalogue positions, described by catalogue position)."""
    positions = np.asarray(positions, dtype=np.int64)
    return Pool(strategy, table.values[positions], table.freq[positions], positions, table.rows.__getitem__,
                note_of or (lambda i: table.note), present, texts, table.codes[positions], table.position.get)


def _window_labels(view: ClipView) -> set:
    """The labels of the window's own activities."""
    return {r.label for r in view.activity_records}


def _absent_positions(view: ClipView, kind: str, t: Table) -> np.ndarray:
    """Catalogue positions of the entities of ``kind`` absent from the clip (ascending)."""
    if kind == "noun":
        mask = _cleared(len(t.values), t.by_key, view.present_noun_classes)
    elif kind in ("action", "purpose"):
        mask = (_cleared(len(t.values), t.by_code, [_code(p) for p in view.present_actions])
                & _cleared(len(t.values), t.by_noun, view.present_noun_classes))
    else:  # activity: has objects, is not the window's own, none of its objects moved in the clip
        mask = t.has_objects & _cleared(len(t.values), t.by_object, view.present_objects)
        mask[[t.position[f"activity:{label}"] for label in _window_labels(view) if f"activity:{label}" in t.position]] = False
    return np.flatnonzero(mask)


def _absent_objects(view: ClipView, t: Table, first_note: str) -> Pool:
    """The objects absent from the clip, in the order they are offered. An absent object must not be another
    name for something moved in the clip ("bottle of dishwashing liquid" vs "dishwashing soap bottle"):
    noun classes are compared. Objects of the same video come first (plausible in this kitchen), noted
    ``first_note``; when they are fewer than 12, every absent object of the catalogue follows, the same
    video's again among them."""
    mask = _cleared(len(t.values), t.by_class, {object_class(view.catalogue, n) for n in view.present_objects})
    mask[[t.position[f"object:{n}"] for n in view.present_objects if f"object:{n}" in t.position]] = False
    same = t.by_video.get(view.clip.video_id, np.zeros(0, dtype=np.int64))
    same = same[mask[same]]
    listed = same if len(same) >= 12 else np.concatenate([same, np.flatnonzero(mask)])
    first = len(same)
    return Pool("absent_from_clip", t.values[listed], t.freq[listed], np.arange(len(listed), dtype=np.int64),
                lambda a: t.rows[listed[a]], lambda a: first_note if a < first else t.note, False, absent_texts(view),
                t.codes[listed], t.position.get)


def _absent_base(view: ClipView, kind: str) -> Pool | None:
    cat = view.catalogue
    if kind in ("noun", "action", "purpose", "activity"):
        t = cat.derived("distractor_tables", tables)[kind]
        return _of_table(t, _absent_positions(view, kind, t), "absent_from_clip", False, absent_texts(view))
    if kind == "object":
        t = cat.derived("distractor_tables", tables)["object"]
        return _absent_objects(view, t, "moved elsewhere in the video")
    if kind == "sound":
        values = [f"sound:{c}" for c in cat.sound_classes
                  if c not in view.present_sound_classes and c not in view.possibly_heard]
        return Pool.of("absent_from_clip", values, cat.frequency, [()] * len(values),
                       "no segment of this class in the window", False, absent_texts(view))
    return None


def _absent(view: ClipView, draft) -> Pool:
    return view.memo(f"pool:absent:{draft.kind}", lambda: _absent_base(view, draft.kind) or _empty("absent_from_clip"))


def _empty(strategy: str) -> Pool:
    return Pool.of(strategy, [], {}, [], "")


def _clip_entities(view: ClipView, kind: str) -> tuple[list[str], list[str] | None]:
    """The values of the entities of ``kind`` that occur in the clip, in the order they are offered, and for
    objects the noun class of each (:func:`_other_moments` leaves the key's out)."""
    classes = None
    values: list[str] = []
    if kind == "noun":
        present = dict.fromkeys(int(r.noun_class) for r in view.narration_records if not is_null(r.noun_class))
        values = [f"noun:{c}" for c in present]
    elif kind in ("action", "purpose"):
        values = [f"{kind}:{v}:{n}" for v, n in sorted(view.present_actions)]
    elif kind == "object":
        names = [n for n in sorted(view.present_objects) if not is_placeholder_name(n)]
        values = [f"object:{n}" for n in names]
        classes = [object_class(view.catalogue, n) for n in names]
    elif kind == "sound":
        values = [f"sound:{c}" for c in sorted(view.present_sound_classes)]
    return values, classes


def _other_moments(view: ClipView, draft) -> Pool:
    kind = draft.kind
    key_class = None
    if kind == "object":  # other names for the key's thing are not offered
        key_class = object_class(view.catalogue, CandidateValue.parse(draft.answer.value).payload)

    def build() -> Pool:
        values, classes = view.memo(f"clip_entities:{kind}", lambda: _clip_entities(view, kind))
        if classes is not None:
            values = [v for v, c in zip(values, classes) if c != key_class]
        return Pool.of("same_clip_other_moments", values, view.catalogue.frequency,
                       [rows_where(view, v) for v in values], "occurs in the clip, not at the cued moment", True)

    return view.memo(f"pool:other_moments:{kind}:{key_class}", build)


def _shares_objects(view: ClipView, draft) -> Pool:
    def build() -> Pool:
        t = view.catalogue.derived("distractor_tables", tables)["activity"]
        window = {t.position[f"activity:{label}"] for label in _window_labels(view) if f"activity:{label}" in t.position}
        present = view.present_objects
        sharing = sorted({i for name in present for i in t.by_object.get(name, [])} - window)

        def note(i: int) -> str:  # (reads the clip's objects, not the view: a pool the view keeps refers not back to it)
            return "shares objects: " + ", ".join(sorted(t.objects[i] & present)[:4])

        return _of_table(t, np.array(sharing, dtype=np.int64), "shares_objects", True, None, note)

    return view.memo("pool:shares_objects", build)


def _recipe_steps(view: ClipView, draft) -> Pool:
    recipe = draft.params["recipe_key"]
    groups: dict[str, list] = {}
    for r in view.step_records:
        if r.recipe_key == recipe and not is_null(r.step_id):
            groups.setdefault(r.step_id, []).append(r)
    steps = sorted(groups)
    return Pool.of("same_recipe_other_steps", [f"step:{s}" for s in steps], view.catalogue.frequency,
                   [[f"recipe_step:{r.row_id}" for r in groups[s]] for s in steps], "another step of the same recipe")


def _counts(view: ClipView, draft) -> Pool:
    n = int(CandidateValue.parse(draft.answer.value).payload)
    near = sorted({k for k in range(max(1, n - 3), n + 4) if k != n}, key=lambda k: (abs(k - n), k))
    return Pool.of("other_counts", [f"count:{k}" for k in near], view.catalogue.frequency, [()] * len(near),
                   "a nearby count")


POOLS: dict[str, Callable[[ClipView, object], Pool]] = {
    "absent_from_clip": _absent,
    "same_clip_other_moments": _other_moments,
    "shares_objects": _shares_objects,
    "same_recipe_other_steps": _recipe_steps,
    "other_counts": _counts,
}


def offered(strategy: str, view: ClipView, draft) -> Pool:
    """The strategy's candidates for a draft, answer and exclusions left out (nothing rendered yet)."""
    return POOLS[strategy](view, draft).without([draft.answer.value, *draft.exclude])
