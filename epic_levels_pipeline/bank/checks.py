"""Checks on a question bank that need no model: one key per question, level vs provenance, shortcuts.

Each returns plain data (problem strings or a table) so the Dagster checks, the CLI and tests share it.
The per-question checks read only the columns they check (:func:`..records.records` of those).
"""

from __future__ import annotations

import json

import pandas as pd

from ..records import records
from .clip_view import ClipView
from .levels import derive_scope
from .solvers import solve
from .build import N_OPTIONS
from .options import ENTITY_KINDS, option_clashes
from ..annotations.values import CandidateValue
from .subtypes import SUBTYPES


def key_problems(questions: pd.DataFrame, view: ClipView) -> list[str]:
    """Exactly one option is true (by the solver, re-run now), it is the stored key, and the key is an option."""
    problems = []
    for q in records(questions[["question_id", "subtype", "params", "options", "option_values", "answer",
                                "answer_index"]]):
        options, values = list(q.options), list(q.option_values)
        if q.answer not in options or options.index(q.answer) != q.answer_index:
            problems.append(f"{q.question_id}: the key {q.answer!r} is not option {q.answer_index}")
            continue
        truth = solve(q.subtype, view, json.loads(q.params), values)
        if sum(truth) != 1 or truth.index(True) != q.answer_index:
            problems.append(f"{q.question_id}: solver finds {sum(truth)} true options {truth}, key index {q.answer_index}")
    return problems


def option_problems(questions: pd.DataFrame) -> list[str]:
    """No two options of a question are the same entity after normalisation or nested in one another
    (and, for entities, none shares another's head noun): :func:`.options.option_clashes`."""
    problems = []
    for q in records(questions[["question_id", "options", "answer_value"]]):
        entity = CandidateValue.parse(q.answer_value).kind in ENTITY_KINDS
        for clash in option_clashes(list(q.options), entity):
            problems.append(f"{q.question_id}: options {clash}")
    return problems


def level_problems(questions: pd.DataFrame) -> list[str]:
    """The scope derived from each question's provenance must equal its subtype's declared scope."""
    problems = []
    for q in records(questions[["question_id", "subtype", "level", "provenance"]]):
        subtype = SUBTYPES.get(q.subtype)
        if subtype is None:
            problems.append(f"{q.question_id}: unknown subtype {q.subtype!r}")
            continue
        derived = derive_scope(json.loads(q.provenance))
        if derived != subtype.scope or q.level != subtype.level:
            problems.append(f"{q.question_id}: subtype {q.subtype} declares {subtype.scope} ({subtype.level}) "
                            f"but its evidence is {derived}")
    return problems


def shortcut_rates(questions: pd.DataFrame) -> pd.DataFrame:
    """Presence oracle per subtype × distractor strategy.

    ``singles_out_key`` — share of questions where the only present (or only absent) option is the key;
    ``presence_oracle_rate`` — its expected accuracy as a responder (its pick where it has one, a uniform
    guess among the options otherwise); ``chance`` — 1/4.
    """
    if not len(questions):
        return pd.DataFrame(columns=["dataset", "subtype", "level", "distractor_strategy", "n", "singles_out_key",
                                     "only_absent_give_away", "presence_oracle_rate", "chance"])
    q = questions.copy()
    picked = q["presence_pick"] >= 0
    q["correct"] = q["presence_correct"].astype(bool)
    q["absent_give_away"] = q["correct"] & (q["presence_rule"] == "only absent option")
    q["expected"] = q["correct"].astype(float) + (~picked).astype(float) / N_OPTIONS
    out = q.groupby(["dataset", "subtype", "level", "distractor_strategy"]).agg(
        n=("question_id", "size"), singles_out_key=("correct", "mean"),
        only_absent_give_away=("absent_give_away", "mean"), presence_oracle_rate=("expected", "mean"),
    ).reset_index()
    out["chance"] = 1 / N_OPTIONS
    return out
