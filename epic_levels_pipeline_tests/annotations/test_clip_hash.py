"""Clip content hashes are stable: the same rows hash the same from the CSVs, after a Parquet round trip,
and whatever numpy/pandas scalar types carry them; a changed cell changes the hash."""

import io

import numpy as np
import pandas as pd
from hypothesis import given, settings, strategies as st

from epic_levels_pipeline.annotations.clip_rows import CLIP_ANNOTATION_COLUMNS, clip_annotations
from epic_levels_pipeline.annotations.clip_hash import canonical_value, content_hash
from epic_levels_pipeline.annotations.clip_keys import read_manifest

from ..conftest import ROOT

times = st.floats(min_value=0, max_value=5000, allow_nan=False, allow_infinity=False)
maybe_int = st.one_of(st.none(), st.integers(min_value=0, max_value=400))
maybe_bool = st.one_of(st.none(), st.booleans())
text = st.text(alphabet="abcdefgh _-/", min_size=0, max_size=12)


@st.composite
def clip_rows(draw) -> pd.DataFrame:
    n = draw(st.integers(min_value=0, max_value=8))
    rows = []
    for i in range(n):
        start = draw(times)
        stop = start + draw(st.floats(min_value=0.001, max_value=60, allow_nan=False))
        nouns = draw(st.lists(text, max_size=3))
        rows.append({
            "clip_key": "epic_sounds__P01_01__0-30", "dataset": "epic_sounds", "video_id": "P01_01",
            "stream": draw(st.sampled_from(["sound", "narration", "track"])), "row_id": f"P01_01_{i}",
            "label": draw(text), "start_s": start, "stop_s": stop, "start_clipped_s": start, "stop_clipped_s": stop,
            "in_window": draw(st.booleans()), "description": draw(st.one_of(st.none(), text)),
            "sound_class": draw(st.one_of(st.none(), text)), "class_id": draw(maybe_int),
            "categorised": draw(maybe_bool), "narration": draw(st.one_of(st.none(), text)), "verb": None,
            "verb_class": draw(maybe_int), "noun": None, "noun_class": draw(maybe_int), "all_nouns": nouns,
            "all_noun_classes": draw(st.lists(st.integers(0, 300), min_size=len(nouns), max_size=len(nouns))),
            "labelled": draw(maybe_bool), "recipe_id": None, "recipe_key": None, "step_id": None,
            "step_number": draw(maybe_int), "raw_name": None, "object_name": None, "association_id": None,
            "source_file": "EPIC_Sounds_validation.csv", "source_row": i + 2,
        })
    frame = pd.DataFrame(rows, columns=CLIP_ANNOTATION_COLUMNS)
    for column in ("class_id", "verb_class", "noun_class", "step_number"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("Int64")
    for column in ("categorised", "labelled"):
        frame[column] = frame[column].astype("boolean")
    return frame


def parquet_round_trip(frame: pd.DataFrame) -> pd.DataFrame:
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    buffer.seek(0)
    return pd.read_parquet(buffer)


@settings(deadline=None)
@given(clip_rows())
def test_hash_survives_a_parquet_round_trip(rows):
    assert content_hash(rows) == content_hash(parquet_round_trip(rows))


@settings(deadline=None)
@given(clip_rows())
def test_hash_ignores_row_order_and_scalar_types(rows):
    shuffled = rows.sample(frac=1.0, random_state=1)
    as_objects = rows.astype(object)  # Python scalars in place of numpy ones; NA stays NA
    assert content_hash(rows) == content_hash(shuffled) == content_hash(as_objects)


@settings(deadline=None)
@given(clip_rows(), st.floats(min_value=0.01, max_value=5))
def test_a_changed_time_changes_the_hash(rows, shift):
    if not len(rows):
        return
    changed = rows.copy()
    changed.loc[changed.index[0], "start_s"] = changed["start_s"].iloc[0] + shift
    assert content_hash(changed) != content_hash(rows)


def test_canonical_values():
    assert canonical_value(np.int64(2)) == canonical_value(2) == canonical_value(2.0) == 2
    assert canonical_value([np.int64(2)]) == canonical_value(np.array([2])) == [2]
    assert canonical_value(float("nan")) is canonical_value(pd.NA) is canonical_value(None) is None
    assert canonical_value(np.bool_(True)) is True
    assert canonical_value(47.6620000001) == 47.662


def test_bundled_clips_hash_the_same_from_csv_and_parquet(bundled):
    ann, _ = bundled
    for clip in read_manifest(ROOT / "data" / "clips.csv"):
        rows = clip_annotations(ann, clip)
        assert content_hash(rows) == content_hash(parquet_round_trip(rows)), clip.key


@settings(max_examples=3, deadline=None)
@given(batch=st.integers(min_value=1, max_value=70), width=st.sampled_from([10.0, 30.0, 45.0]),
       take=st.integers(min_value=90, max_value=180))
def test_clip_hashes_of_many_windows_are_each_clips_content_hash(bundled, batch, width, take):
    """The sensor's batch hashing (a batch's cells taken out once, a slice per clip) gives every window the
    hash of its own ``clip_annotations`` frame, whatever the batch size and whichever streams a clip lacks."""
    from epic_levels_pipeline.annotations.clips import all_windows
    from epic_levels_pipeline.annotations.clip_hash import clip_hashes

    ann, _ = bundled
    windows = [c for dataset in ("epic_sounds", "hd_epic") for c in all_windows(ann, dataset, width=width)]
    clips = windows[::take] + read_manifest(ROOT / "data" / "clips.csv")[batch % 4::4]  # the reference: ~0.1 s a clip
    assert clip_hashes(ann, clips, batch=batch) == {c.key: content_hash(clip_annotations(ann, c)) for c in clips}
