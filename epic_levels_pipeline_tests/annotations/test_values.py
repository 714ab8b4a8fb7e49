"""Candidate values: parsing a stored text (made once per text) gives the kind and payload back unchanged."""

from hypothesis import given, settings
from hypothesis import strategies as st

from epic_levels_pipeline.annotations import values
from epic_levels_pipeline.annotations.values import CandidateValue


@settings(deadline=None)
@given(st.text(max_size=30), st.booleans())
def test_parse_is_partition_and_round_trips(text, twice):
    kind, _, payload = text.partition(":")
    got = CandidateValue.parse(text)
    if twice:  # the second time from the memo
        got = CandidateValue.parse(text)
    assert (got.kind, got.payload) == (kind, payload)
    assert got == CandidateValue(kind, payload)
    if ":" in text:
        assert str(got) == text


def test_parse_of_non_strings_and_a_full_memo(monkeypatch):
    assert CandidateValue.parse(12) == CandidateValue("12", "")
    assert CandidateValue.parse(CandidateValue("action", "3:12")).pair == (3, 12)
    monkeypatch.setattr(values, "_PARSED", {})  # (what earlier tests parsed would be found, not parsed again)
    monkeypatch.setattr(values, "_PARSED_MAX", 2)
    for text in ("noun:1", "noun:2", "noun:3"):
        assert CandidateValue.parse(text).noun_class == int(text[-1])
    assert len(values._PARSED) <= 2
