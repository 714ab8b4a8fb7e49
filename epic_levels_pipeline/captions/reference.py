"""The reference structure of a clip, computed from its annotation rows: sounds, narrations and their noun classes on
``epic_sounds``; objects and their movements on ``hd_epic``. Every unit keeps its source row, and every label is
text a caption can give back (:func:`validate_structure`). The rules: docs/design/captions.md."""

from __future__ import annotations

import pandas as pd

from .labels import normalise
from .sources import Catalogue, Clip, is_placeholder_name, object_class
from .structure import Structure, Unit, overlap_s

NOT_CATEGORISED = "(not categorised)"   # a not-categorised sound segment with a blank description
UNLABELLED = "(unlabelled)"             # an unlabelled narration with no text


def _rel(clip: Clip, t) -> float:
    return round(float(t) - clip.start_s, 3)


def _shown(text, placeholder: str) -> str:
    """``text`` as a unit's label, or ``placeholder`` when it is missing or has nothing a caption could
    give back (empty after normalisation: blank upstream descriptions)."""
    return str(text) if isinstance(text, str) and normalise(text) else placeholder


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(["start_clipped_s", "stop_clipped_s", "row_id"], kind="stable")


def reference_structure(clip: Clip, rows: pd.DataFrame, catalogue: Catalogue) -> Structure:
    """The reference caption of ``clip`` from its ``clip_annotations`` rows."""
    if clip.dataset == "epic_sounds":
        return _epic_sounds(clip, rows, catalogue)
    return _hd_epic(clip, rows, catalogue)


def _epic_sounds(clip: Clip, rows: pd.DataFrame, cat: Catalogue) -> Structure:
    s = Structure("epic_sounds", clip.duration_s)
    sounds = _sorted(rows[rows["stream"] == "sound"])
    for i, r in enumerate(sounds.itertuples(index=False), start=1):
        categorised = isinstance(r.sound_class, str) and bool(normalise(r.sound_class))
        s.events.append(Unit("event", f"E{i}", _rel(clip, r.start_clipped_s), _rel(clip, r.stop_clipped_s),
                             label=r.sound_class if categorised else _shown(r.description, NOT_CATEGORISED),
                             sound_class=r.sound_class if categorised else None, description=r.description,
                             source_stream="sound", source_id=str(r.row_id)))
    narr = _sorted(rows[rows["stream"] == "narration"])
    ref_ids: dict[int, str] = {}
    noun_names: dict[int, str] = {}
    action_nouns: list[list[int]] = []
    for i, r in enumerate(narr.itertuples(index=False), start=1):
        labelled = bool(r.labelled) if not pd.isna(r.labelled) else False
        verb_key = cat.verb_keys.get(int(r.verb_class)) if labelled and not pd.isna(r.verb_class) else None
        s.actions.append(Unit("action", f"A{i}", _rel(clip, r.start_clipped_s), _rel(clip, r.stop_clipped_s),
                              label=_shown(r.narration if labelled else r.label, UNLABELLED), description=r.narration,
                              verb=r.verb if labelled else None,
                              verb_class=int(r.verb_class) if labelled and not pd.isna(r.verb_class) else None,
                              noun=r.noun if labelled else None,
                              noun_class=int(r.noun_class) if labelled and not pd.isna(r.noun_class) else None,
                              synonyms=tuple(cat.verb_synonyms.get("epic_100", {}).get(verb_key, [])) if verb_key else (),
                              source_stream="narration", source_id=str(r.row_id)))
        classes = [int(c) for c in r.all_noun_classes] if labelled else []
        for c, name in zip(classes, list(r.all_nouns)):
            if normalise(name):                 # else the catalogue's name of the class
                noun_names.setdefault(c, str(name))
        action_nouns.append(classes)
    for classes in action_nouns:
        for c in classes:
            if c not in ref_ids:
                ref_ids[c] = f"R{len(ref_ids) + 1}"
                name = noun_names.get(c) or cat.nouns.get(c, {}).get("name") or f"noun class {c}"
                key = cat.noun_keys.get(c, name)
                s.references.append(Unit("reference", ref_ids[c], label=name, noun=name,
                                         noun_class=c, synonyms=tuple(cat.noun_instances(key)) or (key,),
                                         source_stream="narration", source_id=f"noun_class:{c}"))
    for event in s.events:
        for action in s.actions:
            if overlap_s(event, action) > 0:
                s.links.append((event.id, action.id))
    for action, classes in zip(s.actions, action_nouns):
        for c in dict.fromkeys(classes):
            s.links.append((action.id, ref_ids[c]))
    unlabelled = sum(1 for a in s.actions if a.verb_class is None)
    uncategorised = sum(1 for e in s.events if e.sound_class is None)
    if unlabelled:
        s.notes.append(f"{unlabelled} of {len(s.actions)} actions are unlabelled narrations (times only)")
    if uncategorised:
        s.notes.append(f"{uncategorised} of {len(s.events)} events are not categorised (description only)")
    undescribed = sum(1 for e in s.events if e.label == NOT_CATEGORISED)
    if undescribed:
        s.notes.append(f"{undescribed} of the not-categorised events have a blank description upstream: "
                       f"shown as {NOT_CATEGORISED!r} (no caption text agrees with them but that one; times count)")
    return s


def _hd_epic(clip: Clip, rows: pd.DataFrame, cat: Catalogue) -> Structure:
    s = Structure("hd_epic", clip.duration_s)
    s.notes.append("HD-EPIC sound annotations are not available here: no events, so event and EVSA metrics "
                   "do not apply to hd_epic clips")
    tracks = _sorted(rows[rows["stream"] == "object_track"])
    placeholder = tracks["object_name"].map(is_placeholder_name).astype(bool)
    if placeholder.any():
        s.notes.append(f"{int(placeholder.sum())} movement tracks of objects with a placeholder name "
                       f"({', '.join(sorted(set(tracks.loc[placeholder, 'object_name'])))}) are left out")
    tracks = tracks[~placeholder]
    ref_ids: dict[str, str] = {}
    for r in tracks.itertuples(index=False):
        if r.association_id not in ref_ids:
            ref_ids[r.association_id] = f"R{len(ref_ids) + 1}"
            key = object_class(cat, r.object_name)
            s.references.append(Unit("reference", ref_ids[r.association_id], label=r.object_name, noun=r.object_name,
                                     object_name=r.object_name,
                                     synonyms=tuple(cat.noun_instances(key, "hd_epic")) or (key,),
                                     source_stream="object_track", source_id=f"association:{r.association_id}"))
    for i, r in enumerate(tracks.itertuples(index=False), start=1):
        s.actions.append(Unit("action", f"A{i}", _rel(clip, r.start_clipped_s), _rel(clip, r.stop_clipped_s),
                              label=f"move the {r.object_name}", description=f"move the {r.object_name}",
                              verb="move", noun=r.object_name, object_name=r.object_name,
                              source_stream="object_track", source_id=str(r.row_id)))
        s.links.append((f"A{i}", ref_ids[r.association_id]))
    return s


def validate_structure(s: Structure) -> list[str]:
    """Problems of a reference structure (empty when valid): ids unique, labels not empty after
    normalisation, spans inside the clip and of positive length, links between existing units of the right kinds, event→action links overlapping."""
    problems = []
    index: dict[str, Unit] = {}
    for kind in ("event", "action", "reference"):
        for u in s.units(kind):
            if u.id in index:
                problems.append(f"duplicate id {u.id}")
            index[u.id] = u
            if not normalise(u.label):
                problems.append(f"{u.id} ({u.source_id}): label {u.label!r} is empty after normalisation: "
                                "no caption text could agree with it")
            if kind != "reference" and not (0 <= u.start_s < u.stop_s <= s.duration_s + 1e-9):
                problems.append(f"{u.id} ({u.source_id}): span {u.start_s}-{u.stop_s} is not inside 0-{s.duration_s}")
    for a, b in s.links:
        if a not in index or b not in index:
            problems.append(f"link {a}->{b} names a missing unit")
        elif (index[a].kind, index[b].kind) not in {("event", "action"), ("action", "reference")}:
            problems.append(f"link {a}->{b} joins a {index[a].kind} to a {index[b].kind}")
        elif index[a].kind == "event" and overlap_s(index[a], index[b]) <= 0:
            problems.append(f"link {a}->{b}: the spans do not overlap")
    if s.dataset == "hd_epic" and s.events:
        problems.append("hd_epic reference has events (no sound annotations are staged)")
    return problems
