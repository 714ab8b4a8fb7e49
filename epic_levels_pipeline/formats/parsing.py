"""Rule parsers for model replies, and the renderer offline responders use to write replies that parse back.

Every reply is plain text in a stated output format (:data:`FORMATS`). A parser returns :class:`Parsed`:

- ``parsed``    the rules read one value;
- ``unparsed``  the reply is not in the stated format, or contradicts itself (scored as not answered);
- ``undecided`` only from :func:`match_open`: the rules cannot decide which option an open answer names;
                the caller sends it to the LLM judge.

Decisions shared by all parsers (each parser's docstring names its own):

- **Because lines.** A line ``Because: <sentence>`` (markdown allowed) is removed before any answer is read,
  and so is ``Because:`` and everything after it on an ``Answer:`` line. :func:`reason_text` reads it
  separately; it never changes a verdict.
- **The answer line.** A line starting (after markdown, bullets, quotes) with ``Answer:`` — also
  ``**Answer:**``, ``**Answer**:``, ``Final answer:``, ``The answer:``, any case, spaces before the colon — is
  the answer line. When a reply has several, the **last** one is read (a model that corrects itself
  ends with its final answer). When the answer line is empty (``**Answer:**`` then a line ``B``), the next
  non-empty line is its value. Once there is an answer line nothing else in the reply is read: reasoning
  before or after it cannot change the verdict.
- **No answer line.** Per parser: a *bare* reply (the whole reply is just ``yes`` / ``B`` / ``(b).`` / ``3``,
  possibly in markdown or quotes) is accepted; letters and letter sets also accept a sentence ``The
  answer is B``; anything else is ``unparsed``. Option judgements have no answer line by format (four
  ``A: true`` lines) and are read from anywhere in the reply.
- **Decoration.** Markdown (``*``, ``_``, backticks), surrounding quotes, surrounding whitespace, case,
  and a trailing period are ignored everywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..annotations.language import LETTERS, noun_display

FORMATS = ("yes_no", "multiple_choice", "statements", "open", "option_judgement",
           "open_with_reason_open", "open_with_reason_judgement")
PARSED, UNPARSED, UNDECIDED = "parsed", "unparsed", "undecided"


@dataclass(frozen=True)
class Parsed:
    """A parser's verdict. ``value`` is None unless ``status == "parsed"``; ``note`` says why, for audits."""

    value: object | None
    status: str  # "parsed" | "unparsed" | "undecided"
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.status == PARSED


def _ok(value, note: str = "") -> Parsed:
    return Parsed(value, PARSED, note)


def _bad(note: str) -> Parsed:
    return Parsed(None, UNPARSED, note)


def _undecided(note: str) -> Parsed:
    return Parsed(None, UNDECIDED, note)


# --- number words: the one place they are read and written ----------------------------------------------

NUMBER_WORDS: dict[str, int] = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
# Words that state a count on their own. "none"/"never" are 0: a count question answered "never" says zero.
COUNT_WORDS: dict[str, int] = {"once": 1, "twice": 2, "thrice": 3, "none": 0, "never": 0}


def number_value(token: str) -> int | None:
    """``"3"`` → 3, ``"three"`` → 3, ``"twice"`` → 2, ``"none"`` → 0; anything else (incl. ``"3.5"``) → None."""
    t = str(token).strip().lower()
    if t.isdigit():
        return int(t)
    return NUMBER_WORDS.get(t, COUNT_WORDS.get(t))


def number_word(n: int) -> str:
    """0..20 as a word (``3`` → ``three``); larger numbers as digits."""
    words = list(NUMBER_WORDS)
    return words[n] if 0 <= n < len(words) else str(n)


# --- lines, the answer line, the Because line -----------------------------------------------------------

_LEAD = r"^[\s>*_`#\-•\"'“”]*"
_ANSWER_LINE = re.compile(_LEAD + r"(?:(?:my|the)\s+)?(?:final\s+|correct\s+)?answer[\s*_`]*:(.*)$", re.I)
_BECAUSE_LINE = re.compile(_LEAD + r"because[\s*_`]*:(.*)$", re.I)
_INLINE_BECAUSE = re.compile(r"\bbecause[\s*_`]*:", re.I)
_EDGE = " \t\r\n*_`~\"'“”‘’"


def _text(reply) -> str:
    return "" if reply is None else str(reply)


def _content_lines(reply) -> list[str]:
    """The reply's lines without Because lines and code fences."""
    return [ln for ln in _text(reply).splitlines()
            if not _BECAUSE_LINE.match(ln) and not ln.strip().startswith("```")]


def _answer_value(reply) -> str | None:
    """The value of the last answer line (``""`` when it and the next line are empty); None without one."""
    lines = _content_lines(reply)
    hits = [i for i, ln in enumerate(lines) if _ANSWER_LINE.match(ln)]
    if not hits:
        return None
    i = hits[-1]
    value = _INLINE_BECAUSE.split(_ANSWER_LINE.match(lines[i]).group(1))[0]
    if not value.strip(_EDGE):
        following = [ln for ln in lines[i + 1:] if ln.strip(_EDGE)]
        value = following[0] if following else ""
    return value


def _decorated(text: str) -> str:
    """Markdown emphasis and backticks removed, quotes and whitespace stripped from the ends."""
    text = re.sub(r"[*`]+", "", text)
    return text.strip(_EDGE)


def _bare(reply) -> str:
    """The whole reply (Because lines removed) as one decorated string, for the bare-reply fallbacks."""
    joined = " ".join(ln.strip() for ln in _content_lines(reply) if ln.strip())
    return _decorated(joined).rstrip(".!").strip(_EDGE)


def reason_text(reply) -> str | None:
    """The ``Because:`` sentence, or None.

    The last Because line wins (like the answer line); a ``Because:`` on the answer line itself counts when
    there is no Because line. Markdown/quotes are stripped; an empty Because is None.
    """
    found = None
    for ln in _text(reply).splitlines():
        m = _BECAUSE_LINE.match(ln)
        if m:
            found = m.group(1)
    if found is None:
        for ln in reversed(_text(reply).splitlines()):
            if _ANSWER_LINE.match(ln) and _INLINE_BECAUSE.search(ln):
                found = _INLINE_BECAUSE.split(ln, maxsplit=1)[1]
                break
    if found is None:
        return None
    reason = _decorated(found)
    return reason or None


def answer_text(reply) -> Parsed:
    """The open answer: the last answer line's text, decorated markdown/quotes and a trailing ``.``/``!`` removed.

    No answer line → unparsed (an open reply must say ``Answer:``; a bare sentence is not guessed at). An
    empty answer → unparsed. Case and inner wording are kept; ``?`` is kept (it is a hedge for
    :func:`match_open`).
    """
    value = _answer_value(reply)
    if value is None:
        return _bad("no Answer: line")
    text = " ".join(_decorated(value).split())
    text = text.rstrip(".!;,").strip(_EDGE)
    if not text:
        return _bad("empty answer")
    return _ok(text)


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


# --- rendering replies, and parsing them by format -------------------------------------------------------

def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _letter(value, n_options: int = 26) -> str:
    if isinstance(value, (int,)) and not isinstance(value, bool):
        return LETTERS[value]
    letter = str(value).strip().upper()
    if len(letter) != 1 or letter not in LETTERS[:n_options]:
        raise ValueError(f"not an option letter: {value!r}")
    return letter


def render_reply(fmt: str, value, *, reason: str | None = None) -> str:
    """A reply in the stated output format of ``fmt`` that the matching parser reads back as ``value``.

    - ``yes_no``: ``"yes"``/``"no"`` or a bool → ``Answer: yes``.
    - ``multiple_choice``: a letter or a 0-based index → ``Answer: B``.
    - ``statements``: letters or indices, non-empty → ``Answer: A, C`` (sorted, duplicates dropped).
    - ``open`` / ``open_with_reason_open``: text → ``Answer: <text>`` (whitespace collapsed to one line).
    - ``option_judgement`` / ``open_with_reason_judgement``: bools → ``A: true`` lines.
    - ``reason``: a ``Because: <sentence>`` line is appended (required by the two ``open_with_reason_*``
      formats, allowed for the others). An open text or reason containing ``Because:`` is refused, since it
      could not be read back unchanged.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {FORMATS}")
    if fmt == "yes_no":
        word = ("yes" if value else "no") if isinstance(value, bool) else str(value).strip().lower()
        if word not in ("yes", "no"):
            raise ValueError(f"yes_no value must be yes/no or a bool, not {value!r}")
        body = f"Answer: {word}"
    elif fmt == "multiple_choice":
        body = f"Answer: {_letter(value)}"
    elif fmt == "statements":
        letters = sorted({_letter(v) for v in ([value] if isinstance(value, str) else value)})
        if not letters:
            raise ValueError("statements need at least one letter")
        body = "Answer: " + ", ".join(letters)
    elif fmt in ("open", "open_with_reason_open"):
        text = _one_line(value)
        if not text or _INLINE_BECAUSE.search(text):
            raise ValueError(f"open answer must be non-empty and contain no 'Because:': {value!r}")
        body = f"Answer: {text}"
    else:
        body = "\n".join(f"{LETTERS[i]}: {'true' if bool(v) else 'false'}" for i, v in enumerate(value))
    if fmt.startswith("open_with_reason") and not (reason and reason.strip()):
        raise ValueError(f"format {fmt} needs a reason")
    if reason is not None and reason.strip():
        sentence = _one_line(reason)
        if _INLINE_BECAUSE.search(sentence):
            raise ValueError("a reason must not itself contain 'Because:'")
        body += f"\nBecause: {sentence}"
    return body


def parse_reply(fmt: str, reply, *, n_options: int = 4) -> Parsed:
    """Parse ``reply`` with the parser of ``fmt`` (the inverse of :func:`render_reply`).

    ``open`` formats return :func:`answer_text` (match it to options with :func:`match_open`); the reason of
    the ``open_with_reason_*`` formats is read with :func:`reason_text` and never changes this verdict.
    """
    if fmt == "yes_no":
        return parse_yes_no(reply)
    if fmt == "multiple_choice":
        return parse_letter(reply, n_options=n_options)
    if fmt == "statements":
        return parse_letter_set(reply, n_options=n_options)
    if fmt in ("open", "open_with_reason_open"):
        return answer_text(reply)
    if fmt in ("option_judgement", "open_with_reason_judgement"):
        return parse_option_judgements(reply, n_options=n_options)
    raise ValueError(f"unknown format {fmt!r}; expected one of {FORMATS}")


def machine_form(value) -> str:
    """A parsed value in the ``expected`` column's machine form (:mod:`epic_levels_pipeline.formats`):
    ``"yes"``, ``"B"``, a letter set as sorted ``"A,C"``, judgements as ``"true,false,false,true"``, a count
    as digits, open text unchanged."""
    if isinstance(value, (frozenset, set)):
        return ",".join(sorted(value))
    if isinstance(value, tuple):
        return ",".join("true" if v else "false" for v in value)
    return str(value)


__all__ = [
    "FORMATS", "LETTERS", "NUMBER_WORDS", "COUNT_WORDS", "Parsed", "answer_text", "machine_form", "match_open",
    "normalise_name",
    "number_value", "number_word", "parse_letter", "parse_letter_set", "parse_number", "parse_option_judgements",
    "parse_reply", "parse_yes_no", "reason_text", "render_reply", "resolve_open",
]


def resolve_open(answer: str, synonyms: list[list[str]]):
    """Open-name resolution: an answer equal (after normalisation) to synonyms of exactly one candidate
    names it; otherwise :func:`match_open` decides (whole-word phrases, negation, hedges)."""
    norm = normalise_name(answer)
    exact = [i for i, names in enumerate(synonyms) if any(normalise_name(n) == norm for n in names)]
    if len(exact) == 1:
        return Parsed(exact[0], "parsed", "exact name")
    return match_open(answer, synonyms)
