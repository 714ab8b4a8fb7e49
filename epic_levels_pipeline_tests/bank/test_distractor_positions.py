"""Catalogue positions left out of a draw (the answer, the exclusions) are found as ``np.isin`` finds them."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from types import SimpleNamespace

from epic_levels_pipeline.bank.distractors import (_SIDES, _Base, _deleted, _found, _ints, _places, _positions, _scan,
                                                   _Source, _without)


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


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 5000), max_size=60), st.data())
def test_deleted_is_np_delete(values, data):
    """The mask deletion equals ``np.delete`` (values, dtype; positions unsorted and repeated)."""
    a = np.array(values, dtype=np.int64)
    at = data.draw(st.lists(st.integers(0, len(a) - 1), max_size=8)) if len(a) else []
    expected = np.delete(a, np.array(at, dtype=np.int64))
    got = _deleted(a, np.array(at, dtype=np.int64))
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == expected.dtype
    unique = sorted(set(at))
    np.testing.assert_array_equal(_deleted(np.arange(len(a)), unique), np.delete(np.arange(len(a)), unique))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 3000), max_size=8))
def test_positions_are_a_fresh_range(sizes):
    """The positions a draw shuffles equal ``list(range(n))``, whatever was asked before, and are its own list."""
    for n in sizes:
        got = _positions(n)
        assert got == list(range(n))
        got.reverse()  # (a shuffle permutes it in place: the next draw's positions are untouched)
        assert _positions(n) == list(range(n))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 5000), max_size=40), st.integers(0, 10))
def test_ints_are_tolist(values, first):
    """A side read lazily yields ``tolist()``'s Python ints, in order."""
    a = np.array(values, dtype=np.int64)
    got = list(_ints(a, first))
    assert got == a.tolist() and all(type(x) is int for x in got)


@settings(max_examples=300, deadline=None)
@given(st.permutations(range(30)), st.lists(st.integers(0, 6), min_size=30, max_size=30), st.integers(-1, 7),
       st.sampled_from(sorted(_SIDES)))
def test_a_side_read_off_the_order_is_the_side_numpy_picks(order, freq, key_f, name):
    """:func:`_scan` yields what the ranked draw's numpy pick holds: the shuffled positions on that side of
    the key's frequency, in shuffled order (Python ints)."""
    shuffled = np.array(order, dtype=np.int64)
    f = np.array(freq, dtype=np.int64)
    want = shuffled[_SIDES[name](f[shuffled], key_f)].tolist()
    got = list(_scan(list(order), freq, name, key_f))
    assert got == want and all(type(p) is int for p in got)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=40), st.integers(-1, 10))
def test_a_source_counts_either_side_as_its_comparisons_count(freq, key_f):
    """A source's counts above and below a frequency (two searches of its sorted frequencies, sorted once)
    are the counts of the comparisons, and its list of frequencies is ``tolist()``."""
    f = np.array(freq, dtype=np.int64)
    source = _Source(np.arange(len(f)), f, None, None)
    for _ in range(2):
        assert source.around(key_f) == (int(np.count_nonzero(f > key_f)), int(np.count_nonzero(f < key_f)))
    assert source.freq_list() == freq and all(type(x) is int for x in source.freq_list())


@settings(max_examples=200, deadline=None)
@given(st.sets(st.integers(0, 60), max_size=40))
def test_a_base_holds_its_positions(positions):
    table = SimpleNamespace(values=[f"v{i}" for i in range(61)])
    base = _Base(table, np.array(sorted(positions), dtype=np.int64))
    assert base.holds.tolist() == [i in positions for i in range(61)]
