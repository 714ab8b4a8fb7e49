"""Seeds: the one default seed of a run, and the stable per-thing seeds derived from it.

Every random choice in the core (distractor order, option shuffles, offline replies, judge order) draws from
``random.Random(stable_seed(seed, <what>, ...))``, so a choice depends only on the seed and on what it is
about, never on run order or on which other clips are in the run. :data:`DEFAULT_SEED` is the single default
the stages share; a seed set in configuration reaches them as an argument.
"""

from __future__ import annotations

import hashlib
import random
import sys

DEFAULT_SEED = 20261130


def stable_seed(*parts) -> int:
    """A 48-bit integer from the parts' text (sha256): the same parts give the same seed on every machine.
    It is the digest's first 12 hex digits read as a number, i.e. its first 6 bytes read big-endian (no
    hex text made and parsed again)."""
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:6], "big")


# Below this length ``random.Random.shuffle`` itself is as fast (the bulk draw's set-up is not worth it).
_BULK_SHUFFLE_FROM = 64


def shuffle(rng: random.Random, x: list) -> None:
    """``rng.shuffle(x)``, faster on long lists: the same permutation, and ``rng`` left in the same state.

    It reproduces CPython's ``Random.shuffle`` (3.11): for ``i`` from ``len(x) - 1`` down to 1 it swaps
    ``x[i]`` with ``x[_randbelow(i + 1)]``, where ``_randbelow(m)`` draws ``getrandbits(k)`` (``k`` the bit
    length of ``m``) until the draw is below ``m``; for ``k <= 32`` that is one 32-bit Mersenne Twister word
    shifted right by ``32 - k``. Here the words come in bulk — ``getrandbits(32 * n)`` is ``n`` such words,
    the first drawn the least significant — ``n`` being the swaps still to make, so never a word more than
    the loop uses (each swap takes at least one), and the loop inlines the shift and the rejection.
    Anything but a plain ``random.Random`` (a subclass may draw differently) goes to its own ``shuffle``.
    ``epic_levels_pipeline_tests/test_seeding.py`` proves both equal, permutation and state.
    The loop is what is left to make faster, and numpy does not: the rejections of one bit length are the
    fixpoint of a prefix count (a few passes), and the permutation follows from the accepted draws by
    pointer chasing, but at the distractor pools' lengths (about 1,300) the array calls cost more than the
    loop they replace (timed on the shuffles of a ``bench/question_bank.py`` run)."""
    i = len(x) - 1
    if type(rng) is not random.Random or i < _BULK_SHUFFLE_FROM or i >= 1 << 32:
        rng.shuffle(x)
        return
    getrandbits = rng.getrandbits
    while i > 0:
        words = memoryview(getrandbits(32 * i).to_bytes(4 * i, sys.byteorder)).cast("I").tolist()
        m = i + 1  # the bound of the next swap: x[m - 1] is exchanged with x[r], r < m
        shift = 32 - m.bit_length()
        low = 1 << (31 - shift)  # the smallest bound of that bit length
        for word in words:
            r = word >> shift
            if r < m:
                m -= 1
                x[m], x[r] = x[r], x[m]
                if m < low:  # one bit fewer from now on
                    if m == 1:
                        break
                    shift += 1
                    low >>= 1
        i = m - 1
