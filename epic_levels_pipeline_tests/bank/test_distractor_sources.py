"""The distractor sources' shortcuts say what the plain computations say."""

from dataclasses import fields, replace
from types import SimpleNamespace

import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from epic_levels_pipeline.annotations.catalogue import object_class
from epic_levels_pipeline.annotations.clips import clip_annotations, read_manifest
from epic_levels_pipeline.bank.clip_view import ClipView
from epic_levels_pipeline.bank.distractors import Candidate, _candidate, _indexed, _tables, offered

from ..conftest import ROOT


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([f"object:{c}" for c in "abcdefg"]), max_size=40), st.sampled_from("abcdefgh"))
def test_indexed_finds_every_place_of_a_value(values, probe):
    view = SimpleNamespace(catalogue=SimpleNamespace(frequency={"object:a": 5, "object:c": 2}))
    listed = [(v, None, "note") for v in values]
    got, where, freq = _indexed(view, listed)
    assert got is listed
    probe = f"object:{probe}"
    assert where(probe) == [i for i, v in enumerate(values) if v == probe]
    assert freq.tolist() == [{"object:a": 5, "object:c": 2}.get(v, 0) for v in values]


def _old_absent_objects(view):
    """The absent objects as the per-object loop lists them: (value, rows, note), same video first."""
    cat = view.catalogue
    present_classes = {object_class(cat, n) for n in view.present_objects}
    out = []
    for group, note in ((cat.objects_by_video.get(view.clip.video_id, []), "moved elsewhere in the video"),
                        (list(cat.objects), "moved in another video")):
        for name in group:
            entry = cat.objects[name]
            if name not in view.present_objects and entry["class"] not in present_classes:
                out.append((f"object:{name}", entry["rows"], note))
        if len(out) >= 12:
            break
    return out


def _old_sharing(view):
    """The activities sharing the clip's objects as the per-label loop lists them: (value, rows, note)."""
    t = view.catalogue.derived("distractor_tables", _tables)["activity"]
    window = set(view.activities["label"].tolist())
    out = []
    for i in sorted({i for name in view.present_objects for i in t.by_object.get(name, [])}):
        if t.labels[i] not in window:
            shared = sorted(t.objects[i] & view.present_objects)
            out.append((f"activity:{t.labels[i]}", t.rows[i], "shares objects: " + ", ".join(shared[:4])))
    return out


def _draft(answer, exclude, kind):
    return SimpleNamespace(answer=SimpleNamespace(value=answer, text=answer.split(":", 1)[1]), exclude=set(exclude),
                           kind=kind)


def _listed(source):
    return [(c.value, c.rows, c.note, c.present) for c in map(source.get, range(len(source)))]


@pytest.mark.parametrize("same_video", [None, 0, 3, 11, 12, 20])
def test_absent_objects_and_sharing_activities_list_what_the_loops_list(bundled, same_video):
    """The per-catalogue arrays give the candidates (values, rows, notes, order) the per-entity loops give,
    with the answer and the exclusions (a repeated object among them) left out wherever they stand; also
    when a video lists fewer objects (``same_video`` of them: the whole catalogue follows under 12)."""
    ann, cat = bundled
    if same_video is not None:
        cat = replace(cat, objects_by_video={v: names[:same_video] for v, names in cat.objects_by_video.items()},
                      _derived={})
    seen = 0
    for clip in read_manifest(ROOT / "data" / "clips.csv"):
        if clip.dataset != "hd_epic":
            continue
        view = ClipView(clip, clip_annotations(ann, clip), cat)
        absent, sharing = _old_absent_objects(view), _old_sharing(view)
        for listed, strategy, kind in ((absent, "absent_from_clip", "object"), (sharing, "shares_objects", "activity")):
            values = [v for v, _, _ in listed]
            for answer, exclude in ((f"{kind}:none", []), (values[0] if values else f"{kind}:none", values[1:3]),
                                    (values[-1] if values else f"{kind}:none", values[::5])):
                draft = _draft(answer, exclude, kind)
                want = [(v, list(r), n, strategy == "shares_objects") for v, r, n in listed
                        if v != answer and v not in draft.exclude]
                got = offered(strategy, view, draft)
                assert [got.value(p) for p in range(len(got))] == [w[0] for w in want]
                assert got.freq.tolist() == [cat.frequency.get(w[0], 0) for w in want]
                assert _listed(got) == want
                seen += 1
    assert seen


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=12), st.text(max_size=12), st.sampled_from(["absent_from_clip", "shares_objects"]),
       st.sampled_from([None, False, True]), st.lists(st.text(max_size=8), max_size=3), st.text(max_size=12))
def test_candidate_made_directly_is_the_constructed_one(value, text, strategy, present, rows, note):
    """The sources' direct making of a :class:`Candidate` gives what its constructor gives: every field (a
    field added to the dataclass and not set directly fails here), in the same order, equal and typed."""
    made, built = _candidate(value, text, strategy, present, rows, note), Candidate(value, text, strategy, present, rows, note)
    assert type(made) is Candidate and made == built
    assert list(vars(made)) == list(vars(built)) == [f.name for f in fields(Candidate)]
    assert made.to_dict() == built.to_dict()


def test_pools_sharing_a_views_candidates_draw_what_fresh_views_draw(bundled):
    """A clip's sources share the candidates they make (one object per entity and view): every draw on a
    view that has drawn the clip's other pools first gives, field by field, what the same draw gives on a
    view of its own (the first pool of a view makes all it draws)."""
    import random

    from epic_levels_pipeline.bank.distractors import pool
    from epic_levels_pipeline.bank.subtypes import SUBTYPES

    ann, cat = bundled
    checked = 0
    for clip in read_manifest(ROOT / "data" / "clips.csv")[:8]:
        rows = clip_annotations(ann, clip)
        shared = ClipView(clip, rows, cat)
        for name, subtype in SUBTYPES.items():
            if subtype.dataset != clip.dataset:
                continue
            for k, draft in enumerate(d for d in subtype.generate(shared) if not isinstance(d, tuple)):
                for strategy in ("absent_from_clip", "same_clip_other_moments", "shares_objects"):
                    if strategy == "shares_objects" and draft.kind != "activity":
                        continue
                    seed = f"{clip.key}:{name}:{k}:{strategy}"
                    got = pool(strategy, shared, draft, random.Random(seed))
                    want = pool(strategy, ClipView(clip, rows, cat), draft, random.Random(seed))
                    assert [c.to_dict() for c in got.candidates] == [c.to_dict() for c in want.candidates]
                    assert (got.offered, got.shortfall) == (want.offered, want.shortfall)
                    checked += len(got.candidates)
    assert checked > 200
