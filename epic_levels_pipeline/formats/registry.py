"""The answer formats, one entry each: name, chance, prompt template, reply parser and scoring rule.

A base question is asked in five base formats (``yes_no``, ``multiple_choice``, ``statements``, ``open``,
``option_judgement``); ``open_with_reason`` asks the ``open`` or ``option_judgement`` item again with a
``Because:`` line and is scored by its base format. :data:`FORMATS` holds one :class:`Format` per base
format; everything that depends on the format — the chance an item is right by guessing, the prompt's
stated output form, the parser of replies, the rule that turns a reply into a verdict — is found there,
so adding a format is one entry here (and its prompt and parser functions). ``official_mcq`` (HD-EPIC's VQA question
as its authors ask it, :data:`IMPORTED_FORMATS`) is asked of imported questions only.

A rule returns ``(parsed, correct, scored_by, note, n_marked_true)``: ``scored_by`` is ``rule``,
``unparsed`` (the reply is not in the stated form: wrong, never guessed at) or ``undecided`` (an open
answer the rules cannot resolve to one candidate; the judge decides, or it stays undecided).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Callable

from ..annotations.language import LETTERS
from ..bank.subtypes import OPEN_FORMATS
from .parsing import (Parsed, answer_text, letter_as_written, parse_letter, parse_letter_set, parse_number,
                      parse_option_judgements, parse_yes_no, resolve_open)

REASON_LINE = "Because: <one sentence on what you saw or heard that supports your answer>"
ITEM_FORMATS = ("yes_no", "multiple_choice", "statements", "open", "option_judgement", "open_with_reason")
# Formats only an imported benchmark's items are asked in: ``official_mcq`` is HD-EPIC's VQA question as its authors
# ask it (the question, its five choices, a letter reply), scored by their letter rule.
IMPORTED_FORMATS = ("official_mcq",)
# What the authors' instruction says, in our words: a letter only, always an answer.
OFFICIAL_INSTRUCTION = ("Answer the multiple-choice question about the video with the letter of the correct answer "
                        "only, for example A or B. Give no other text, and answer even if you are not sure.")
# An open answer that says it cannot tell is wrong by rule (never sent to the judge).
ABSTAIN = re.compile(r"^\W*(cannot tell|can't tell|i (do not|don't) know|unknown|not sure|no idea|unsure)\W*$", re.I)

RuleVerdict = tuple[str, "bool | None", str, str, "int | None"]


# --- prompt templates -----------------------------------------------------------------------------------


def options_block(options: list[str]) -> str:
    return "\n".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(options))


def yes_no_prompt(statement: str) -> str:
    return (f"Statement: {statement}\n\nIs this statement true for the clip?\n"
            "Reply in exactly this format:\nAnswer: <yes/no>")


def multiple_choice_prompt(question: str, options: list[str]) -> str:
    return (f"{question}\n{options_block(options)}\n\nReply with the letter of the correct option, in exactly this format:\n"
            "Answer: <letter>")


def official_mcq_prompt(question: str, options: list[str]) -> str:
    """The question as HD-EPIC's evaluation asks it: ``Question: <q>. Answers: (A) <choice>. (B) … Correct:``
    after the instruction (their system prompt, which the providers here take as the prompt's first lines)."""
    answers = " ".join(f"({LETTERS[i]}) {o}." for i, o in enumerate(options))
    return f"{OFFICIAL_INSTRUCTION}\n\nQuestion: {question}. Answers: {answers} Correct:"


def statements_prompt(statements: list[str]) -> str:
    return ("Which of these statements are true for the clip? Several may be true; select every true one.\n"
            f"{options_block(statements)}\n\nReply in exactly this format, listing the letters of all true statements:\n"
            "Answer: <letters separated by commas>")


def open_prompt(question: str, answer_type: str, reason: bool = False) -> str:
    tail = f"\n{REASON_LINE}" if reason else ""
    return f"{question} {OPEN_FORMATS[answer_type]}\n\nReply in exactly this format:\nAnswer: <your answer>{tail}"


def option_judgement_prompt(question: str, options: list[str], reason: bool = False) -> str:
    lines = "\n".join(f"{LETTERS[i]}: <true/false>" for i in range(len(options)))
    tail = f"\n{REASON_LINE}" if reason else ""
    return (f"{question}\n{options_block(options)}\n\nJudge each option on its own: is it true for the clip? "
            f"Reply in exactly this format, one line per option:\n{lines}{tail}")


# --- rules ----------------------------------------------------------------------------------------------


def _single(p: Parsed, expected) -> RuleVerdict:
    return (str(p.value), p.value == expected, "rule", p.note, None) if p.ok else ("", False, "unparsed", p.note, None)


def yes_no_rule(item, reply: str) -> RuleVerdict:
    return _single(parse_yes_no(reply), item.expected)


def multiple_choice_rule(item, reply: str) -> RuleVerdict:
    return _single(parse_letter(reply, n_options=len(item.options)), item.expected)


def official_mcq_rule(item, reply: str) -> RuleVerdict:
    """The authors' letter rule (:func:`.parsing.letter_as_written`): the first capital A–Z of the reply as written;
    none, or one beyond the options, is ``unparsed`` (wrong)."""
    return _single(letter_as_written(reply, n_options=len(item.options)), item.expected)


def statements_rule(item, reply: str) -> RuleVerdict:
    """The exact set of true statements; ``n_marked_true`` counts the letters marked (over-marking)."""
    p = parse_letter_set(reply, n_options=len(json.loads(item.statements)))
    if not p.ok:
        return "", False, "unparsed", p.note, None
    parsed = ",".join(sorted(p.value))
    return parsed, parsed == item.expected, "rule", p.note, len(p.value)


def option_judgement_rule(item, reply: str) -> RuleVerdict:
    """Every option judged, all judgements right; ``n_marked_true`` counts the options judged true."""
    p = parse_option_judgements(reply, n_options=len(item.options))
    if not p.ok:
        return "", False, "unparsed", p.note, None
    parsed = ",".join("true" if v else "false" for v in p.value)
    return parsed, parsed == item.expected, "rule", p.note, sum(bool(v) for v in p.value)


def open_rule(item, reply: str) -> RuleVerdict:
    """An explicit abstention is wrong; a count must be the number; a name resolved to exactly one candidate
    (:func:`.parsing.resolve_open`) is scored, anything else is left ``undecided`` for the judge."""
    text = answer_text(reply)
    if not text.ok:
        return "", False, "unparsed", text.note, None
    answer = str(text.value)
    if ABSTAIN.match(answer):
        return "(abstained)", False, "rule", "explicit abstention", None
    if item.answer_type == "number":
        p = parse_number(reply)
        if not p.ok:
            return "", False, "unparsed", p.note, None
        return str(p.value), str(p.value) == str(item.expected), "rule", p.note, None
    key_index = list(item.options).index(item.expected)
    p = resolve_open(answer, json.loads(item.candidate_synonyms))
    if p.ok:
        return item.options[p.value], p.value == key_index, "rule", p.note, None
    return answer, None, "undecided", p.note, None


# --- the registry -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Format:
    """One base answer format.

    ``chance(n)`` is the probability of a right answer by guessing among the ``n`` options (or statements)
    the item lists without looking at the clip: uniformly one option, one non-empty set of statements; for
    ``option_judgement``, whose questions have exactly one true option by construction, one option marked
    true at random (1/n: the best content-blind reply, where judging each option by a coin gets 1/2^n).
    ``prompt`` renders the item's prompt; ``reply_format`` names the :func:`.parsing.render_reply` /
    :func:`.parsing.parse_reply` form (``open_with_reason`` items use ``reason_reply_format``); ``rule`` scores
    a reply against an item row.
    """

    name: str
    chance: Callable[[int], float]
    prompt: Callable[..., str]
    reply_format: str
    rule: Callable[[object, str], RuleVerdict]
    reason_reply_format: str | None = None  # the open_with_reason variant, for the formats that have one


FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("yes_no", lambda n: 1 / 2, yes_no_prompt, "yes_no", yes_no_rule),
    Format("multiple_choice", lambda n: 1 / n, multiple_choice_prompt, "multiple_choice", multiple_choice_rule),
    Format("statements", lambda n: 1 / (2 ** n - 1), statements_prompt, "statements", statements_rule),
    Format("open", lambda n: 0.0, open_prompt, "open", open_rule, "open_with_reason_open"),
    Format("option_judgement", lambda n: 1 / n, option_judgement_prompt, "option_judgement",
           option_judgement_rule, "open_with_reason_judgement"),
    Format("official_mcq", lambda n: 1 / n, official_mcq_prompt, "official_mcq", official_mcq_rule),
)}


def format_of(name: str) -> Format:
    """The entry of base format ``name``; ValueError naming the known formats otherwise."""
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown format {name!r} (known: {', '.join(ITEM_FORMATS + IMPORTED_FORMATS)})") from None


def chance(fmt: str, *, n_options: int = 4, n_statements: int = 4, base_format: str | None = None) -> float:
    """The one place chance is decided: 1/2, 1/n, 1/(2^k − 1) (exact non-empty set), 0 (open), 1/k (4b: one
    of its k options is true, so a content-blind reply marking one option true is right 1 time in k)."""
    if fmt == "open_with_reason":
        return chance(base_format or "open", n_options=n_options, n_statements=n_statements)
    return format_of(fmt).chance(n_statements if fmt == "statements" else n_options)


def reply_format(item) -> str:
    """The :func:`.parsing.render_reply` form of an item row (``open_with_reason`` by its base format)."""
    entry = format_of(item.base_format)
    return entry.reason_reply_format if item.format == "open_with_reason" else entry.reply_format


def rule_verdict(item, reply: str) -> RuleVerdict:
    """(parsed, correct, scored_by, note, n_marked_true) by the rule of the item's base format."""
    return format_of(item.base_format).rule(item, reply)
