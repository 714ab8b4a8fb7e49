"""The rows of many windows from one interval join per table are the rows of each window clip by clip:
the same frames (values, dtypes, order) for every bundled clip, for shifted and unknown windows, for
random windows (property test), and for a 300-window sample of the staged files (skipped without them)."""

import gc
import weakref

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from epic_levels_pipeline.annotations.clip_rows import (CLIP_ANNOTATION_COLUMNS, ClipRowsIndex, clip_annotations,
                                                        clips_annotations, iter_clips_annotations)
from epic_levels_pipeline.annotations.clips import Clip, all_windows
from epic_levels_pipeline.annotations.clip_keys import read_manifest
from epic_levels_pipeline.annotations.clip_rows import (_BOOL_COLUMNS, _INT_COLUMNS, _LIST_COLUMNS, _null_columns,
                                                        _stable_types)
from epic_levels_pipeline.annotations.readers import load_annotations

from ..conftest import ROOT, STAGED


def assert_same(ann, clips):
    many = clips_annotations(ann, clips)
    assert list(many) == [c.key for c in clips]
    for clip in clips:
        pd.testing.assert_frame_equal(many[clip.key], clip_annotations(ann, clip), obj=clip.key)


def test_every_bundled_clip_and_shifted_windows(bundled):
    ann, _ = bundled
    clips = read_manifest(ROOT / "data" / "clips.csv")
    shifted = [Clip(c.dataset, c.video_id, max(c.start_s - 7.3, 0.0), c.end_s + 11.0) for c in clips]
    assert_same(ann, clips + shifted + [Clip("hd_epic", "no-such-video", 0, 30), Clip("epic_sounds", "P00_00", 0, 30)])


def _videos(ann):
    return ([("epic_sounds", v) for v in sorted(set(ann.sounds["video_id"]) | set(ann.narrations["video_id"]))]
            + [("hd_epic", v) for v in sorted(set(ann.activities["video_id"]) | set(ann.object_tracks["video_id"]))])


# each example indexes up to six windows against the bundled tables (~0.2 s): 30 in every profile
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_windows_match_clip_by_clip(bundled, data):
    ann, _ = bundled
    videos = _videos(ann)
    clips = []
    for _ in range(data.draw(st.integers(1, 6))):
        dataset, video = data.draw(st.sampled_from(videos))
        start = data.draw(st.floats(0, 2000, allow_nan=False).map(lambda x: round(x, 2)))
        width = data.draw(st.sampled_from([0.5, 5.0, 30.0, 61.7, 300.0]))
        clip = Clip(dataset, video, start, start + width)
        if clip.key not in {c.key for c in clips}:
            clips.append(clip)
    assert_same(ann, clips)


def test_batches_hold_no_table_after_use(bundled):
    """No process-global index: once the caller drops its tables, nothing in the module keeps them alive."""
    ann = load_annotations(ROOT / "data" / "annotations")
    clips = read_manifest(ROOT / "data" / "clips.csv")
    assert [c.key for c, _ in iter_clips_annotations(ann, clips, batch=4)] == [c.key for c in clips]
    clip_annotations(ann, clips[0])
    ref = weakref.ref(ann.sounds)
    del ann
    gc.collect()
    assert ref() is None


def test_an_index_reused_across_calls_gives_the_same_rows(bundled):
    """An index passed in (built once, e.g. before forking workers) serves later calls with the same frames;
    an index of other tables is refused rather than answering for them."""
    ann, _ = bundled
    clips = read_manifest(ROOT / "data" / "clips.csv")
    index = ClipRowsIndex(ann)
    for part in (clips[:3], clips[3:]):
        for clip, rows in iter_clips_annotations(ann, part, batch=2, index=index):
            pd.testing.assert_frame_equal(rows, clip_annotations(ann, clip), obj=clip.key)
    other = load_annotations(ROOT / "data" / "annotations")
    with pytest.raises(ValueError, match="other annotation tables"):
        next(iter_clips_annotations(other, clips, index=index))


def test_a_clips_frame_modified_leaves_the_others_alone(bundled):
    """The clips of one batch are slices of one joined frame: changing one clip's frame in place changes
    no other clip's frame, and a frame asked for again is as before."""
    ann, _ = bundled
    clips = read_manifest(ROOT / "data" / "clips.csv")
    frames = clips_annotations(ann, clips)
    first, second = (frames[c.key] for c in clips[:2])
    before = second.copy()
    first.loc[:, "label"] = "changed"
    first.loc[0, "start_s"] = -1.0
    pd.testing.assert_frame_equal(second, before)
    pd.testing.assert_frame_equal(clips_annotations(ann, clips[:1])[clips[0].key], clip_annotations(ann, clips[0]))


def test_iterated_frames_modified_leave_the_next_clips_alone(bundled):
    """Going clip by clip, each clip's frame is made from the batch as the clip comes: changing a frame in place
    changes none of the frames that follow (they are still the frames clip_annotations makes)."""
    ann, _ = bundled
    clips = read_manifest(ROOT / "data" / "clips.csv")
    for clip, rows in iter_clips_annotations(ann, clips, batch=len(clips)):
        pd.testing.assert_frame_equal(rows, clip_annotations(ann, clip), obj=clip.key)
        if len(rows):
            rows.loc[:, "label"] = "changed"
            rows.loc[0, "start_s"] = -1.0


@pytest.mark.skipif(not STAGED.is_dir(), reason=f"staged annotation files not found at {STAGED}")
def test_300_staged_windows_match_clip_by_clip(staged):
    ann = staged
    clips = all_windows(ann, "epic_sounds")[::10][:150] + all_windows(ann, "hd_epic")[::10][:150]
    assert_same(ann, clips)


def test_null_columns_are_the_stable_types_of_none_columns():
    """The typed null columns a batch variant is given directly are what :func:`clips._stable_types` makes of
    the same columns set to None: values, dtypes, the values under the mask, fresh lists per row."""
    base = pd.DataFrame({"x": [1.0, 2.0, 3.0]})
    absent = tuple(CLIP_ANNOTATION_COLUMNS)
    reference = base.assign(**{column: None for column in absent})
    _stable_types(reference, absent)
    built = base.assign(**_null_columns(absent, len(base)))
    pd.testing.assert_frame_equal(built, reference)
    for column in (*_INT_COLUMNS, *_BOOL_COLUMNS):
        assert (built[column].array._data == reference[column].array._data).all(), column
    for column in _LIST_COLUMNS:
        cells = built[column].tolist()
        assert len({id(cell) for cell in cells}) == len(cells)
    # given the rows that will be read, only those get lists
    some = base.assign(**_null_columns(_LIST_COLUMNS, len(base), np.array([0, 2])))
    assert [type(v) for v in some[_LIST_COLUMNS[0]].tolist()] == [list, type(None), list]


def test_rows_slice_is_the_iloc_slice_reindexed(bundled):
    """A clip's rows cut from a batch (``_slice`` given its new index) are the frame ``iloc[a:b]`` makes
    with a fresh range index set afterwards: values, dtypes and index; and modifying it
    leaves the batch alone."""
    from epic_levels_pipeline.annotations.clip_rows import _rows_slice

    ann, _ = bundled
    batch = pd.concat([clip_annotations(ann, c) for c in read_manifest(ROOT / "data" / "clips.csv")], ignore_index=True)
    before = batch.copy()
    for a, b in ((0, 1), (3, 40), (0, len(batch)), (len(batch) - 5, len(batch))):
        made, part = _rows_slice(batch, a, b), batch.iloc[a:b].copy()
        part.index = pd.RangeIndex(b - a)
        pd.testing.assert_frame_equal(made, part, check_exact=True)
        made.loc[0, "row_id"] = "changed"
        made.loc[0, "start_s"] = -1.0
    pd.testing.assert_frame_equal(batch, before, check_exact=True)
