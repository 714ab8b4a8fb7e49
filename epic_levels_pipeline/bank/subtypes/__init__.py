"""The subtype registry: what each question subtype asks, what evidence it needs, how drafts are made.

Each :class:`Subtype` declares its dataset, the annotation streams it reads, its evidence ``scope`` and
its default distractor strategy; its ``level`` is derived from the scope (:mod:`levels`), never typed in.
A generator turns a clip into *drafts*: the question in words, the solver's parameters, the intended
answer, the values that must not become distractors, and the provenance. The answer key itself is
decided later by the solver (:mod:`solvers`), which never sees the intended answer.

The subtypes themselves live in one module per dataset (:mod:`.epic_sounds`, :mod:`.hd_epic`), each
registering its :class:`Subtype` objects; a subtype may also apply to another dataset's clips that hold its
streams (``also_on``: the EPIC-SOUNDS subtypes on HD-EPIC clips with HD-EPIC's own sounds and narrations). Which distractor strategies a run generates per subtype is
configuration (:data:`DEFAULT_VARIANTS`, overridable in :class:`BankConfig`): moment and sequence subtypes
are generated with the fixed ``same_clip_other_moments`` and, for the shortcut audit, the leaky
``absent_from_clip``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...seeding import DEFAULT_SEED
from . import epic_sounds, hd_epic  # noqa: F401  (each registers its dataset's subtypes)
from .registry import LEAKY_TOO, OPEN_FORMATS, SUBTYPES, Draft, Subtype, is_primary, register, unregister

__all__ = ["BankConfig", "DEFAULT_VARIANTS", "Draft", "LEAKY_TOO", "OPEN_FORMATS", "SUBTYPES", "Subtype",
           "is_primary", "register", "unregister"]

# Strategies generated per subtype by default (configuration: BankConfig / the question bank's run config).
DEFAULT_VARIANTS: dict[str, tuple[str, ...]] = {s.name: s.variants for s in SUBTYPES.values() if s.variants}


@dataclass
class BankConfig:
    variants: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(DEFAULT_VARIANTS))
    max_per_subtype: int = 3
    seed: int = DEFAULT_SEED
    subtypes: tuple[str, ...] | None = None  # None = all registered
    distractor_rule: str = "exchangeable"  # how distractors are drawn from a strategy's pool (distractors.RULES)

    def strategies(self, subtype: Subtype) -> tuple[str, ...]:
        return tuple(self.variants.get(subtype.name, (subtype.strategy,)))
