"""The rules that turn a reply into a verdict, one per format: ``(parsed, correct, scored_by, note, n_marked_true)``.

``scored_by`` is ``rule``, ``unparsed`` (the reply is not in the stated form: wrong, never guessed at) or
``undecided`` (an open answer the rules cannot resolve to one candidate: the judge decides, or it stays undecided).
"""

from __future__ import annotations

import json
import re

from .parsing import (Parsed, answer_text, letter_as_written, parse_letter, parse_letter_set, parse_number,
                      parse_option_judgements, parse_yes_no, resolve_open)

# An open answer that says it cannot tell is wrong by rule (never sent to the judge).
ABSTAIN = re.compile(r"^\W*(cannot tell|can't tell|i (do not|don't) know|unknown|not sure|no idea|unsure)\W*$", re.I)

RuleVerdict = tuple[str, "bool | None", str, str, "int | None"]


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
