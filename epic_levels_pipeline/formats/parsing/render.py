"""Reply forms: how a value is written in a stated output form (what offline responders write), read back, and
how an abstention reads. :data:`REPLY_FORMS` holds one :class:`ReplyForm` per form; a format entry names its own."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ...annotations.language import LETTERS
from .closed import letter_as_written, parse_letter, parse_letter_set, parse_option_judgements, parse_yes_no
from .lines import _INLINE_BECAUSE, Parsed, answer_text

ABSTENTION = "cannot tell"


@dataclass(frozen=True)
class ReplyForm:
    """A stated output form. ``render(value)`` is the reply's body, ``parse(reply, n_options=…)`` its inverse;
    ``needs_reason``: a ``Because:`` line is required; ``abstain``: what a responder that cannot tell writes."""

    name: str
    render: Callable[[object], str]
    parse: Callable[..., Parsed]
    needs_reason: bool = False
    abstain: str = f"Answer: {ABSTENTION}"


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _letter(value, n_options: int = 26) -> str:
    if isinstance(value, (int,)) and not isinstance(value, bool):
        return LETTERS[value]
    letter = str(value).strip().upper()
    if len(letter) != 1 or letter not in LETTERS[:n_options]:
        raise ValueError(f"not an option letter: {value!r}")
    return letter


def _yes_no(value) -> str:
    word = ("yes" if value else "no") if isinstance(value, bool) else str(value).strip().lower()
    if word not in ("yes", "no"):
        raise ValueError(f"yes_no value must be yes/no or a bool, not {value!r}")
    return f"Answer: {word}"


def _letter_set(value) -> str:
    letters = sorted({_letter(v) for v in ([value] if isinstance(value, str) else value)})
    if not letters:
        raise ValueError("statements need at least one letter")
    return "Answer: " + ", ".join(letters)


def _open(value) -> str:
    text = _one_line(value)
    if not text or _INLINE_BECAUSE.search(text):
        raise ValueError(f"open answer must be non-empty and contain no 'Because:': {value!r}")
    return f"Answer: {text}"


def _judgements(value) -> str:
    return "\n".join(f"{LETTERS[i]}: {'true' if bool(v) else 'false'}" for i, v in enumerate(value))


def _open_text(reply, *, n_options: int = 4) -> Parsed:
    return answer_text(reply)


REPLY_FORMS: dict[str, ReplyForm] = {f.name: f for f in (
    ReplyForm("yes_no", _yes_no, lambda reply, *, n_options=4: parse_yes_no(reply)),
    ReplyForm("multiple_choice", lambda v: f"Answer: {_letter(v)}", parse_letter),
    ReplyForm("statements", _letter_set, parse_letter_set),
    ReplyForm("open", _open, _open_text),
    ReplyForm("option_judgement", _judgements, parse_option_judgements),
    ReplyForm("open_with_reason_open", _open, _open_text, needs_reason=True),
    ReplyForm("open_with_reason_judgement", _judgements, parse_option_judgements, needs_reason=True),
    # the letter alone, as HD-EPIC's authors ask it (an abstention is the bare words: no letter to read)
    ReplyForm("official_mcq", _letter, letter_as_written, abstain=ABSTENTION),
)}
FORMATS = tuple(REPLY_FORMS)  # the built-in forms


def reply_form(fmt: str) -> ReplyForm:
    """The form named ``fmt``; ValueError naming the known ones otherwise."""
    try:
        return REPLY_FORMS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; expected one of {tuple(REPLY_FORMS)}") from None


def render_reply(fmt: str, value, *, reason: str | None = None) -> str:
    """A reply in the stated output form ``fmt`` that the form's parser reads back as ``value``: ``yes_no`` a
    bool or yes/no, letter forms a letter or 0-based index, ``statements`` letters (sorted, deduplicated), open
    forms text (one line), judgements bools. ``reason`` appends ``Because: <sentence>`` (required by the
    ``open_with_reason_*`` forms); text or a reason holding ``Because:`` is refused (it would not read back)."""
    form = reply_form(fmt)
    body = form.render(value)
    if form.needs_reason and not (reason and reason.strip()):
        raise ValueError(f"format {fmt} needs a reason")
    if reason is not None and reason.strip():
        sentence = _one_line(reason)
        if _INLINE_BECAUSE.search(sentence):
            raise ValueError("a reason must not itself contain 'Because:'")
        body += f"\nBecause: {sentence}"
    return body


def parse_reply(fmt: str, reply, *, n_options: int = 4) -> Parsed:
    """Parse ``reply`` with the parser of form ``fmt`` (the inverse of :func:`render_reply`); open forms give
    :func:`answer_text` (a reason never changes it)."""
    return reply_form(fmt).parse(reply, n_options=n_options)


def machine_form(value) -> str:
    """A parsed value in the ``expected`` column's machine form (:mod:`epic_levels_pipeline.formats`):
    ``"yes"``, ``"B"``, a letter set as sorted ``"A,C"``, judgements as ``"true,false,false,true"``, a count
    as digits, open text unchanged."""
    if isinstance(value, (frozenset, set)):
        return ",".join(sorted(value))
    if isinstance(value, tuple):
        return ",".join("true" if v else "false" for v in value)
    return str(value)
