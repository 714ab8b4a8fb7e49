""":func:`solvers.next_step` finds each recipe's current span with Python floats where no span is NaN: the
same pick as the numpy reductions it replaced (``np.minimum``/``np.maximum`` overlaps, ``nanmax`` against
5 s, ``nanargmax`` for the first longest), on any spans, NaN ones included."""

import math
import warnings
from collections import namedtuple
from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from epic_levels_pipeline.bank import solvers
from epic_levels_pipeline.records import is_null

Step = namedtuple("Step", "row_id start_s stop_s label step_id recipe_key in_window")


def _numpy_next_step(view, recipe_key):
    """The earlier body of ``next_step``, word for word."""
    clip = view.clip
    steps = [r for r in view.step_records if not is_null(r.recipe_key) and r.recipe_key == recipe_key]
    inside = [r for r in steps if bool(r.in_window)]
    if not inside:
        return None
    overlap = (np.minimum(np.array([r.stop_s for r in inside], dtype=float), clip.end_s)
               - np.maximum(np.array([r.start_s for r in inside], dtype=float), clip.start_s))
    if np.nanmax(overlap) < 5:
        return None
    current = inside[int(np.nanargmax(overlap))]
    later = [r for r in steps if r.start_s > current.start_s and (is_null(r.step_id) or r.step_id != current.step_id)]
    later = [later[i] for i in np.argsort(np.array([r.start_s for r in later], dtype=float), kind="quicksort")]
    if not later:
        return None
    nxt = later[0]
    if len(later) > 1 and later[1].step_id != nxt.step_id and later[1].start_s - nxt.start_s < 0.5:
        return None
    if nxt.start_s < clip.end_s:
        return None
    return current, nxt


def _outcome(fn, view, key):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (``nanmax`` of all-NaN overlaps says so)
        try:
            return "value", fn(view, key)
        except ValueError as e:  # (all-NaN overlaps: ``nanargmax`` refuses)
            return "error", type(e)


SECOND = st.one_of(st.integers(0, 60).map(float), st.floats(0, 60), st.just(math.nan))


@settings(deadline=None)
@given(st.lists(st.tuples(SECOND, SECOND, st.sampled_from(["s1", "s2", "s3"]), st.sampled_from(["r1", "r2"]),
                          st.booleans()), max_size=8),
       st.integers(0, 30))
def test_next_step_is_the_numpy_pick(spans, start):
    rows = [Step(f"step:{i}", a, b, f"label {s}", s, r, w) for i, (a, b, s, r, w) in enumerate(spans)]
    clip = SimpleNamespace(start_s=float(start), end_s=float(start + 30))
    for key in ("r1", "r2"):
        view = SimpleNamespace(clip=clip, step_records=rows)
        assert _outcome(solvers._next_step_of, view, key) == _outcome(_numpy_next_step, view, key)
