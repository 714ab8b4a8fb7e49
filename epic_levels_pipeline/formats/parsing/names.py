"""Open answers matched against option names: :func:`normalise_name`, :func:`match_open` (whole-word phrases,
plurals, negation, hedges) and :func:`resolve_open`."""

from __future__ import annotations

import re

from ...annotations.language import noun_display
from .lines import Parsed, _bad, _ok, _undecided


# --- open answers matched against option names ----------------------------------------------------------

_ARTICLES = {"the", "a", "an", "some"}
_IRREGULAR_PLURALS = {"knives": "knife", "leaves": "leaf", "loaves": "loaf", "halves": "half", "shelves": "shelf",
                      "children": "child", "teeth": "tooth", "feet": "foot", "mice": "mouse", "men": "man",
                      "women": "woman", "dice": "die"}
# Words that may follow a matched name without making it the modifier of a longer noun ("pan lid").
_FOLLOW_OK = {
    "and", "or", "but", "on", "in", "at", "from", "with", "without", "by", "near", "next", "beside", "behind",
    "under", "over", "above", "below", "into", "onto", "inside", "outside", "to", "of", "for", "is", "was",
    "are", "were", "be", "been", "being", "that", "which", "who", "it", "its", "he", "she", "they", "i", "you",
    "we", "then", "there", "here", "while", "when", "after", "before", "again", "too", "also", "only", "as",
    "so", "this", "these", "those", "itself", "has", "had", "have", "used", "held", "picked", "placed", "put",
    "taken", "lying", "sitting", "first", "last",
}
_NEGATION_WORDS = {"not", "no", "never", "none", "neither", "nor", "nothing", "without", "cannot"}
_HEDGE_WORDS = {"maybe", "perhaps", "possibly", "probably", "either", "or", "might", "unsure", "uncertain",
                "guess", "likely"}
_HEDGE_PHRASES = ("i think", "i believe", "not sure", "could be", "hard to tell")


def _singular_forms(word: str) -> frozenset[str]:
    """The word and what it could be the plural of (``dishes`` → dishes, dishe, dish).

    Two words are the same noun when their form sets intersect, so a singular never needs guessing right
    (``cookies`` → cookie via ``-s``, ``berries`` → berry via ``-ies``). Words of three letters or fewer and
    words in ``-ss``/``-us``/``-is`` (glass, asparagus) are kept as they are.
    """
    forms = {word}
    if word in _IRREGULAR_PLURALS:
        forms.add(_IRREGULAR_PLURALS[word])
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        forms.add(word[:-1])
        if word.endswith("es"):
            forms.add(word[:-2])
        if word.endswith("ies"):
            forms.add(word[:-3] + "y")
        if word.endswith("ves"):
            forms.update({word[:-3] + "f", word[:-3] + "fe"})
    return frozenset(forms)


def _segments(text: str) -> list[list[str]]:
    """Lower-cased word lists split at punctuation; hyphens/underscores are spaces, ``/`` is ``or``, articles
    and possessive ``'s`` are dropped."""
    text = str(text).lower().replace("’", "'").replace("/", " or ")
    text = re.sub(r"[_\-]", " ", text)
    out = []
    for seg in re.split(r"[,;.!?:()\[\]\"“”]+", text):
        words = [re.sub(r"'s$", "", w).strip("'") for w in re.findall(r"[a-z0-9']+", seg)]
        words = [w for w in words if w and w not in _ARTICLES]
        if words:
            out.append(words)
    return out


def normalise_name(name: str) -> tuple[str, ...]:
    """A synonym as words: ``head:modifier`` read as ``modifier head`` (``spoon:wooden`` → wooden spoon),
    lower case, punctuation and articles dropped (``The Wooden-Spoon`` → ``("wooden", "spoon")``)."""
    display = noun_display(name) if ":" in str(name) else str(name)
    return tuple(w for seg in _segments(display) for w in seg)


def _occurrences(words: list[str], phrase: tuple[str, ...]) -> list[tuple[int, int]]:
    """Where ``phrase`` occurs in ``words`` as whole words, ending where the noun phrase ends.

    A match directly followed by a word that is not in :data:`_FOLLOW_OK` is a modifier of a longer noun
    (``pan`` in ``pan lid``, ``spoon`` in ``spoon rest``), not a naming of the candidate. A match directly
    after ``of`` is the complement of another head (``pan`` in ``lid of the pan``, ``tea`` in ``cup of tea``)
    and is not counted either.
    """
    n, k = len(words), len(phrase)
    forms = [_singular_forms(w) for w in words]
    target = [_singular_forms(w) for w in phrase]
    spans = []
    for i in range(n - k + 1):
        if all(forms[i + j] & target[j] for j in range(k)):
            if i + k < n and words[i + k] not in _FOLLOW_OK:
                continue
            if i > 0 and words[i - 1] == "of":
                continue
            spans.append((i, i + k))
    return spans


def _hedge(text: str, words: set[str]) -> str:
    if "?" in text:
        return "question mark"
    lowered = " ".join(re.findall(r"[a-z']+", text.lower().replace("’", "'")))
    for phrase in _HEDGE_PHRASES:
        if re.search(rf"\b{re.escape(phrase)}\b", lowered):
            return phrase
    hit = sorted(words & _HEDGE_WORDS)
    return hit[0] if hit else ""


def match_open(answer: str, candidates: list[list[str]], *, key_index: int | None = None) -> Parsed:
    """Which option an open answer names: ``value`` = the option's index, or ``undecided`` for the judge.

    ``candidates[i]`` are option i's synonyms (option text, catalogue instances; ``head:modifier`` allowed).
    Both sides are normalised (:func:`normalise_name`; plurals matched via :func:`_singular_forms`). A
    candidate is named when one of its synonyms occurs as a whole-word phrase that ends the noun phrase
    (``wooden spoon`` names ``spoon``; ``pan lid`` and ``lid of the pan`` do not name ``pan``). A named span strictly inside a
    longer span of another candidate is discarded (``chopping board`` beats ``board``; ``wooden spoon`` beats
    ``spoon``). Decisions:

    - exactly one candidate named, no negation, no hedge → parsed;
    - two or more named (``the spoon and the fork``) → undecided;
    - negated (``not``, ``no``, ``n't``, ``never``, ``none``, ``neither``, ``nothing``, ``without``) → undecided,
      even if one name matches: ``not the spoon, the fork`` is not read by rules;
    - hedged (``maybe``, ``perhaps``, ``possibly``, ``probably``, ``either``, ``or``, ``might``, ``I think``,
      ``I believe``, ``not sure``, ``could be``, ``?``) → undecided;
    - nothing named → undecided (the judge decides whether an unlisted word is a synonym, not the rules);
    - an empty answer → unparsed (nothing to judge).

    Negation and hedge words are looked for in the whole answer, also inside a candidate's own name (no
    option text in this benchmark contains them). ``key_index`` is accepted for callers' symmetry and not used:
    which option is the key never influences what the answer is read as.
    """
    del key_index
    segments = _segments(answer or "")
    if not segments:
        return _bad("empty answer")
    all_words = {w for seg in segments for w in seg}
    raw_words = set(re.findall(r"[a-z']+", str(answer).lower().replace("’", "'")))
    negation = sorted((raw_words & _NEGATION_WORDS) | {w for w in raw_words if w.endswith("n't")})
    if negation:
        return _undecided(f"negated ({negation[0]})")
    hedge = _hedge(str(answer), all_words)
    if hedge:
        return _undecided(f"hedged ({hedge})")

    spans: list[tuple[int, int, int, int, str]] = []  # (candidate, segment, start, end, synonym)
    for ci, synonyms in enumerate(candidates):
        for syn in synonyms:
            if not isinstance(syn, str):  # a missing synonym (None/NaN) names nothing
                continue
            phrase = normalise_name(syn)
            if not phrase:
                continue
            for si, seg in enumerate(segments):
                for start, end in _occurrences(seg, phrase):
                    spans.append((ci, si, start, end, " ".join(phrase)))

    def inside_longer_other(s) -> bool:
        ci, si, a, b, _ = s
        return any(o[0] != ci and o[1] == si and o[2] <= a and b <= o[3] and (o[3] - o[2]) > (b - a) for o in spans)

    kept = [s for s in spans if not inside_longer_other(s)]
    named = sorted({s[0] for s in kept})
    if not named:
        return _undecided("no candidate named")
    if len(named) > 1:
        return _undecided(f"several candidates named: {named}")
    best = max((s for s in kept), key=lambda s: s[3] - s[2])
    return _ok(named[0], f"matched {best[4]!r}")


def resolve_open(answer: str, synonyms: list[list[str]]):
    """Open-name resolution: an answer equal (after normalisation) to synonyms of exactly one candidate
    names it; otherwise :func:`match_open` decides (whole-word phrases, negation, hedges)."""
    norm = normalise_name(answer)
    exact = [i for i, names in enumerate(synonyms) if any(normalise_name(n) == norm for n in names)]
    if len(exact) == 1:
        return Parsed(exact[0], "parsed", "exact name")
    return match_open(answer, synonyms)
