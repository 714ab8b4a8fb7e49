"""Option candidates as frozen values, and a strategy's pool of them as arrays: leaving values out (the key, a
draft's exclusions) is one integer mask (:meth:`Pool.without`), and only the positions drawn are described."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable, Sequence

import numpy as np


@dataclass(frozen=True)
class Candidate:
    value: str
    text: str
    strategy: str  # "answer" for the key, else the distractor strategy
    present: bool | None = None
    rows: tuple[str, ...] = ()  # "stream:row_id" of rows showing where it occurs
    note: str = ""

    def to_dict(self) -> dict:
        out = asdict(self)
        out["rows"] = list(self.rows)
        return out


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


@dataclass(frozen=True)
class Pool:
    """Candidates a strategy offers, one per position: ``values`` (object array of candidate values),
    ``freq`` (their corpus frequencies, int64) and ``at`` (each position's place in what describes it:
    ``rows_of(at)`` the rows justifying it, ``note_of(at)`` why it is wrong). ``present``: whether the
    strategy's candidates occur in the clip (None: the view tells, value by value). ``texts``: option texts
    of absent entities by value (the same in every clip: :func:`.pools.absent_texts`), None to render each
    for the clip. ``codes``: an integer per position, equal where the values are equal (a catalogue table's
    pools: the value's catalogue position), and ``code_of`` the code of a value (None: not a value of the
    pool's source)."""

    strategy: str
    values: np.ndarray
    freq: np.ndarray
    at: np.ndarray
    rows_of: Callable[[int], Sequence[str]]
    note_of: Callable[[int], str]
    present: bool | None
    texts: dict | None
    codes: np.ndarray
    code_of: Callable[[str], int | None]

    @classmethod
    def of(cls, strategy: str, values: Sequence[str], frequency: dict[str, int], rows: Sequence[Sequence[str]],
           notes: Sequence[str] | str, present: bool | None = None, texts: dict | None = None) -> "Pool":
        """A pool of listed candidates: their values, rows and notes (one note for all, or one each)."""
        listed = list(values)
        first: dict[str, int] = {}  # each value's code: the position it is first listed at
        codes = [first.setdefault(v, i) for i, v in enumerate(listed)]
        note_of = (lambda a: notes) if isinstance(notes, str) else notes.__getitem__
        return cls(strategy, _frozen(np.array(listed, dtype=object)),
                   _frozen(np.array([frequency.get(v, 0) for v in listed], dtype=np.int64)),
                   _frozen(np.arange(len(listed), dtype=np.int64)), rows.__getitem__, note_of, present, texts,
                   _frozen(np.array(codes, dtype=np.int64)), first.get)

    def __len__(self) -> int:
        return len(self.values)

    def value(self, p: int) -> str:
        return self.values[p]

    def without(self, values) -> "Pool":
        """The pool less every position holding one of ``values`` (the one masking path)."""
        code_of = self.code_of
        drop = [c for c in (code_of(v) for v in values if v is not None) if c is not None]
        if not drop:
            return self
        # (one integer comparison per dropped value: a draft drops a few values from pools of thousands)
        codes = self.codes
        keep = codes != drop[0]
        for c in drop[1:]:
            keep &= codes != c
        if keep.all():
            return self
        return Pool(self.strategy, _frozen(self.values[keep]), _frozen(self.freq[keep]), _frozen(self.at[keep]),
                    self.rows_of, self.note_of, self.present, self.texts, _frozen(codes[keep]), code_of)

    def candidate(self, p: int, text: str, present: bool | None) -> Candidate:
        """The candidate at position ``p``, its text (rendered by the draw) and presence given."""
        a = int(self.at[p])
        return Candidate(self.values[p], text, self.strategy, present, tuple(self.rows_of(a)), self.note_of(a))


@dataclass(frozen=True)
class Drawn:
    """A strategy's draw for one draft: its candidates as columns, position by position, the chosen ones
    first (``values``, ``texts``, ``present``; ``rows`` and ``notes``: what describes each), how many the
    strategy offered, and why no option set could be drawn ("" when one was). Only the candidates that
    become options are made (:meth:`candidate`); the pool table reads the columns."""

    strategy: str
    values: tuple[str, ...]
    texts: tuple[str, ...]
    present: tuple[bool | None, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...]
    offered: int
    shortfall: str = ""

    @classmethod
    def none(cls, strategy: str, offered: int, shortfall: str) -> "Drawn":
        """No candidates drawn, and why."""
        return cls(strategy, (), (), (), (), (), offered, shortfall)

    def __len__(self) -> int:
        return len(self.values)

    def candidate(self, i: int) -> Candidate:
        """The ``i``-th candidate drawn as a :class:`Candidate`."""
        return Candidate(self.values[i], self.texts[i], self.strategy, self.present[i], self.rows[i], self.notes[i])

    @property
    def candidates(self) -> list[Candidate]:
        """Every candidate drawn, the chosen ones first."""
        return [self.candidate(i) for i in range(len(self))]
