"""Seeds: the one default seed of a run, and the stable per-thing seeds derived from it.

Every random choice in the core (distractor order, option shuffles, offline replies, judge order) draws from
``random.Random(stable_seed(seed, <what>, ...))``, so a choice depends only on the seed and on what it is
about, never on run order or on which other clips are in the run. :data:`DEFAULT_SEED` is the single default
the stages share; a seed set in configuration reaches them as an argument.
"""

from __future__ import annotations

import hashlib

DEFAULT_SEED = 20261130


def stable_seed(*parts) -> int:
    """A 48-bit integer from the parts' text (sha256): the same parts give the same seed on every machine."""
    return int(hashlib.sha256("|".join(str(p) for p in parts).encode()).hexdigest()[:12], 16)
