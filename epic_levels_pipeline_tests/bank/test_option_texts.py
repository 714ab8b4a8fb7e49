"""The memoised option-text comparison (:class:`OptionTexts`) says exactly what :func:`clash` says."""

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from epic_levels_pipeline.bank.options import _WORD, _stem, FILLER, OptionSet, OptionTexts, clash, option_words

WORDS = ["the", "a", "of", "to", "glass", "glasses", "bowl", "metal", "box", "boxes", "lid", "plate", "cover",
         "pan", "pans", "glass", "ss", "Freezer", "drawer", "2"]
TEXT = st.lists(st.sampled_from(WORDS), max_size=4).map(" ".join)
TEXTS = OptionTexts()


@settings(deadline=None)
@given(TEXT, TEXT, st.booleans())
def test_memoised_clash_matches_clash(a, b, entity):
    assert TEXTS.clash(a, b, entity) == clash(a, b, entity)
    assert TEXTS.clash(a, b, entity) == clash(a, b, entity)  # the second time from the memo


@settings(deadline=None)
@given(TEXT, st.lists(TEXT, max_size=5), TEXT, st.booleans())
def test_option_set_clashes_as_pairwise(first, added, text, entity):
    """:class:`OptionSet` (the word-union shortcut) says what :func:`clash` says against every member."""
    beside = OptionSet(TEXTS, first, entity)
    for member in added:
        beside.add(member)
    assert beside.clashes(text) == any(clash(text, other, entity) for other in [first, *added])
    beside.clear()
    assert beside.clashes(text) == bool(clash(text, first, entity))


@settings(deadline=None)
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


@settings(deadline=None)
@given(st.one_of(TEXT, st.text(max_size=30)))
def test_words_read_once_are_the_plain_rule(text):
    """Words and head noun read in one pass equal the rule spelled out: the non-filler words' stems as a
    multiset, a set when none repeats, and the last of them as the head noun."""
    found = [w for w in _WORD.findall(text.lower()) if w not in FILLER]
    words = Counter(_stem(w) for w in found)
    assert option_words(text) == words
    plain = frozenset(words) if all(n == 1 for n in words.values()) else None
    assert OptionTexts().words(text) == (dict(words), plain, _stem(found[-1]) if found else "")


@settings(deadline=None)
@given(st.dictionaries(st.sampled_from(WORDS), st.integers(1, 3), max_size=5),
       st.dictionaries(st.sampled_from(WORDS), st.integers(1, 3), max_size=5))
def test_within_is_counter_inclusion(a, b):
    """:func:`options._within` of two word counts is ``Counter(a) <= Counter(b)``."""
    from epic_levels_pipeline.bank.options import _within

    assert _within(a, b) == (Counter(a) <= Counter(b))
    assert _within(b, a) == (Counter(b) <= Counter(a))
