"""Candidate values: what an option *is*, as a kind and a payload (``noun:12``, ``action:3:12``, ``sound:water``).

Tables store a value as its text ``<kind>:<payload>``; :class:`CandidateValue` is that text parsed once. What
each kind means for a clip (text, presence, synonyms) is decided in :mod:`epic_levels_pipeline.bank.kinds`."""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("noun", "action", "purpose", "object", "activity", "step", "sound", "count")


@dataclass(frozen=True)
class CandidateValue:
    """A candidate value: ``kind`` and ``payload``; ``str()`` gives the stored text back unchanged."""

    kind: str
    payload: str

    @classmethod
    def parse(cls, text) -> "CandidateValue":
        """The value of a stored text (an unknown kind is kept as it is; its users decide what it means).
        Values are immutable, so the value of each text is made once (:data:`_PARSED`) and shared."""
        text = str(text)
        value = _PARSED.get(text) if cls is CandidateValue else None
        if value is None:
            kind, _, payload = text.partition(":")
            value = cls(kind, payload)
            if cls is CandidateValue:
                if len(_PARSED) >= _PARSED_MAX:
                    _PARSED.clear()
                _PARSED[text] = value
        return value

    def __str__(self) -> str:
        return f"{self.kind}:{self.payload}"

    @property
    def noun_class(self) -> int:
        """The noun class of a ``noun`` value."""
        return int(self.payload)

    @property
    def pair(self) -> tuple[int, int]:
        """(verb class, noun class) of an ``action`` or ``purpose`` value."""
        v, n = self.payload.split(":")
        return int(v), int(n)


# Parsed values by text (:meth:`CandidateValue.parse`): a run parses the same few thousand values over and
# over; emptied when full so that it stays small.
_PARSED: dict[str, CandidateValue] = {}
_PARSED_MAX = 50_000  # (the staged catalogue holds about 6,300 distinct values)
