"""Option candidates as values, and a strategy's pool of them as arrays.

A :class:`Candidate` is a frozen value: made once, for an option actually drawn (or the key), never changed.
A :class:`Pool` is what a strategy offers for one draft before anything is drawn: the candidate values and
their corpus frequencies as arrays, position by position, with what describes each (the rows that justify
it, a note) read only for the positions drawn. Leaving values out (the key, a draft's exclusions) is one
mask over those arrays (:meth:`Pool.without`); nothing in a pool is changed after it is made.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
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
    for the clip."""

    strategy: str
    values: np.ndarray
    freq: np.ndarray
    at: np.ndarray
    rows_of: Callable[[int], Sequence[str]]
    note_of: Callable[[int], str]
    present: bool | None = None
    texts: dict | None = None

    @classmethod
    def of(cls, strategy: str, values: Sequence[str], frequency: dict[str, int], rows: Sequence[Sequence[str]],
           notes: Sequence[str] | str, present: bool | None = None, texts: dict | None = None) -> "Pool":
        """A pool of listed candidates: their values, rows and notes (one note for all, or one each)."""
        vals = np.array(list(values), dtype=object)
        note_of = (lambda a: notes) if isinstance(notes, str) else notes.__getitem__
        return cls(strategy, _frozen(vals), _frozen(np.array([frequency.get(v, 0) for v in vals.tolist()], dtype=np.int64)),
                   _frozen(np.arange(len(vals), dtype=np.int64)), rows.__getitem__, note_of, present, texts)

    def __len__(self) -> int:
        return len(self.values)

    def value(self, p: int) -> str:
        return self.values[p]

    def without(self, values) -> "Pool":
        """The pool less every position holding one of ``values`` (the one masking path)."""
        drop = [v for v in values if v is not None]
        if not drop or not len(self.values):
            return self
        # (one elementwise comparison per dropped value: a draft drops a few values from pools of thousands,
        # which ``np.isin`` would first sort or hash)
        keep = self.values != drop[0]
        for v in drop[1:]:
            keep &= self.values != v
        if keep.all():
            return self
        return replace(self, values=_frozen(self.values[keep]), freq=_frozen(self.freq[keep]),
                       at=_frozen(self.at[keep]))

    def candidate(self, p: int, text: str, present: bool | None) -> Candidate:
        """The candidate at position ``p``, its text (rendered by the draw) and presence given."""
        a = int(self.at[p])
        return Candidate(self.values[p], text, self.strategy, present, tuple(self.rows_of(a)), self.note_of(a))


@dataclass(frozen=True)
class Drawn:
    """A strategy's draw for one draft: candidates (the chosen ones first), how many the strategy offered,
    and why no option set could be drawn ("" when one was)."""

    candidates: list[Candidate]
    offered: int
    shortfall: str = ""
