"""The answer formats, one :class:`Format` entry each: everything a format decides is found in its entry, so
adding a format is one entry (:func:`register_format`). Five base formats are asked of every bank question;
``open_with_reason`` re-asks a base item with a ``Because:`` line, ``official_mcq`` is for imported questions."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

from . import answers, item_text, rules
from .answers import OfflineAnswers
from .parsing import REPLY_FORMS, ReplyForm
from .rules import RuleVerdict

OPEN_WITH_REASON = "open_with_reason"
REASON_TOKENS = 30  # the estimate's tokens of a Because line
ASKED_OF = ("bank", "imported")  # the question sources: the generated bank, an imported benchmark


def stated_question(item) -> str:
    """The item's question without its stated output form (what the judge may see)."""
    return item.prompt.split("\n\nReply in exactly this format")[0].split(" Answer with ")[0].strip()


def lists_nothing(item) -> list[str]:
    return []


def lists_options(item) -> list[str]:
    return [str(o) for o in item.options]


def lists_statements(item) -> list[str]:
    return [s["text"] for s in json.loads(item.statements)]


def expected_value(item):
    return item.expected


@dataclass(frozen=True)
class Format:
    """One base answer format.

    - ``chance(n)``: the probability of a right answer by guessing among the ``n`` options (``counts``:
      ``options`` or ``statements``) without the clip; ``option_judgement``'s questions have exactly one true
      option, so its best content-blind reply (one option marked true) gets 1/n, not a coin's 1/2^n.
    - ``items(entry, q)``: the format's item rows of one base question (:mod:`.item_text`); ``asked_of``: the
      sources whose questions are asked in it.
    - ``reply`` / ``reason_reply``: the stated output forms (the ``open_with_reason`` variant, where it has one);
      ``rule``: a reply against an item row → verdict; ``answers``: the offline responders' replies.
    - ``free_text``: replies name an answer rather than pick listed ones (the judge decides undecided ones).
    - ``output_tokens``: the estimate's tokens of a reply; ``judge_question``: the question the judge sees;
      ``listed`` / ``answer_value``: what the export shows as the item's options, and a right reply's value.
    """

    name: str
    chance: Callable[[int], float]
    items: Callable[["Format", item_text.QuestionItems], list[dict]]
    reply: ReplyForm
    rule: Callable[[object, str], RuleVerdict]
    answers: OfflineAnswers
    output_tokens: int
    reason_reply: ReplyForm | None = None
    counts: str = "options"
    asked_of: tuple[str, ...] = ("bank", "imported")
    free_text: bool = False
    judge_question: Callable[[object], str] = stated_question
    listed: Callable[[object], list[str]] = lists_nothing
    answer_value: Callable[[object], object] = expected_value

    @property
    def reply_format(self) -> str:
        return self.reply.name

    @property
    def reason_reply_format(self) -> str | None:
        return self.reason_reply.name if self.reason_reply is not None else None


FORMATS: dict[str, Format] = {}


def register_format(entry: Format) -> Format:
    """Add a format (and its reply forms); its items are built, answered, scored and exported from then on."""
    FORMATS[entry.name] = entry
    for form in (entry.reply, entry.reason_reply):
        if form is not None:
            REPLY_FORMS[form.name] = form
    return entry


def unregister_format(name: str) -> None:
    entry = FORMATS.pop(name, None)
    used = {f.name for e in FORMATS.values() for f in (e.reply, e.reason_reply) if f is not None}
    for form in (entry.reply, entry.reason_reply) if entry else ():
        if form is not None and form.name not in used:
            REPLY_FORMS.pop(form.name, None)


_FORMS = REPLY_FORMS
for _entry in (
    Format("yes_no", lambda n: 1 / 2, item_text.yes_no_items, _FORMS["yes_no"], rules.yes_no_rule, answers.YES_NO,
           output_tokens=5),
    Format("multiple_choice", lambda n: 1 / n, item_text.multiple_choice_items, _FORMS["multiple_choice"],
           rules.multiple_choice_rule, answers.PICK_ONE, output_tokens=5, listed=lists_options),
    Format("official_mcq", lambda n: 1 / n, item_text.official_mcq_items, _FORMS["official_mcq"],
           rules.official_mcq_rule, answers.PICK_ONE, output_tokens=5, asked_of=("imported",)),
    Format("statements", lambda n: 1 / (2 ** n - 1), item_text.statements_items, _FORMS["statements"],
           rules.statements_rule, answers.STATEMENTS, output_tokens=5, counts="statements", asked_of=("bank",),
           listed=lists_statements, answer_value=lambda item: str(item.expected).split(",")),
    Format("open", lambda n: 0.0, item_text.open_items, _FORMS["open"], rules.open_rule, answers.OPEN,
           output_tokens=10, reason_reply=_FORMS["open_with_reason_open"], free_text=True),
    Format("option_judgement", lambda n: 1 / n, item_text.option_judgement_items, _FORMS["option_judgement"],
           rules.option_judgement_rule, answers.JUDGEMENTS, output_tokens=20,
           reason_reply=_FORMS["open_with_reason_judgement"], listed=lists_options,
           answer_value=lambda item: [part == "true" for part in str(item.expected).split(",")]),
):
    register_format(_entry)


def item_formats(source: str = "bank") -> tuple[str, ...]:
    """The item formats a source's questions are asked in, in registry order (``open_with_reason`` last)."""
    names = tuple(f.name for f in FORMATS.values() if source in f.asked_of)
    reasoned = any(f.reason_reply is not None for f in FORMATS.values() if source in f.asked_of)
    return names + ((OPEN_WITH_REASON,) if reasoned else ())


ITEM_FORMATS = item_formats("bank")  # the built-in formats of the bank's items
# Formats only an imported benchmark's items are asked in.
IMPORTED_FORMATS = tuple(f.name for f in FORMATS.values() if f.asked_of == ("imported",))


def format_of(name: str) -> Format:
    """The entry of base format ``name``; ValueError naming the known formats otherwise."""
    try:
        return FORMATS[name]
    except KeyError:
        known = item_formats("bank") + tuple(n for n in FORMATS if "bank" not in FORMATS[n].asked_of)
        raise ValueError(f"unknown format {name!r} (known: {', '.join(known)})") from None


def entry_of(item) -> Format:
    """The entry an item row is asked, answered and scored by (its base format's)."""
    return format_of(item.base_format)


def chance(fmt: str, *, n_options: int = 4, n_statements: int = 4, base_format: str | None = None) -> float:
    """The one place chance is decided, by the format's entry (``open_with_reason`` by its base format)."""
    entry = format_of(base_format or "open") if fmt == OPEN_WITH_REASON else format_of(fmt)
    return entry.chance(n_statements if entry.counts == "statements" else n_options)


def reply_format(item) -> str:
    """The reply form of an item row (``open_with_reason`` by its base format)."""
    entry = entry_of(item)
    return entry.reason_reply_format if item.format == OPEN_WITH_REASON else entry.reply_format


def rule_verdict(item, reply: str) -> RuleVerdict:
    """(parsed, correct, scored_by, note, n_marked_true) by the rule of the item's base format."""
    return entry_of(item).rule(item, reply)


def judge_question(item) -> str:
    """The question of an item as the judge sees it (no options, no stated output form)."""
    return entry_of(item).judge_question(item)


def reply_tokens(fmt: str, base_format: str | None = None) -> int:
    """The estimate's output tokens of a reply to an item of format ``fmt`` (a Because line adds its own)."""
    if fmt == OPEN_WITH_REASON:
        return format_of(base_format or "open").output_tokens + REASON_TOKENS
    return format_of(fmt).output_tokens
