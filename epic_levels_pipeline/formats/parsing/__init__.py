"""Rule parsers for model replies, and the renderer offline responders use to write replies that parse back.

A parser returns :class:`Parsed` (``parsed``, ``unparsed``, or ``undecided`` for an open answer the rules cannot
settle, which the judge is asked). The last ``Answer:`` line decides, ``Because:`` lines never do, and markdown,
quotes and case are ignored (docs/design/formats-and-replies.md)."""

from __future__ import annotations

from ...annotations.language import LETTERS
from .closed import (letter_as_written, letter_upper_cased, parse_letter, parse_letter_set, parse_number,
                     parse_option_judgements, parse_yes_no)
from .lines import (COUNT_WORDS, NUMBER_WORDS, PARSED, UNDECIDED, UNPARSED, Parsed, answer_text, number_value,
                    number_word, reason_text)
from .names import match_open, normalise_name, resolve_open
from .render import FORMATS, REPLY_FORMS, ReplyForm, machine_form, parse_reply, render_reply, reply_form

__all__ = [
    "FORMATS", "LETTERS", "letter_as_written", "letter_upper_cased", "NUMBER_WORDS", "COUNT_WORDS", "Parsed", "answer_text", "machine_form", "match_open",
    "normalise_name",
    "number_value", "number_word", "parse_letter", "parse_letter_set", "parse_number", "parse_option_judgements",
    "parse_reply", "parse_yes_no", "reason_text", "render_reply", "reply_form", "REPLY_FORMS", "ReplyForm", "resolve_open",
]
