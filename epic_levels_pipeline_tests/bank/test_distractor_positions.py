"""Catalogue positions left out of a draw (the answer, the exclusions) are found as ``np.isin`` finds them."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from epic_levels_pipeline.bank.distractors import _found, _places, _without


@settings(max_examples=300, deadline=None)
@given(st.sets(st.integers(0, 80), max_size=40), st.lists(st.integers(-3, 90), min_size=1, max_size=6))
def test_found_drops_what_isin_drops(positions, drop):
    base = np.array(sorted(positions), dtype=np.int64)
    kept = np.delete(base, _found(base, drop))
    np.testing.assert_array_equal(kept, base[~np.isin(base, drop)])
    assert kept.dtype == base.dtype


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 60), max_size=50), st.sets(st.integers(-3, 70), max_size=12))
def test_without_marks_what_isin_marks(keys, present):
    """The absent-entity mask from the keys' places equals ``~np.isin`` over the whole key array (keys may repeat)."""
    keys = np.array(keys, dtype=np.int64)
    np.testing.assert_array_equal(_without(len(keys), _places(keys), present), ~np.isin(keys, list(present)))
