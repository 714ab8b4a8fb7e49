"""The entity catalogue: every candidate a distractor may be drawn from, with the rows that justify it, built once
from all annotations. ``description_classes`` keeps which sound classes a free-text description may be, so such
classes are never claimed absent from a window that holds one (docs/design/annotations.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields

import numpy as np
import pandas as pd

from .readers import Annotations
from .validation import is_placeholder_name
from .language import SOUND_CUES, action_phrase, capitalise, cue_phrase, noun_display

COMPATIBLE_SHARE = 0.02
#: The stored document's layout (:meth:`Catalogue.to_json`); raised when it changes.
CATALOGUE_VERSION = 1
_CLASS_ID_KEYED = ("nouns", "noun_keys", "verb_keys")


@dataclass
class Catalogue:
    nouns: dict[int, dict] = field(default_factory=dict)          # noun_class -> {name, rows}
    actions: dict[tuple[int, int], dict] = field(default_factory=dict)  # (verb_class, noun_class) -> {text, nouns, rows}
    sound_classes: list[str] = field(default_factory=list)
    description_classes: dict[str, set[str]] = field(default_factory=dict)
    activities: dict[str, dict] = field(default_factory=dict)     # label -> {objects, rows}
    objects: dict[str, dict] = field(default_factory=dict)         # object name -> {rows, videos}
    noun_synonyms: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # vocabulary -> key -> instances
    verb_synonyms: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    noun_keys: dict[int, str] = field(default_factory=dict)       # epic_100 noun class id -> key
    object_classes: dict[str, str] = field(default_factory=dict)  # hd_epic noun instance -> class key
    placeholder_objects: list[str] = field(default_factory=list)  # track names like "track 87"
    objects_by_video: dict[str, list[str]] = field(default_factory=dict)
    frequency: dict[str, int] = field(default_factory=dict)     # candidate value -> rows in the dataset (answer priors)
    most_common: dict[str, str] = field(default_factory=dict)   # candidate kind -> most frequent entity's name
    verb_keys: dict[int, str] = field(default_factory=dict)
    # Structures derived from the catalogue by its users (rendered option texts, their word sets, per-kind
    # value arrays), built once on first use and dropped with the catalogue: never stored, never compared.
    _derived: dict = field(default_factory=dict, repr=False, compare=False)

    def noun_instances(self, key: str, vocabulary: str = "epic_100") -> list[str]:
        return self.noun_synonyms.get(vocabulary, {}).get(key, [])

    def derived(self, name: str, build):
        """The structure ``name`` derived from this catalogue: ``build(self)`` on first use, then kept with it."""
        try:
            return self._derived[name]
        except KeyError:
            value = self._derived[name] = build(self)
            return value

    def to_json(self) -> str:
        """The catalogue as one JSON document (what :meth:`from_json` reads back to an equal catalogue):
        action keys as ``[verb_class, noun_class, value]`` rows, class-id keys as strings, sets as sorted lists."""
        state = {f.name: getattr(self, f.name) for f in fields(self) if f.compare}
        state["actions"] = [[verb, noun, value] for (verb, noun), value in self.actions.items()]
        state["description_classes"] = {k: sorted(v) for k, v in self.description_classes.items()}
        return json.dumps({"catalogue_version": CATALOGUE_VERSION, **state}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> "Catalogue":
        state = json.loads(text)
        version = state.pop("catalogue_version", None)
        if version != CATALOGUE_VERSION:
            raise ValueError(f"entity catalogue document version {version!r}, expected {CATALOGUE_VERSION}: "
                             "materialize entity_catalogue again")
        state["actions"] = {(verb, noun): value for verb, noun, value in state["actions"]}
        for name in _CLASS_ID_KEYED:
            state[name] = {int(k): v for k, v in state[name].items()}
        state["description_classes"] = {k: set(v) for k, v in state["description_classes"].items()}
        return cls(**state)


def _factorized(*columns: pd.Series) -> tuple[list[np.ndarray], list]:
    """The rows of ``columns`` numbered by value, in one numbering shared by all of them (a null: -1), and
    the values in that numbering: the keys ``groupby(..., sort=True)`` gives, in its order."""
    codes, uniques = pd.factorize(pd.concat(columns, ignore_index=True), sort=True)
    return np.split(codes, np.cumsum([len(c) for c in columns])[:-1]), uniques.tolist()


def _groups(codes: np.ndarray, n_groups: int) -> tuple[list[int], list[int]]:
    """Rows grouped by ``codes`` (group numbers; -1: no group) as ``groupby`` iterates them: the row
    positions group after group, each group's rows in table order, and where each group's rows start
    (``bounds[g]:bounds[g + 1]``)."""
    order = np.argsort(codes, kind="stable")
    order = order[codes[order] >= 0]
    return order.tolist(), np.searchsorted(codes[order], np.arange(n_groups + 1)).tolist()


def _head(order: list[int], bounds: list[int], g: int, n: int = 3) -> list[int]:
    """The positions of group ``g``'s first ``n`` rows (``group.head(n)``) in :func:`_groups`' order."""
    return order[bounds[g]:min(bounds[g] + n, bounds[g + 1])]


def _distinct(codes: np.ndarray, values: np.ndarray, n_groups: int, n_values: int) -> list[list[int]]:
    """The distinct value numbers of each group, ascending (values numbered in sorted order make this a
    group's ``sorted(set(values))``); a row without a group or a value counts for none."""
    keep = (codes >= 0) & (values >= 0)
    group, value = np.divmod(np.unique(codes[keep].astype(np.int64) * n_values + values[keep]), n_values)
    bounds = np.searchsorted(group, np.arange(n_groups + 1)).tolist()
    value = value.tolist()
    return [value[bounds[g]:bounds[g + 1]] for g in range(n_groups)]


def _overlapping(a_video: np.ndarray, a_start: np.ndarray, a_stop: np.ndarray, b_video: np.ndarray,
                 b_start: np.ndarray, b_stop: np.ndarray, n_videos: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair (row of a, row of b) of one video whose spans overlap (what merging on the video and
    filtering ``b.start < a.stop and b.stop > a.start`` keeps), without building the rows of the merge."""
    b_order, b_bounds = _groups(b_video, n_videos)
    b_order, b_bounds = np.asarray(b_order, dtype=np.int64), np.asarray(b_bounds, dtype=np.int64)
    has = a_video >= 0
    lo = np.where(has, b_bounds[np.where(has, a_video, 0)], 0)
    sizes = np.where(has, b_bounds[np.where(has, a_video, 0) + 1], 0) - lo
    a = np.repeat(np.arange(len(a_video)), sizes)
    b = b_order[np.repeat(lo - (np.cumsum(sizes) - sizes), sizes) + np.arange(int(sizes.sum()))]
    hit = (b_start[b] < a_stop[a]) & (b_stop[b] > a_start[a])
    return a[hit], b[hit]


def _synonyms(cat: Catalogue, ann: Annotations) -> None:
    """Synonym lists of every vocabulary (noun / verb class ``instances``) and the EPIC-KITCHENS-100 class keys."""
    for (vocabulary, kind), group in ann.vocabulary.groupby(["vocabulary", "kind"]):
        target = cat.noun_synonyms if kind == "noun" else cat.verb_synonyms
        target[vocabulary] = {k: list(v) for k, v in zip(group["key"], group["instances"])}
        if vocabulary == "epic_100":
            keys = dict(zip(group["class_id"].astype(int), group["key"]))
            if kind == "noun":
                cat.noun_keys = keys
            else:
                cat.verb_keys = keys
    # HD-EPIC's vocabularies extend EPIC-KITCHENS-100's (the same keys under the same ids, and more classes:
    # annotations.hd_epic_streams), so its narrations' class ids are of one space: the added classes' keys.
    for (vocabulary, kind), group in ann.vocabulary.groupby(["vocabulary", "kind"]):
        if vocabulary == "hd_epic":
            keys = cat.noun_keys if kind == "noun" else cat.verb_keys
            for class_id, key in zip(group["class_id"].astype(int), group["key"]):
                keys.setdefault(class_id, key)


def _sound_classes(cat: Catalogue, ann: Annotations) -> None:
    """The sound classes, and the classes each free-text description was categorised as (its share of at
    least :data:`COMPATIBLE_SHARE`)."""
    cat.sound_classes = sorted(SOUND_CUES)
    sounds = ann.sounds[ann.sounds["categorised"]]
    if len(sounds):
        shares = sounds.groupby("description")["sound_class"].value_counts(normalize=True)
        for (description, sound_class), share in shares.items():
            if share >= COMPATIBLE_SHARE:
                cat.description_classes.setdefault(description, set()).add(sound_class)


def _object_classes(cat: Catalogue) -> None:
    """HD-EPIC noun instance (lower case) -> its class key, the first class listing it."""
    cat.object_classes = {}
    for key, instances in cat.noun_synonyms.get("hd_epic", {}).items():
        for inst in instances:
            cat.object_classes.setdefault(str(inst).lower(), key)


def build_catalogue(ann: Annotations) -> Catalogue:
    """The catalogue of ``ann``, built on whole columns: rows are numbered by their key in the sorted order
    ``DataFrame.groupby`` uses (keys ascending, null keys dropped, rows in table order within a group), so
    each entity's first rows, distinct videos and objects come from a few array operations and only the
    entities themselves are visited in Python. It equals the per-group pandas construction, dictionary
    order included (``annotations/test_catalogue.py`` keeps that construction and compares)."""
    cat = Catalogue()
    _synonyms(cat, ann)

    narr = ann.narrations[ann.narrations["labelled"]]
    narration_ids = narr["narration_id"].tolist()
    (nouns,), noun_classes = _factorized(narr["noun_class"])
    order, bounds = _groups(nouns, len(noun_classes))
    # The option text is the noun as narrators most often wrote it ("honey"), not the class key
    # ("spreads"); the class key and its instances are what scorers match against. Most often: the
    # largest count, among equal counts the first noun in sorted order (what ``Series.mode().iat[0]`` is).
    counts = narr.groupby(["noun_class", "noun"], sort=True).size()
    modes = dict(counts.groupby(level=0, sort=True).idxmax().tolist())
    for g, noun_class in enumerate(noun_classes):
        cat.nouns[int(noun_class)] = {"name": noun_display(modes[noun_class]),
                                      "key": cat.noun_keys.get(int(noun_class)) or modes[noun_class],
                                      "rows": [narration_ids[i] for i in _head(order, bounds, g)]}
    (verbs,), verb_classes = _factorized(narr["verb_class"])
    # (verb, noun) pairs numbered in sorted order; a row lacking either class has none
    pair = np.where((verbs >= 0) & (nouns >= 0), verbs.astype(np.int64) * len(noun_classes) + nouns, -1)
    pairs, pair = np.unique(pair, return_inverse=True)
    if len(pairs) and pairs[0] < 0:
        pairs, pair = pairs[1:], pair - 1
    order, bounds = _groups(pair.reshape(-1), len(pairs))
    narrations, all_nouns, verb_words = narr["narration"].tolist(), narr["all_nouns"].tolist(), narr["verb"].tolist()
    for g, code in enumerate(pairs.tolist()):
        first = order[bounds[g]]
        v, n = divmod(code, len(noun_classes))
        cat.actions[(int(verb_classes[v]), int(noun_classes[n]))] = {
            "narration": narrations[first], "nouns": list(all_nouns[first]), "verb": verb_words[first],
            "rows": [narration_ids[i] for i in _head(order, bounds, g)],
        }

    _sound_classes(cat, ann)

    tracks, acts = ann.object_tracks, ann.activities
    (names,), object_names = _factorized(tracks["object_name"])
    placeholder = np.array([is_placeholder_name(n) for n in object_names] + [False], dtype=bool)  # [-1]: null
    cat.placeholder_objects = [n for n, p in zip(object_names, placeholder) if p]
    kept = np.flatnonzero(~placeholder[names])
    names = np.where(placeholder[names], -1, names)  # placeholder tracks are no object's rows
    _object_classes(cat)
    (track_videos, act_videos), videos = _factorized(tracks["video_id"], acts["video_id"])
    order, bounds = _groups(names, len(object_names))
    track_ids = tracks["track_id"].tolist()
    videos_of = _distinct(names, track_videos, len(object_names), len(videos))
    for g, name in enumerate(object_names):
        if bounds[g] == bounds[g + 1]:
            continue
        seen_in = [videos[v] for v in videos_of[g]]
        cat.objects[name] = {"rows": [f"object_track:{track_ids[i]}" for i in _head(order, bounds, g)],
                             "videos": seen_in, "class": object_class(cat, name)}
        for video in seen_in:
            cat.objects_by_video.setdefault(video, []).append(name)
    (labels,), activity_labels = _factorized(acts["label"])
    if len(acts) and len(kept):
        # the objects moved during an activity: the tracks of its video overlapping its span
        act, track = _overlapping(act_videos, acts["start_s"].to_numpy(dtype=float), acts["stop_s"].to_numpy(dtype=float),
                                  np.where(names >= 0, track_videos, -1), tracks["start_s"].to_numpy(dtype=float),
                                  tracks["stop_s"].to_numpy(dtype=float), len(videos))
        objects_of = _distinct(labels[act], names[track], len(activity_labels), len(object_names))
    else:
        objects_of = [[] for _ in activity_labels]
    order, bounds = _groups(labels, len(activity_labels))
    activity_ids = acts["activity_id"].tolist()
    videos_of = _distinct(labels, act_videos, len(activity_labels), len(videos))
    for g, label in enumerate(activity_labels):
        cat.activities[label] = {"objects": [object_names[o] for o in objects_of[g]],
                                 "rows": [activity_ids[i] for i in _head(order, bounds, g)],
                                 "videos": [videos[v] for v in videos_of[g]]}
    _priors(cat, ann)
    return cat


def _priors(cat: Catalogue, ann: Annotations) -> None:
    """Answer priors (used by the ``blind`` responder): how often each entity occurs in the dataset."""
    narr = ann.narrations[ann.narrations["labelled"]]
    for noun_class, n in narr["noun_class"].value_counts().items():
        cat.frequency[f"noun:{int(noun_class)}"] = int(n)
    for (v, n), count in narr.groupby(["verb_class", "noun_class"]).size().items():
        cat.frequency[f"action:{int(v)}:{int(n)}"] = int(count)
        cat.frequency[f"purpose:{int(v)}:{int(n)}"] = int(count)
    sounds = ann.sounds[ann.sounds["categorised"]]
    for c, n in sounds["sound_class"].value_counts().items():
        cat.frequency[f"sound:{c}"] = int(n)
    for name, n in ann.object_tracks["object_name"].value_counts().items():
        if name in cat.objects:
            cat.frequency[f"object:{name}"] = int(n)
    for label, n in ann.activities["label"].value_counts().items():
        cat.frequency[f"activity:{label}"] = int(n)
    best: dict[str, tuple[int, str]] = {}
    for value, n in cat.frequency.items():
        kind = value.split(":", 1)[0]
        if n > best.get(kind, (-1, ""))[0]:
            best[kind] = (n, value)
    for kind, (_, value) in best.items():
        rest = value.split(":", 1)[1]
        if kind == "noun":
            cat.most_common[kind] = cat.nouns[int(rest)]["name"]
        elif kind in ("action", "purpose"):
            pair = tuple(int(x) for x in rest.split(":"))
            cat.most_common[kind] = action_text(cat, pair, "gerund" if kind == "action" else "infinitive")
        elif kind == "sound":
            cat.most_common[kind] = capitalise(cue_phrase(rest))
        else:
            cat.most_common[kind] = rest
    cat.most_common["count"] = "2"


def object_class(cat: Catalogue, name: str) -> str:
    """The HD-EPIC noun class of an object name (exact instance, else its last word), else the name."""
    name = str(name).lower()
    if name in cat.object_classes:
        return cat.object_classes[name]
    last = name.split()[-1] if name.split() else name
    return cat.object_classes.get(last, name)


def action_text(cat: Catalogue, pair: tuple[int, int], form: str = "gerund") -> str:
    entry = cat.actions.get(pair)
    if not entry:
        return ""
    return action_phrase(entry["narration"], entry["nouns"], form, entry.get("verb"))
