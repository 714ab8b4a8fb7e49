"""The distractor sources' shortcuts say what the plain computations say."""

from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from epic_levels_pipeline.bank.distractors import _indexed


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
