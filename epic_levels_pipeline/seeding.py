"""Seeds: the one default seed of a run, and the stable per-thing seeds and generators derived from it.

Every random choice in the core (distractor order, option shuffles, offline replies, judge order) draws from
a generator seeded by :func:`stable_seed` of the seed and of what the choice is about — a
``numpy.random.Generator`` (PCG64, :func:`generator`) for the bank's draws, ``random.Random`` elsewhere — so a
choice depends only on the seed and on what it is about, never on run order or on which other clips are in
the run. :data:`DEFAULT_SEED` is the single default the stages share; a seed set in configuration reaches
them as an argument.
"""

from __future__ import annotations

import hashlib

import numpy as np

DEFAULT_SEED = 20261130


def stable_seed(*parts) -> int:
    """A 48-bit integer from the parts' text (sha256): the same parts give the same seed on every machine
    (the digest's first 6 bytes read big-endian, i.e. its first 12 hex digits as a number)."""
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:6], "big")


def generator(*parts) -> np.random.Generator:
    """A PCG64 ``numpy.random.Generator`` seeded by :func:`stable_seed` of the parts (e.g. project seed, clip,
    subtype, draft): its draws are the same on every machine and for every numpy that keeps PCG64's stream."""
    return np.random.Generator(np.random.PCG64(stable_seed(*parts)))
