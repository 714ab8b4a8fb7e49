"""The subtype registry: what each question subtype asks, what evidence it needs, how drafts are made. A
:class:`Subtype` declares its dataset, streams, evidence scope and default distractor strategy (its level
follows from the scope); the subtypes live in one module per dataset. Which strategies a run generates per
subtype is configuration (:data:`DEFAULT_VARIANTS`, :class:`BankConfig`)."""

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
