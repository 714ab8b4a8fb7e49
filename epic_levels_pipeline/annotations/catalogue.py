"""The entity catalogue: every candidate a distractor may be drawn from, with the rows that justify it.

Built once from all loaded annotations (not per clip): noun and action candidates from EPIC-KITCHENS-100
narrations, sound classes from EPIC-SOUNDS, activity labels with the objects moved during them and object
names from HD-EPIC, and synonym lists (noun / verb class ``instances``) used by scorers.

``description_classes`` records which sound classes each free-text ``description`` was categorised as
(at least :data:`COMPATIBLE_SHARE` of that description's categorised rows): a not-categorised row with
description ``clang / clatter`` *might* be any collision class, so such classes are never claimed absent
from, or counted in, a window that holds one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .readers import Annotations
from .validation import is_placeholder_name
from .language import SOUND_CUES, action_phrase, capitalise, cue_phrase, noun_display

COMPATIBLE_SHARE = 0.02


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
    # value arrays), built once on first use and dropped with the catalogue: never pickled, never compared.
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

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_derived"] = {}
        return state

    def __setstate__(self, state: dict) -> None:
        state.setdefault("_derived", {})
        self.__dict__.update(state)


def build_catalogue(ann: Annotations) -> Catalogue:
    cat = Catalogue()
    vocab = ann.vocabulary
    for (vocabulary, kind), group in vocab.groupby(["vocabulary", "kind"]):
        target = cat.noun_synonyms if kind == "noun" else cat.verb_synonyms
        target[vocabulary] = {k: list(v) for k, v in zip(group["key"], group["instances"])}
        if vocabulary == "epic_100":
            keys = dict(zip(group["class_id"].astype(int), group["key"]))
            if kind == "noun":
                cat.noun_keys = keys
            else:
                cat.verb_keys = keys

    narr = ann.narrations[ann.narrations["labelled"]]
    for noun_class, group in narr.groupby("noun_class"):
        # The option text is the noun as narrators most often wrote it ("honey"), not the class key
        # ("spreads"); the class key and its instances are what scorers match against.
        key = cat.noun_keys.get(int(noun_class)) or group["noun"].mode().iat[0]
        cat.nouns[int(noun_class)] = {"name": noun_display(group["noun"].mode().iat[0]), "key": key,
                                      "rows": group["narration_id"].head(3).tolist()}
    for (verb_class, noun_class), group in narr.groupby(["verb_class", "noun_class"]):
        first = group.iloc[0]
        cat.actions[(int(verb_class), int(noun_class))] = {
            "narration": first["narration"], "nouns": list(first["all_nouns"]), "verb": first["verb"],
            "rows": group["narration_id"].head(3).tolist(),
        }

    cat.sound_classes = sorted(SOUND_CUES)
    sounds = ann.sounds[ann.sounds["categorised"]]
    if len(sounds):
        shares = sounds.groupby("description")["sound_class"].value_counts(normalize=True)
        for (description, sound_class), share in shares.items():
            if share >= COMPATIBLE_SHARE:
                cat.description_classes.setdefault(description, set()).add(sound_class)

    tracks = ann.object_tracks
    cat.placeholder_objects = sorted({n for n in tracks["object_name"] if is_placeholder_name(n)})
    tracks = tracks[~tracks["object_name"].map(is_placeholder_name).astype(bool)]
    hd_nouns = cat.noun_synonyms.get("hd_epic", {})
    cat.object_classes = {}
    for key, instances in hd_nouns.items():
        for inst in instances:
            cat.object_classes.setdefault(str(inst).lower(), key)
    for name, group in tracks.groupby("object_name"):
        videos = sorted(set(group["video_id"]))
        cat.objects[name] = {"rows": [f"object_track:{r}" for r in group["track_id"].head(3)], "videos": videos,
                             "class": object_class(cat, name)}
        for video in videos:
            cat.objects_by_video.setdefault(video, []).append(name)
    acts = ann.activities
    if len(acts) and len(tracks):
        merged = acts[["activity_id", "video_id", "label", "start_s", "stop_s"]].merge(
            tracks[["video_id", "object_name", "start_s", "stop_s"]], on="video_id", suffixes=("", "_t"))
        merged = merged[(merged["start_s_t"] < merged["stop_s"]) & (merged["stop_s_t"] > merged["start_s"])]
        objects_of = merged.groupby("label")["object_name"].agg(lambda s: sorted(set(s)))
    else:
        objects_of = pd.Series(dtype=object)
    for label, group in acts.groupby("label"):
        cat.activities[label] = {"objects": list(objects_of.get(label, [])), "rows": group["activity_id"].head(3).tolist(),
                                 "videos": sorted(set(group["video_id"]))}
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
