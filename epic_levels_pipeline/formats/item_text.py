"""The items of one base question in each format: a format's ``items(entry, q)`` returns its item rows, reading a
:class:`QuestionItems` (options and truth, the seeded draw, the yes/no statement, Step 1's decision, the open
wording), whether the bank generated the question or a benchmark was imported."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

from ..annotations.language import LETTERS
from .prompts import (multiple_choice_prompt, official_mcq_prompt, open_prompt, option_judgement_prompt,
                      statements_prompt)


@dataclass
class QuestionItems:
    """One base question as the formats render it. ``base``: the item columns every item of it shares; ``rng``:
    the question's seeded draw, which the formats use in registry order (yes/no first, then the statements)."""

    question_id: str
    base: dict
    question: str                 # the multiple-choice stem
    options: list
    values: list
    truth: list[bool]
    key: int                      # the index of the right option
    rng: random.Random
    want_true: bool               # the yes/no item states a true statement
    yes_no_prompt: Callable[[int], str]  # the yes/no prompt stating option i
    stand_alone: bool             # Step 1 (and the checker): asked open, else as option judgements
    open_question: str
    answer_type: str
    open_expected: str
    source_question: str = ""     # the question and choices as the source words them (imported benchmarks)
    source_options: list = field(default_factory=list)
    statements: Callable[[], list[dict] | None] = lambda: None  # format 3's statements, drawn when first asked

    @cached_property
    def yes_no_index(self) -> int:
        """The option the yes/no item states: the key, or a seeded wrong one (drawn once)."""
        return self.key if self.want_true else self.rng.choice([i for i, t in enumerate(self.truth) if not t])

    def item(self, fmt: str, base_format: str, prompt: str, expected, chance: float, **columns) -> dict:
        return {**self.base, "item_id": f"{self.question_id}#{fmt}", "format": fmt, "base_format": base_format,
                "prompt": prompt, "expected": expected, "chance": chance, **columns}


def truth_string(truth: list[bool]) -> str:
    return ",".join("true" if t else "false" for t in truth)


def yes_no_items(entry, q: QuestionItems) -> list[dict]:
    idx = q.yes_no_index
    return [q.item("yes_no", "yes_no", q.yes_no_prompt(idx), "yes" if q.truth[idx] else "no",
                   entry.chance(len(q.options)), statement_value=q.values[idx], statement_true=bool(q.truth[idx]))]


def multiple_choice_items(entry, q: QuestionItems) -> list[dict]:
    return [q.item("multiple_choice", "multiple_choice", multiple_choice_prompt(q.question, q.options),
                   LETTERS[q.key], entry.chance(len(q.options)))]


def official_mcq_items(entry, q: QuestionItems) -> list[dict]:
    """The question and its choices as the source benchmark asks them (HD-EPIC's own protocol)."""
    return [q.item(entry.name, entry.name, official_mcq_prompt(q.source_question, q.source_options),
                   LETTERS[q.key], entry.chance(len(q.options)))]


def statements_items(entry, q: QuestionItems) -> list[dict]:
    """Format 3: the statements drawn for the question (none for a question without annotations)."""
    chosen = q.statements()
    if chosen is None:
        return []
    expected = ",".join(LETTERS[i] for i, s in enumerate(chosen) if s["truth"])
    return [q.item("statements", "statements", statements_prompt([s["text"] for s in chosen]), expected,
                   entry.chance(len(chosen)),
                   statements=json.dumps([{**s, "letter": LETTERS[i]} for i, s in enumerate(chosen)]))]


def open_items(entry, q: QuestionItems) -> list[dict]:
    """Format 4 and 5 when the question stands without its options (Step 1)."""
    if not q.stand_alone:
        return []
    return [q.item(fmt, "open", open_prompt(q.open_question, q.answer_type, reason), q.open_expected,
                   entry.chance(len(q.options)))
            for fmt, reason in (("open", False), ("open_with_reason", True))]


def option_judgement_items(entry, q: QuestionItems) -> list[dict]:
    """Format 4b and 5 when the question cannot stand without its options."""
    if q.stand_alone:
        return []
    return [q.item(fmt, "option_judgement", option_judgement_prompt(q.question, q.options, reason),
                   truth_string(q.truth), entry.chance(len(q.options)))
            for fmt, reason in (("option_judgement", False), ("open_with_reason", True))]
