"""The long loops' collector freeze: scoped to the loop, and an existing freeze left as it is."""

from __future__ import annotations

import gc

from epic_levels_pipeline.annotations.clips import Clip, iter_clips_annotations
from epic_levels_pipeline.runtime import LOOP_YOUNG_THRESHOLD, long_lived_frozen


def test_objects_alive_on_entry_are_frozen_inside_and_scanned_again_after():
    assert gc.get_freeze_count() == 0
    alive = [object()]  # noqa: F841 (alive on entry)
    with long_lived_frozen():
        inside = gc.get_freeze_count()
    assert inside > 0
    assert gc.get_freeze_count() == 0


def test_an_existing_freeze_is_left_as_it_is():
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        with long_lived_frozen():
            assert gc.get_freeze_count() == before
        assert gc.get_freeze_count() == before  # not unfrozen by the inner loop
    finally:
        gc.unfreeze()


def test_unfrozen_after_an_error_inside():
    try:
        with long_lived_frozen():
            raise RuntimeError("a clip failed")
    except RuntimeError:
        pass
    assert gc.get_freeze_count() == 0


def test_the_clip_loop_runs_frozen_and_unfreezes_when_done_or_left_early(bundled):
    annotations = bundled[0]
    clips = [Clip("hd_epic", v, 0.0, 30.0) for v in sorted(annotations.activities["video_id"].unique())[:3]]
    counts = [gc.get_freeze_count() for _ in iter_clips_annotations(annotations, clips)]
    assert len(counts) == 3 and min(counts) > 0
    assert gc.get_freeze_count() == 0
    loop = iter_clips_annotations(annotations, clips)
    next(loop)
    assert gc.get_freeze_count() > 0
    loop.close()  # a caller that stops early
    assert gc.get_freeze_count() == 0


def test_a_loop_inside_another_freezes_what_came_alive_since_and_the_outermost_unfreezes():
    with long_lived_frozen():
        outer = gc.get_freeze_count()
        loaded = [[i] for i in range(1000)]  # tracked objects that come alive inside (a step's tables)
        with long_lived_frozen():
            assert gc.get_freeze_count() >= outer + len(loaded)
        assert gc.get_freeze_count() >= outer + len(loaded)  # the inner loop does not unfreeze
    assert gc.get_freeze_count() == 0


def test_young_objects_are_collected_less_often_inside_and_the_thresholds_come_back_after():
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with long_lived_frozen():
            assert gc.get_threshold() == (LOOP_YOUNG_THRESHOLD, 10, 10)
            with long_lived_frozen():
                assert gc.get_threshold() == (LOOP_YOUNG_THRESHOLD, 10, 10)
            assert gc.get_threshold() == (LOOP_YOUNG_THRESHOLD, 10, 10)  # the inner loop does not restore
        assert gc.get_threshold() == (700, 10, 10)
        try:
            with long_lived_frozen():
                raise RuntimeError("a clip failed")
        except RuntimeError:
            pass
        assert gc.get_threshold() == (700, 10, 10)
        gc.set_threshold(50_000, 20, 5)  # a caller's higher threshold stays
        with long_lived_frozen():
            assert gc.get_threshold() == (50_000, 20, 5)
        assert gc.get_threshold() == (50_000, 20, 5)
    finally:
        gc.set_threshold(*before)
