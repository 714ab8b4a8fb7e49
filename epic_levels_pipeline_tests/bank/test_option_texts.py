"""The memoised option-text comparison (:class:`OptionTexts`) says exactly what :func:`clash` says."""

from hypothesis import given, settings
from hypothesis import strategies as st

from epic_levels_pipeline.bank.options import OptionSet, OptionTexts, clash

WORDS = ["the", "a", "of", "to", "glass", "glasses", "bowl", "metal", "box", "boxes", "lid", "plate", "cover",
         "pan", "pans", "glass", "ss", "Freezer", "drawer", "2"]
TEXT = st.lists(st.sampled_from(WORDS), max_size=4).map(" ".join)
TEXTS = OptionTexts()


@settings(max_examples=400, deadline=None)
@given(TEXT, TEXT, st.booleans())
def test_memoised_clash_matches_clash(a, b, entity):
    assert TEXTS.clash(a, b, entity) == clash(a, b, entity)
    assert TEXTS.clash(a, b, entity) == clash(a, b, entity)  # the second time from the memo


@settings(max_examples=400, deadline=None)
@given(TEXT, st.lists(TEXT, max_size=5), TEXT, st.booleans())
def test_option_set_clashes_as_pairwise(first, added, text, entity):
    """:class:`OptionSet` (the word-union shortcut) says what :func:`clash` says against every member."""
    beside = OptionSet(TEXTS, first, entity)
    for member in added:
        beside.add(member)
    assert beside.clashes(text) == any(clash(text, other, entity) for other in [first, *added])
    beside.clear()
    assert beside.clashes(text) == bool(clash(text, first, entity))


@settings(max_examples=400, deadline=None)
@given(TEXT, st.lists(TEXT, max_size=6), st.booleans())
def test_option_set_join_is_clashes_then_add(first, texts, entity):
    """:meth:`OptionSet.join` adds a text exactly when :meth:`OptionSet.clashes` says it may join."""
    joined, checked = OptionSet(TEXTS, first, entity), OptionSet(TEXTS, first, entity)
    for text in texts:
        may = not checked.clashes(text)
        if may:
            checked.add(text)
        assert joined.join(text) == may
    assert joined._by_word == checked._by_word and joined._wordless == checked._wordless
