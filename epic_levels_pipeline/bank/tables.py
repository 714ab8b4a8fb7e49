"""A clip's bank tables, made into Arrow tables of the declared schemas (:mod:`..schemas`): the questions,
collected row by row, and the distractor pools, collected column by column."""

from __future__ import annotations

from operator import itemgetter

import pyarrow as pa

from .. import schemas

QUESTION_COLUMNS = schemas.columns("questions")
POOL_COLUMNS = schemas.columns("distractor_pools")
N_OPTIONS = 4


class QuestionRows:
    """A clip's questions, one tuple of the declared columns' cells per question (made into the table in one
    conversion: :func:`..schemas.from_rows`)."""

    cells = itemgetter(*QUESTION_COLUMNS)  # a question's row (a dict by column) -> its cells in declared order

    def __init__(self):
        self.rows: list[tuple] = []

    def add(self, row: dict) -> None:
        self.rows.append(self.cells(row))

    def table(self) -> pa.Table:
        return schemas.from_rows("questions", self.rows)


class PoolColumns:
    """A clip's pool rows, one list per declared column: each drawn pool adds its candidates' rows, then the
    answer's."""

    def __init__(self, clip_key: str):
        self.clip_key = clip_key
        self.cells: dict[str, list] = {c: [] for c in POOL_COLUMNS}

    def add(self, qid: str, subtype: str, strategy: str, drawn, chosen_values: set[str], answer) -> None:
        """One pool: the distractor candidates of a :class:`.candidates.Drawn` (``chosen`` when their value is
        one of ``chosen_values``), then the answer (always chosen)."""
        k = len(drawn) + 1
        c = self.cells
        c["clip_key"] += [self.clip_key] * k
        c["question_id"] += [qid] * k
        c["subtype"] += [subtype] * k
        c["distractor_strategy"] += [strategy] * k
        c["value"] += [*drawn.values, answer.value]
        c["text"] += [*drawn.texts, answer.text]
        c["role"] += ["distractor"] * (k - 1) + ["answer"]
        c["present"] += [*drawn.present, answer.present]
        c["rows"] += [*drawn.rows, answer.rows]  # (tuples: Arrow reads any sequence as a list cell)
        c["note"] += [*drawn.notes, answer.note]
        c["chosen"] += [v in chosen_values for v in drawn.values] + [True]
        c["offered"] += [drawn.offered] * k

    def table(self) -> pa.Table:
        return schemas.from_columns("distractor_pools", self.cells)
