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

The parsers live by concern: :mod:`.lines` (the verdict, number words, answer and Because lines), :mod:`.closed`
(yes/no, letters, letter sets, judgements, counts), :mod:`.names` (open answers against option names) and
:mod:`.render` (replies written and parsed by format); every name is importable from here.
"""

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
