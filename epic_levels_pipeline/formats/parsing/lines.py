"""The vocabulary of every reply parser: the :class:`Parsed` verdict, number words, and the reading of a reply's
lines (the answer line, the Because line, decoration) shared by all formats; :func:`answer_text` and
:func:`reason_text` read the open answer and the reason."""

from __future__ import annotations

import re
from dataclasses import dataclass

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
    :func:`.names.match_open`).
    """
    value = _answer_value(reply)
    if value is None:
        return _bad("no Answer: line")
    text = " ".join(_decorated(value).split())
    text = text.rstrip(".!;,").strip(_EDGE)
    if not text:
        return _bad("empty answer")
    return _ok(text)
