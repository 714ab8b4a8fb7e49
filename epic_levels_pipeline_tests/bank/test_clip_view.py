"""The clip view's readings: its records and spans, built from column arrays, give exactly what the pandas
route gives (the same Python values, in the same order, nulls included); its groupings what row filters give."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import given, settings, strategies as st

from epic_levels_pipeline.annotations.clip_rows import clip_annotations
from epic_levels_pipeline.annotations.clip_keys import read_manifest
from epic_levels_pipeline.bank.clip_view import ClipView
from epic_levels_pipeline.bank.rows import _frame
from epic_levels_pipeline.records import is_null, records, records_of
from epic_levels_pipeline.bank.rows import rows_with



def _same(a, b) -> bool:
    """Equal values of the same type (NaN equals NaN, ``pd.NA`` equals ``pd.NA``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    if a is pd.NA or a is None:
        return b is a
    if isinstance(a, (list, tuple, np.ndarray)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _same_records(got: list, want: list) -> bool:
    return (len(got) == len(want) and all(type(g)._fields == type(w)._fields for g, w in zip(got, want))
            and all(_same(tuple(g), tuple(w)) for g, w in zip(got, want)))


ROOT = Path(__file__).resolve().parents[2]

_texts = st.one_of(st.none(), st.sampled_from(["knife", "bowl", "", "pan lid"]))


@st.composite
def _columns(draw):
    n = draw(st.integers(0, 6))
    data = {"row_id": np.array([f"r{i}" for i in range(n)], dtype=object),
            "start_s": np.array(draw(st.lists(st.one_of(st.floats(0, 100), st.just(math.nan)), min_size=n, max_size=n)), dtype=float),
            "name": np.array(draw(st.lists(_texts, min_size=n, max_size=n)), dtype=object),
            "flag": np.array(draw(st.lists(st.one_of(st.booleans(), st.none()), min_size=n, max_size=n)), dtype=object),
            "lists": np.array([[]] * n + [None], dtype=object)[:n]}
    counts = draw(st.lists(st.one_of(st.integers(0, 300), st.none()), min_size=n, max_size=n))
    if any(c is None for c in counts):
        data["count"] = pd.array(counts, dtype="Int64")
    else:
        data["count"] = np.array(counts, dtype=np.int64)
    if draw(st.booleans()):
        data["bools"] = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    return data


@settings(deadline=None)
@given(_columns())
def test_records_from_column_arrays_equal_records_of_their_frame(data):
    assert _same_records(records_of(data), records(_frame(data)))


def test_view_columns_records_and_spans_equal_the_pandas_readings(bundled):
    ann, cat = bundled
    for clip in read_manifest(ROOT / "data" / "clips.csv"):
        rows = clip_annotations(ann, clip)
        view = ClipView(clip, rows, cat)
        for column in rows.columns:
            got = view._column(column)
            if column in ("start_s", "stop_s"):
                want = rows[column].to_numpy(dtype=float, na_value=np.nan)
            else:
                want = rows[column].to_numpy(dtype=object)
            assert got.dtype == want.dtype and _same(got.tolist(), want.tolist()), (clip.key, column)
        for group, frame in [("categorised_records", view.categorised), ("uncategorised_records", view.uncategorised),
                             ("narration_records", view.narrations), ("unlabelled_records", view.unlabelled_narrations),
                             ("track_records", view.tracks), ("activity_records", view.activities),
                             ("step_records", view.recipe_steps)]:
            assert _same_records(getattr(view, group), records(frame)), (clip.key, group)
        for spans, frame, names in [(view.track_spans, view.tracks, "object_name"), (view.activity_spans, view.activities, "label")]:
            for got, column, dtype in zip(spans, ("start_s", "stop_s", names), (float, float, object)):
                want = frame[column].to_numpy(dtype=dtype)
                assert got.dtype == want.dtype and _same(got.tolist(), want.tolist()), (clip.key, column)
        for occ in (o for group in view.occurrences.values() for o in group):
            at = view.narrations_at(occ.start_s, occ.stop_s)
            assert _same_records(view.records_at(occ.start_s, occ.stop_s), records(at))
            assert view.unlabelled_overlaps(occ.start_s, occ.stop_s) == bool(len(view.unlabelled_at(occ.start_s, occ.stop_s)))


def _old_next_narration(view, anchor, shares_object):
    """:meth:`ClipView.next_narration` as it read every later row (the reference for the early stop)."""
    objects, own = view.objects_of(anchor), view.pair(anchor)
    later = [r for r in view.narration_records if r.start_s > anchor.start_s and view.pair(r) != own
             and (not shares_object or bool(view.objects_of(r) & objects))]
    if not later:
        return None, "none"
    if len(later) > 1 and later[1].start_s - later[0].start_s < 0.5:
        return None, "ambiguous"
    gap = view._unlabelled_spans[0]
    if ((gap > anchor.start_s) & (gap < later[0].start_s)).any():
        return None, "unverifiable"
    return later[0], ""


def test_view_groupings_equal_the_row_filters_they_replace(bundled):
    ann, cat = bundled
    for clip in read_manifest(ROOT / "data" / "clips.csv"):
        view = ClipView(clip, clip_annotations(ann, clip), cat)
        for records, column in [("categorised_records", "sound_class"), ("narration_records", "noun_class"),
                                ("track_records", "object_name"), ("activity_records", "label")]:
            rows = getattr(view, records)
            groups = view.rows_by(records, column)
            assert set(groups) == {getattr(r, column) for r in rows if not is_null(getattr(r, column))}
            for value, group in groups.items():
                assert group == rows_with(rows, column, value)
        pairs = view.narrations_by_pair
        assert view.narration_pairs == [view.pair(r) for r in view.narration_records]
        for pair, group in pairs.items():
            assert group == [r for r in view.narration_records if view.pair(r) == pair]
        for anchor in view.narration_records:
            for shares in (False, True):
                got, why = view.next_narration(anchor, shares_object=shares)
                want, old_why = _old_next_narration(view, anchor, shares)
                assert got is want and bool(why) == bool(old_why), (clip.key, anchor.row_id, shares)


@settings(deadline=None)
@given(st.lists(st.tuples(st.floats(0, 40), st.floats(0, 5), st.sampled_from(["knife", "bowl", "pan", "lid"])),
                max_size=8), st.floats(0, 40), st.sampled_from([0.5, 1.0, 1.5]))
def test_objects_near_is_the_numpy_reading_of_the_spans(tracks, instant, width):
    """The loop over track records names the objects the mask over the span arrays names, in its order."""
    from types import SimpleNamespace

    from epic_levels_pipeline.records import _row_type
    from epic_levels_pipeline.bank.solvers import objects_near

    Row = _row_type(("start_s", "stop_s", "object_name"))
    records = [Row(a, a + d, n) for a, d, n in tracks]
    view = SimpleNamespace(track_records=records, memo=lambda name, build: build())
    starts = np.array([r.start_s for r in records], dtype=float)
    stops = np.array([r.stop_s for r in records], dtype=float)
    names = np.array([r.object_name for r in records], dtype=object)
    want = set(names[(starts < instant + width) & (stops > instant - width)].tolist())
    got = objects_near(view, instant, width)
    assert got == want and list(got) == list(want)
