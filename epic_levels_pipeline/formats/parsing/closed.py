"""Parsers of the closed formats: yes/no, one option letter, a letter set, option judgements, a count."""

from __future__ import annotations

import re

from ...annotations.language import LETTERS
from .lines import (_ANSWER_LINE, _INLINE_BECAUSE, Parsed, _answer_value, _bad, _bare, _content_lines, _decorated, _ok,
                    number_value)


# --- yes / no -------------------------------------------------------------------------------------------

def parse_yes_no(reply) -> Parsed:
    """``"yes"`` or ``"no"``.

    - Answer line: its first word must be yes or no (``Answer: Yes, the tap runs`` → yes); if the other word
      also occurs on the line (``Answer: yes or no``, ``Answer: no... yes``) → unparsed.
    - ``true``/``false``, ``maybe``, ``not`` as the first word → unparsed (not the stated format).
    - No answer line: only a bare ``yes``/``no`` reply (``Yes.``, ``**no**``) is accepted.
    """
    value = _answer_value(reply)
    if value is None:
        bare = _bare(reply).lower()
        return _ok(bare) if bare in ("yes", "no") else _bad("no Answer: line and not a bare yes/no")
    words = re.findall(r"[a-z']+", _decorated(value).lower())
    if not words:
        return _bad("empty answer")
    first = words[0]
    if first not in ("yes", "no"):
        return _bad(f"answer starts with {first!r}, not yes/no")
    other = "no" if first == "yes" else "yes"
    if other in words:
        return _bad("both yes and no on the answer line")
    return _ok(first)


# --- letters --------------------------------------------------------------------------------------------

_NEGATION = re.compile(r"\b(?:not|no|never|none|neither|nor|cannot)\b|n['’]t\b", re.I)
# One option letter: "(b)", "[b]" or a lone letter not inside a word.
_LETTER_TOKEN = r"(?:\(\s*([A-Za-z])\s*\)|\[\s*([A-Za-z])\s*\]|([A-Za-z])(?![A-Za-z0-9'’]))"
_LETTER_LEAD = re.compile(r"^\s*(?:(?:option|choice|letter|statements?|options)\s*:?\s*)?" + _LETTER_TOKEN, re.I)
_ANY_LETTER = re.compile(r"(?<![A-Za-z0-9'’])" + _LETTER_TOKEN)
_LETTER_AT = re.compile(_LETTER_TOKEN)
_BARE_TOKEN = r"[(\[]?\s*[A-Za-z]\s*[)\]]?"
_BARE_LIST = re.compile(_BARE_TOKEN + r"(?:(?:\s*(?:[,;&/+]|\band\b)\s*|\s+)" + _BARE_TOKEN + r")*")
# Words that may follow an option letter "A" without making it the article ("A is correct", "A and C").
_AFTER_LETTER = {"is", "and", "or", "because", "since", "as", "was", "are", "were"}
_ANSWER_IS = re.compile(
    r"\b(?:the\s+)?(?:correct\s+|final\s+|right\s+|best\s+)?(?:answer|option|choice)\s+(?:is|would\s+be|=)\s*:?\s*(.*)$",
    re.I)


def _is_article(raw: str, after: str, parenthesised: bool) -> bool:
    """``A``/``a`` directly followed by a word (``A beep``, ``a spoon``) is the article, not option A."""
    if parenthesised or raw not in "aA":
        return False
    m = re.match(r"\s+([A-Za-z]+)", after)
    return bool(m) and m.group(1).lower() not in _AFTER_LETTER


def _other_letters(rest: str, n_options: int) -> set[str]:
    """Option letters named in the text after the answer's letter(s).

    Counted: a parenthesised letter; a lone ``B``/``C``/``D`` (either case); ``A``/``a`` when not followed by a
    word (``or A.``), and upper-case ``A`` after ``or``/``and``/a comma even when a word follows (``C or A is
    right``). Not counted: the article (``B. A beep``, ``B, a spoon``), letters beyond the options (``I``).
    """
    found: set[str] = set()
    for m in _ANY_LETTER.finditer(rest):
        paren = m.group(1) or m.group(2)
        raw = paren or m.group(3)
        letter = raw.upper()
        if letter not in LETTERS[:n_options]:
            continue
        if paren or raw not in "aA":
            found.add(letter)
            continue
        after, before = rest[m.end():], rest[:m.start()]
        if not _is_article(raw, after, False):
            found.add(letter)
        elif raw == "A" and re.search(r"(?:\bor|\band|,)\s*$", before, re.I):
            found.add(letter)
    return found


def _letter_lead(value: str) -> tuple[str, "re.Match | None", Parsed | None]:
    """The answer line's text and the match of its leading option letter, or why it has none (a negated
    answer line is refused whatever letter follows)."""
    text = _decorated(value)
    if _NEGATION.search(text):
        return text, None, _bad("negation on the answer line")
    m = _LETTER_LEAD.match(text)
    if not m:
        return text, None, _bad(f"no option letter at the start of {text[:40]!r}")
    return text, m, None


def _letter_from_value(value: str, n_options: int) -> Parsed:
    text, m, refused = _letter_lead(value)
    if refused is not None:
        return refused
    paren = m.group(1) or m.group(2)
    raw = paren or m.group(3)
    rest = text[m.end():]
    if _is_article(raw, rest, bool(paren)):
        return _bad("'a' followed by a word reads as the article, not option A")
    letter = raw.upper()
    if letter not in LETTERS[:n_options]:
        return _bad(f"letter {letter} is not one of the {n_options} options")
    others = _other_letters(rest, n_options) - {letter}
    if others:
        return _bad(f"two different letters: {letter} and {''.join(sorted(others))}")
    return _ok(letter)


def _answer_is_values(reply) -> list[str]:
    return [m.group(1) for ln in _content_lines(reply) for m in [_ANSWER_IS.search(ln)] if m]


def _read_letters(reply, from_value, is_bare, names: str, bare_name: str) -> Parsed:
    """The one reading order of letter replies: the ``Answer:`` line; else a bare reply; else ``The answer
    is …`` sentences, which must all agree."""
    value = _answer_value(reply)
    if value is not None:
        return from_value(value)
    bare = _bare(reply)
    if is_bare(bare):
        return from_value(bare)
    said = _answer_is_values(reply)
    if said:
        verdicts = [from_value(v) for v in said]
        values = {v.value for v in verdicts}
        if all(v.ok for v in verdicts) and len(values) == 1:
            return _ok(values.pop(), "from 'the answer is' sentence")
        return _bad(f"'the answer is' sentences disagree or do not name {names}")
    return _bad(f"no Answer: line and not {bare_name}")


def parse_letter(reply, *, n_options: int = 4) -> Parsed:
    """One option letter, upper case (``"B"``).

    Accepted: ``Answer: B``, ``Answer: (b)``, ``Answer: B.``, ``Answer: B) the spoon``, ``**Answer:** B``,
    ``Answer: Option B``; without an answer line a bare ``B`` / ``(B)`` / ``B.`` reply or a sentence ``The
    answer is B`` (every such sentence must agree).

    Unparsed:
    - a letter inside a word (``Answer: Bowl``); a letter beyond ``n_options`` (``Answer: E``);
    - two different letters (``B or C``, ``B, C``, ``C or A is right``) — but the article after a letter is
      not a letter (``Answer: B. A beep`` → B); ``Answer: A spoon`` / ``a spoon`` → unparsed (article);
    - any negation on the answer line (``not B``, ``B is not right``, ``B. No other fits``): a negation
      there makes the letter's polarity unclear, so it is never guessed.

    Hedges on the answer line (``Answer: B (I think)``) do not matter: the reply committed to one letter.
    """
    return _read_letters(reply, lambda v: _letter_from_value(v, n_options),
                         lambda bare: re.fullmatch(r"[(\[]?\s*[A-Za-z]\s*[)\].]?", bare), "one letter", "a bare letter")


_LIST_SEP = re.compile(r"\s*(?:[,;&/+]\s*(?:and\s+)?|\band\b\s*|\s)\s*", re.I)


def _letter_set_from_value(value: str, n_options: int) -> Parsed:
    text, m, refused = _letter_lead(value)
    if refused is not None:
        return refused
    raws: list[str] = []
    pos = 0
    while m:
        paren = m.group(1) or m.group(2)
        raw = paren or m.group(3)
        if _is_article(raw, text[m.end():], bool(paren)):
            break
        raws.append(raw)
        pos = m.end()
        sep = _LIST_SEP.match(text, pos)
        m = _LETTER_AT.match(text, sep.end()) if sep else None
    if not raws:
        return _bad("'a' followed by a word reads as the article, not option A")
    letters = {r.upper() for r in raws}
    beyond = letters - set(LETTERS[:n_options])
    if beyond:
        return _bad(f"letter(s) {''.join(sorted(beyond))} beyond the {n_options} options")
    others = _other_letters(text[pos:], n_options) - letters
    if others:
        return _bad(f"more letters after the list: {''.join(sorted(others))}")
    return _ok(frozenset(letters))


def parse_letter_set(reply, *, n_options: int = 4) -> Parsed:
    """The set of letters selected as true (a ``frozenset`` of upper-case letters, never empty).

    ``A, C`` = ``A and C`` = ``A,C`` = ``C, A`` = ``(a) (c)`` = ``A & C``; duplicates are fine (``A, A, C``).
    Words after the list are ignored (``A and C are true``) unless they name further letters.
    Unparsed: empty/``none`` (the format requires at least one), letters beyond ``n_options``, negation on
    the answer line (``all but B``-style wording with ``not``), no letter first. Without an answer line a bare
    list (``A, C``) or ``The answer is A and C`` is accepted.
    """
    return _read_letters(reply, lambda v: _letter_set_from_value(v, n_options), _BARE_LIST.fullmatch, "letters",
                         "a bare letter list")


# --- option judgements (4b) -----------------------------------------------------------------------------

_TRUTH = {"true": True, "false": False, "yes": True, "no": False, "t": True, "f": False}
_JUDGEMENT = re.compile(
    r"^[\s>*_`\-•]*(?:\(\s*([A-Za-z])\s*\)|([A-Za-z])[*_`]*\s*[:.)=\-])[\s*_`]*(true|false|yes|no|t|f)(?![A-Za-z'’])(.*)$",
    re.I)


def _judgement_items(reply) -> list[str]:
    """Lines, plus the answer line split at commas/semicolons (``Answer: A: true, B: false, ...``)."""
    items: list[str] = []
    for ln in _content_lines(reply):
        m = _ANSWER_LINE.match(ln)
        if m:
            items.extend(re.split(r"[,;]", _INLINE_BECAUSE.split(m.group(1))[0]))
        else:
            items.append(ln)
    return items


def parse_option_judgements(reply, *, n_options: int = 4) -> Parsed:
    """One bool per option, in letter order (``(True, False, False, True)``).

    A judgement is a line (or an item of an ``Answer:`` line split at commas) that *starts* with a letter and a
    separator (``A:``, ``A)``, ``(A)``, ``A.``, ``A -``, markdown ``**A:**``, a bullet) followed by ``true``/
    ``false``/``yes``/``no``/``T``/``F`` (any case); lines may come in any order. Text after the value on the
    same line is ignored unless it contains the opposite of ``true``/``false`` (``A: true/false`` → unparsed).
    Prose anywhere (``Statement A is true because…``, ``I think B: true too`` — not at the line start) is
    not a judgement, so trailing reasoning with ``true`` in it changes nothing.

    Unparsed: a letter missing, the same letter judged twice differently, a judged letter beyond
    ``n_options``. The same letter judged twice the same way is fine.
    """
    judged: dict[str, bool] = {}
    for item in _judgement_items(reply):
        m = _JUDGEMENT.match(item)
        if not m:
            continue
        letter = (m.group(1) or m.group(2)).upper()
        value = _TRUTH[m.group(3).lower()]
        rest = m.group(4).lower()
        if re.search(r"\b(?:false)\b" if value else r"\b(?:true)\b", rest):
            return _bad(f"{letter} judged both true and false on one line")
        if letter not in LETTERS[:n_options]:
            return _bad(f"judged option {letter}, which does not exist")
        if judged.get(letter, value) != value:
            return _bad(f"{letter} judged twice, differently")
        judged[letter] = value
    missing = [x for x in LETTERS[:n_options] if x not in judged]
    if missing:
        return _bad(f"no judgement for {', '.join(missing)}")
    return _ok(tuple(judged[x] for x in LETTERS[:n_options]))


# --- numbers --------------------------------------------------------------------------------------------

_NUMBER_TOKEN = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)?(?![\w])|[a-z]+", re.I)


def _numbers_in(text: str) -> tuple[set[int], str]:
    found: set[int] = set()
    for tok in _NUMBER_TOKEN.findall(text.lower()):
        if re.fullmatch(r"\d+[.,]\d+", tok):
            return set(), f"{tok!r} is not a whole number"
        n = number_value(tok)
        if n is not None:
            found.add(n)
    return found, ""


def parse_number(reply) -> Parsed:
    """A whole count (int).

    Read: digits, number words zero..twenty, ``once``/``twice``/``thrice``, ``none``/``never`` (0); ``three
    times`` → 3; the same number twice is fine (``3 (three)``). Unparsed: two different numbers (``2 or 3``,
    ``twenty-one`` reads as 20 and 1), a decimal, ``not``/``n't`` on the answer line, no number. Without an
    answer line only a bare number reply (``3``, ``Three times.``) is accepted.
    """
    value = _answer_value(reply)
    if value is None:
        bare = _bare(reply).lower()
        if not re.fullmatch(r"[a-z0-9]+(?:\s+times?)?", bare):
            return _bad("no Answer: line and not a bare number")
        value = bare
    text = _decorated(value)
    if re.search(r"\bnot\b|n['’]t\b", text, re.I):
        return _bad("negation on the answer line")
    found, problem = _numbers_in(text)
    if problem:
        return _bad(problem)
    if len(found) != 1:
        return _bad("no number" if not found else f"different numbers: {sorted(found)}")
    return _ok(found.pop())


# --- the five-choice letter item as its authors read it (HD-EPIC's VQA protocol) -------------------------

def letter_as_written(reply, *, n_options: int = 5) -> Parsed:
    """The option of the first A–Z character of the reply **as written** (HD-EPIC's ``parse_response``): case
    matters and nothing else is read, so ``B`` and ``(B) the spoon`` are B, ``b`` has no letter, ``The answer is
    B`` reads ``T`` and ``Answer: B`` reads ``A``. No capital, or one beyond ``n_options`` (``T``), is unreadable
    (``unparsed``: wrong, as the authors count it)."""
    for ch in str(reply or ""):
        if "A" <= ch <= "Z":
            index = ord(ch) - ord("A")
            if index < n_options:
                return _ok(ch, "first capital letter as written")
            return _bad(f"first capital letter {ch!r} is no option (A–{chr(ord('A') + n_options - 1)})")
    return _bad("no capital letter A–Z in the reply")


def letter_upper_cased(reply, *, n_options: int = 5) -> Parsed:
    """lmms-eval's reading of the same item: the reply stripped and upper-cased, then its first A–Z character, so
    ``b`` and ``b.`` are B and ``cannot tell`` reads C; ``The answer is B`` still reads ``T`` (unreadable)."""
    return letter_as_written(str(reply or "").strip().upper(), n_options=n_options)
