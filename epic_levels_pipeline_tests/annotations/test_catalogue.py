"""The catalogue built on whole columns equals the per-group pandas construction it replaced (kept here
as the reference), every field and every dictionary's order, on the bundled data and on the staged files."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest

from epic_levels_pipeline.annotations.catalogue import (Catalogue, _object_classes, _priors, _sound_classes, _synonyms,
                                                        build_catalogue, object_class)
from epic_levels_pipeline.annotations.language import noun_display
from epic_levels_pipeline.annotations.readers import load_annotations
from epic_levels_pipeline.annotations.validation import is_placeholder_name

ROOT = Path(__file__).resolve().parents[2]
STAGED = ROOT.parent / "shared" / "data"


def reference_catalogue(ann) -> Catalogue:
    """The construction group by group (pandas ``groupby`` iteration, a merge of activities and tracks) of the
    parts built on whole columns now; the parts that did not change are shared."""
    cat = Catalogue()
    _synonyms(cat, ann)
    narr = ann.narrations[ann.narrations["labelled"]]
    for noun_class, group in narr.groupby("noun_class"):
        key = cat.noun_keys.get(int(noun_class)) or group["noun"].mode().iat[0]
        cat.nouns[int(noun_class)] = {"name": noun_display(group["noun"].mode().iat[0]), "key": key,
                                      "rows": group["narration_id"].head(3).tolist()}
    for (verb_class, noun_class), group in narr.groupby(["verb_class", "noun_class"]):
        first = group.iloc[0]
        cat.actions[(int(verb_class), int(noun_class))] = {
            "narration": first["narration"], "nouns": list(first["all_nouns"]), "verb": first["verb"],
            "rows": group["narration_id"].head(3).tolist(),
        }
    _sound_classes(cat, ann)
    tracks = ann.object_tracks
    cat.placeholder_objects = sorted({n for n in tracks["object_name"] if is_placeholder_name(n)})
    tracks = tracks[~tracks["object_name"].map(is_placeholder_name).astype(bool)]
    _object_classes(cat)
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


def ordered(value):
    """A value with every dictionary as its list of items (so that order counts) and every scalar with its type."""
    if isinstance(value, dict):
        return [("dict", ordered(k), ordered(v)) for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [ordered(v) for v in value])
    if isinstance(value, set):
        return ("set", sorted(ordered(v) for v in value))
    return (type(value).__name__, value)


def assert_same_catalogue(ann) -> None:
    built, reference = build_catalogue(ann), reference_catalogue(ann)
    assert built == reference
    for name in Catalogue.__dataclass_fields__:
        if name != "_derived":
            assert ordered(getattr(built, name)) == ordered(getattr(reference, name)), name


def test_catalogue_equals_the_per_group_construction_on_the_bundled_data(bundled):
    ann, _ = bundled
    assert_same_catalogue(ann)


@pytest.mark.skipif(not STAGED.is_dir(), reason=f"staged annotation files not present at {STAGED}")
def test_catalogue_equals_the_per_group_construction_on_the_staged_files():
    assert_same_catalogue(load_annotations(STAGED))


def test_catalogue_of_tables_with_nulls_ties_and_placeholders(bundled):
    """Edge rows the data files hardly have: a narration lacking its verb class, nouns tied for the most
    frequent, a track named like a placeholder, an activity with no track in its video, an activity
    label shared by two videos."""
    ann, _ = bundled
    narr = ann.narrations.copy()
    labelled = narr.index[narr["labelled"]]
    narr.loc[labelled[0], "verb_class"] = pd.NA
    narr.loc[labelled[1:3], "noun_class"] = narr.loc[labelled[3], "noun_class"]
    narr.loc[labelled[1], "noun"] = "zz tie"
    narr.loc[labelled[2], "noun"] = "aa tie"
    tracks = ann.object_tracks.copy()
    tracks.loc[tracks.index[:2], "object_name"] = ["track 87", "new track 2"]
    acts = ann.activities.copy()
    acts.loc[acts.index[0], "video_id"] = "P99-20990101-000000"
    acts.loc[acts.index[1], "label"] = acts.loc[acts.index[-1], "label"]
    assert_same_catalogue(dataclasses.replace(ann, narrations=narr, object_tracks=tracks, activities=acts))


def test_catalogue_json_reads_back_equal_in_the_same_order(bundled):
    """The stored document (JSON, no pickle) gives back the catalogue: every field, every dictionary's order,
    the action keys' tuples, the class ids' ints and the description classes' sets."""
    ann, _ = bundled
    cat = build_catalogue(ann)
    back = Catalogue.from_json(cat.to_json())
    assert back == cat
    for name in Catalogue.__dataclass_fields__:
        if name != "_derived":
            assert ordered(getattr(back, name)) == ordered(getattr(cat, name)), name
    assert all(isinstance(k, tuple) for k in back.actions) and all(isinstance(k, int) for k in back.nouns)
    assert all(isinstance(v, set) for v in back.description_classes.values())


def test_a_catalogue_document_of_another_layout_is_refused():
    with pytest.raises(ValueError, match="materialize entity_catalogue again"):
        Catalogue.from_json('{"catalogue_version": 0}')
