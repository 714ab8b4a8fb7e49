"""What a question's options give away without the clip (:func:`prior_pick`, a text-only prior at its crudest),
and when two options name the same thing (:func:`clash`: equal after normalisation, nested, or one head noun),
the rule the ``distinct_options`` check re-applies."""

from __future__ import annotations

import re
from collections import Counter

FILLER = frozenset({"the", "a", "an", "of", "some", "with", "to", "into", "onto", "in", "on", "from", "its", "their"})
ENTITY_KINDS = frozenset({"object", "noun"})
_WORD = re.compile(r"[a-z0-9]+")


def _stem(word: str) -> str:
    if (len(word) > 3 and word.endswith("es") and word[-3] in "sxz") or (len(word) > 5 and word.endswith("oes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _stems(text: str) -> list[str]:
    """The option's words, in order: lower case, no articles or filler words, singular."""
    return [_stem(w) for w in _WORD.findall(str(text).lower()) if w not in FILLER]


def option_words(text: str) -> Counter:
    """The words that make an option what it is: lower case, no articles or filler words, singular."""
    return Counter(_stems(text))


def clash(a: str, b: str, entity: bool = False) -> str:
    """Why options ``a`` and ``b`` cannot stand side by side ("" when they can)."""
    stems_a, stems_b = _stems(a), _stems(b)
    return _clash(Counter(stems_a), Counter(stems_b), _head(stems_a), _head(stems_b), entity)


def _clash(wa: Counter, wb: Counter, head_a: str, head_b: str, entity: bool) -> str:
    if wa == wb:
        return "same entity after normalisation"
    if not wa or not wb:
        return ""
    if wa <= wb or wb <= wa:
        return "one is nested in the other"
    if entity and head_a and head_a == head_b:
        return "same head noun"
    return ""


class OptionTexts:
    """Option texts' words and head nouns, worked out once per text: :func:`clash` on texts seen before
    without re-reading them (word multisets compared as plain dicts, or as sets when no word repeats).
    Keep one per catalogue (its texts are the catalogue's and the clips')."""

    def __init__(self) -> None:
        self._memo: dict[str, tuple[dict, frozenset | None, str]] = {}

    def words(self, text: str) -> tuple[dict, frozenset | None, str]:
        """(:func:`option_words` as a dict, its words as a set when none repeats, head noun) of ``text``."""
        got = self._memo.get(text)
        if got is None:
            stems = _stems(text)  # (read once for both: :func:`option_words` and :func:`_head`)
            words = dict(Counter(stems))
            plain = frozenset(words) if len(words) == len(stems) else None  # no word repeats
            got = self._memo[text] = (words, plain, _head(stems))
        return got

    def clash(self, a: str, b: str, entity: bool = False) -> str:
        """:func:`clash` of two texts."""
        return self._clash(self.words(a), self.words(b), entity)

    def clashes_any(self, text: str, others, entity: bool = False) -> bool:
        """Does ``text`` clash with any of ``others`` (:meth:`clash`, its words read once)?"""
        mine = self.words(text)
        return any(self._clash(mine, self.words(other), entity) for other in others)

    @staticmethod
    def _clash(a: tuple[dict, frozenset | None, str], b: tuple[dict, frozenset | None, str], entity: bool) -> str:
        (wa, sa, ha), (wb, sb, hb) = a, b
        if wa == wb:
            return "same entity after normalisation"
        if not wa or not wb:
            return ""
        if sa is not None and sb is not None:
            nested = sa <= sb or sb <= sa
        else:
            nested = _within(wa, wb) or _within(wb, wa)
        if nested:
            return "one is nested in the other"
        if entity and ha and ha == hb:
            return "same head noun"
        return ""


def _within(a: dict, b: dict) -> bool:
    """``Counter(a) <= Counter(b)`` for word counts (all positive): every word of ``a`` stands in ``b`` at
    least as often — read off the dicts, without the two Counters made per comparison (a test compares them)."""
    get = b.get
    return all(count <= get(word, 0) for word, count in a.items())


class OptionSet:
    """Option texts side by side (the first, then each one added), asking whether another may join them:
    :meth:`OptionTexts.clashes_any` against them all. Every clash needs a shared word (equal words, nested
    words, the same head noun), and a text without words clashes only with another without words, so a
    text is compared only with the texts that share one of its words (an index by word)."""

    def __init__(self, texts: OptionTexts, first: str, entity: bool = False):
        self._texts = texts
        self._memo = texts._memo  # (looked up first by :meth:`join`: most texts were read before)
        self._first = texts.words(first)
        self._entity = entity
        self.clear()

    def clear(self) -> None:
        """Back to the first text alone (:meth:`_add` of its words, read once in ``__init__``)."""
        first = self._first
        # the :meth:`OptionTexts.words` of the texts holding each word
        self._by_word: dict[str, list[tuple]] = {word: [first] for word in first[0]}
        self._wordless = 0 if first[0] else 1

    def clashes(self, text: str) -> bool:
        """Does ``text`` clash with any text in the set?"""
        return self._clashes(self._texts.words(text))

    def add(self, text: str) -> None:
        self._add(self._texts.words(text))

    def join(self, text: str) -> bool:
        """Add ``text`` unless it clashes with a text in the set; whether it was added (its words read once).
        (:meth:`_clashes` then :meth:`_add`, their common case inline: a draw joins thousands of texts.)"""
        mine = self._memo.get(text) or self._texts.words(text)
        words = mine[0]
        by_word = self._by_word
        if not words:
            if self._wordless:
                return False
            self._wordless = 1
            return True
        if not by_word.keys().isdisjoint(words) and self._shares_clash(mine):
            return False
        for word in words:
            held = by_word.get(word)
            if held is None:
                by_word[word] = [mine]
            else:
                held.append(mine)
        return True

    def _clashes(self, mine: tuple[dict, frozenset | None, str]) -> bool:
        if not mine[0]:
            return self._wordless > 0
        if self._by_word.keys().isdisjoint(mine[0]):  # the common case, decided without a loop
            return False
        return self._shares_clash(mine)

    def _shares_clash(self, mine: tuple[dict, frozenset | None, str]) -> bool:
        """Does ``mine`` (with words) clash with a member sharing one of its words?

        :meth:`OptionTexts._clash` as a yes or no, its common case inline: both texts have words (a member is
        indexed by its words), so for two texts whose words do not repeat "same entity" (equal sets) is a
        case of "nested" (one set within the other), and the head nouns are compared only for entities."""
        by_word, clash, entity = self._by_word, OptionTexts._clash, self._entity
        plain, head = mine[1], mine[2]
        for word in mine[0]:  # (a member sharing two words may be compared twice: the answer is the same)
            for member in by_word.get(word, ()):
                if entity and member[2] == head:
                    return True
                theirs = member[1]
                if plain is not None and theirs is not None:
                    if plain <= theirs or theirs <= plain:
                        return True
                elif clash(mine, member, entity):
                    return True
        return False

    def _add(self, mine: tuple[dict, frozenset | None, str]) -> None:
        self._wordless += not mine[0]
        for word in mine[0]:
            self._by_word.setdefault(word, []).append(mine)


def _head(stems: list[str]) -> str:
    """The head noun of an option: the last of its words (:func:`_stems`), "" when it has none."""
    return stems[-1] if stems else ""


def option_clashes(options: list[str], entity: bool = False) -> list[str]:
    """Every pair of options that clash, as ``'a' / 'b': reason``."""
    out = []
    for i in range(len(options)):
        for j in range(i + 1, len(options)):
            reason = clash(options[i], options[j], entity)
            if reason:
                out.append(f"{options[i]!r} / {options[j]!r}: {reason}")
    return out


def prior_pick(frequencies: list[int], least: bool = False) -> int:
    """The option a frequency prior picks: the most frequent (ties: the first), or the least frequent."""
    sign = -1 if least else 1
    return max(range(len(frequencies)), key=lambda i: (sign * frequencies[i], -i))
