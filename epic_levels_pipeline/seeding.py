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
from numpy.random.bit_generator import ISeedSequence

DEFAULT_SEED = 20261130


def stable_seed(*parts) -> int:
    """A 48-bit integer from the parts' text (sha256): the same parts give the same seed on every machine
    (the digest's first 6 bytes read big-endian, i.e. its first 12 hex digits as a number)."""
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:6], "big")


def seeded(seed: int, *parts) -> int:
    """:func:`stable_seed` of ``parts`` under the project ``seed``; under :data:`DEFAULT_SEED` the parts alone, so the
    default draws of the offline responders stay those the recorded digests hold."""
    return stable_seed(*parts) if seed == DEFAULT_SEED else stable_seed(seed, *parts)


class Seed(ISeedSequence):
    """The seed of one thing: ``numpy.random.SeedSequence`` of :func:`stable_seed` of its parts, with the words
    PCG64 starts from worked out once (read-only). Each :meth:`generator` is a new generator in the same
    starting state, so a thing drawn for more than once (a draft under each of its distractor strategies)
    hashes its seed once. It is a seed sequence by numpy's documented interface (``ISeedSequence``): any
    other request is the SeedSequence's own."""

    __slots__ = ("sequence", "_words")

    def __init__(self, *parts):
        self.sequence = np.random.SeedSequence(stable_seed(*parts))
        words = self.sequence.generate_state(4, np.uint64)  # (what PCG64 asks its seed sequence for)
        words.setflags(write=False)
        self._words = words

    def generate_state(self, n_words: int, dtype=np.uint32) -> np.ndarray:
        if n_words == 4 and np.dtype(dtype) == np.uint64:
            return self._words
        return self.sequence.generate_state(n_words, dtype)

    def generator(self) -> np.random.Generator:
        """A new PCG64 ``numpy.random.Generator`` at the seed's starting state."""
        return np.random.Generator(np.random.PCG64(self))


def generator(*parts) -> np.random.Generator:
    """A PCG64 ``numpy.random.Generator`` seeded by :func:`stable_seed` of the parts (e.g. project seed, clip,
    subtype, draft): its draws are the same on every machine and for every numpy that keeps PCG64's stream
    (:class:`Seed` of the parts; keep the :class:`Seed` to make more generators of the same parts)."""
    return Seed(*parts).generator()
