"""The caption track's judges, one or several by NAME: a :class:`CaptionPanel` asks every judge about the same label
and semantic pairs, answers with the ``verdict_by`` judge's or the majority's, and keeps every judge's answer
(:attr:`label_votes`, :attr:`semantic_votes`) for the audit."""

from __future__ import annotations

import statistics
from typing import Callable

MAJORITY = "majority"


class CaptionPanel:
    def __init__(self, judges: dict[str, tuple[Callable, Callable | None]], verdict_by: str):
        """``judges``: NAME -> (label judge, semantic judge or None)."""
        if not judges:
            raise ValueError("a caption panel needs at least one judge")
        if verdict_by != MAJORITY and verdict_by not in judges:
            raise ValueError(f"verdict_by {verdict_by!r} is neither 'majority' nor one of {list(judges)}")
        self.judges, self.verdict_by = judges, verdict_by
        self.label_votes: dict[tuple[str, str, str], dict[str, bool | None]] = {}
        self.semantic_votes: dict[tuple[str, str, str, str], dict[str, tuple[int | None, bool]]] = {}

    def fresh(self) -> "CaptionPanel":
        """The same judges with no answers remembered (one panel per clip keeps each clip's votes apart)."""
        return CaptionPanel(self.judges, self.verdict_by)

    @property
    def names(self) -> list[str]:
        return list(self.judges)

    def __call__(self, kind: str, reference: str, response: str) -> bool | None:
        key = (kind, reference, response)
        if key not in self.label_votes:
            self.label_votes[key] = {name: label(kind, reference, response) for name, (label, _) in self.judges.items()}
        votes = self.label_votes[key]
        if self.verdict_by != MAJORITY:
            return votes[self.verdict_by]
        given = [v for v in votes.values() if v is not None]
        for value in (True, False):
            if given.count(value) * 2 > len(votes):
                return value
        return None

    @property
    def has_semantic(self) -> bool:
        return any(semantic is not None for _, semantic in self.judges.values())

    def semantic(self, requests: list[tuple[str, str, str, str]]) -> list[tuple[int | None, bool]]:
        todo = [r for r in dict.fromkeys(requests) if r not in self.semantic_votes]
        if todo:
            answers = {name: (semantic(todo) if semantic is not None else [(None, True)] * len(todo))
                       for name, (_, semantic) in self.judges.items()}
            for i, r in enumerate(todo):
                self.semantic_votes[r] = {name: answers[name][i] for name in self.judges}
        out = []
        for r in requests:
            votes = self.semantic_votes[r]
            if self.verdict_by != MAJORITY:
                out.append(votes[self.verdict_by])
                continue
            given = [v for v, bad in votes.values() if not bad and v is not None]
            failed = all(bad for _, bad in votes.values())
            out.append((statistics.median_low(given), False) if given else (None, failed))
        return out


def one_judge(panel: CaptionPanel, name: str) -> tuple[Callable, Callable]:
    """``(label judge, semantic judge)`` answering as judge ``name`` of ``panel`` did (asking it what it was not
    asked yet): the scores the run would have had with that judge alone."""
    def label(kind: str, reference: str, response: str) -> bool | None:
        panel(kind, reference, response)
        return panel.label_votes[(kind, reference, response)][name]

    def semantic(requests: list[tuple[str, str, str, str]]) -> list[tuple[int | None, bool]]:
        panel.semantic(requests)
        return [panel.semantic_votes[r][name] for r in requests]

    return label, semantic
