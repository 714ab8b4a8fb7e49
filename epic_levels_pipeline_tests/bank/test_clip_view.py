"""The clip view's fast readings equal the pandas readings they replace.

The view reads each column from the frame's column array (not ``rows[column]``) and builds its records
and spans from column arrays (not from small frames). Both must give exactly what the pandas route gives:
the same Python values, in the same order, nulls included."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import given, settings, strategies as st

from epic_levels_pipeline.annotations.clips import clip_annotations, read_manifest
from epic_levels_pipeline.bank.clip_view import ClipView, _frame, _records_of, _strings, records



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


@settings(max_examples=200, deadline=None)
@given(_columns())
def test_records_from_column_arrays_equal_records_of_their_frame(data):
    assert _same_records(_records_of(data), records(_frame(data)))


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


@settings(max_examples=200, deadline=None)
@given(st.lists(_texts, max_size=8), st.sampled_from(["str", "string[pyarrow]"]), st.integers(0, 3))
def test_string_columns_read_as_pandas_converts_them(values, dtype, skip):
    """The Arrow fast path of string columns gives what ``to_numpy(dtype=object)`` gives (nulls included),
    also on a slice of a longer column, as a clip's rows are of a batch."""
    array = pd.Series(values, dtype=dtype).array[skip:]
    got, want = _strings(array), array.to_numpy(dtype=object)
    assert got.dtype == want.dtype and _same(got.tolist(), want.tolist())
