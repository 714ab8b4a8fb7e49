"""Seeds: the one default seed of a run, and the stable per-thing seeds derived from it.

Every random choice in the core (distractor order, option shuffles, offline replies, judge order) draws from
``random.Random(stable_seed(seed, <what>, ...))``, so a choice depends only on the seed and on what it is
about, never on run order or on which other clips are in the run. :data:`DEFAULT_SEED` is the single default
the stages share; a seed set in configuration reaches them as an argument.
"""

from __future__ import annotations

import hashlib
import importlib
import random
import struct

DEFAULT_SEED = 20261130


def stable_seed(*parts) -> int:
    """A 48-bit integer from the parts' text (sha256): the same parts give the same seed on every machine.
    It is the digest's first 12 hex digits read as a number, i.e. its first 6 bytes read big-endian (no
    hex text made and parsed again)."""
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:6], "big")


try:  # the swap loop compiled (built by the install; optional in pyproject.toml). Imported by name: the import
    # contract's scanner reads only .py modules and would take a ``from`` import of it for the package itself.
    _compiled_swaps = importlib.import_module("epic_levels_pipeline._fisher_yates").swaps
except ImportError:  # not built here (no compiler at install): the same loop in Python
    _compiled_swaps = None

# Below this length ``random.Random.shuffle`` itself is as fast as the bulk draw with the Python loop (its
# set-up is not worth it); the compiled loop is faster from two items on.
_BULK_SHUFFLE_FROM = 64


def _python_swaps(x: list, m: int, words: bytes) -> int:
    """The swaps the 32-bit ``words`` (little-endian) decide, applied to ``x`` from bound ``m`` (the next
    swap exchanges ``x[m - 1]`` with ``x[r]``, ``r < m``); returns the bound left, 1 when done. A word
    whose shifted draw is not below the bound is rejected, as ``_randbelow`` rejects it. The compiled
    ``_fisher_yates.swaps`` is this loop in C."""
    shift = 32 - m.bit_length()
    low = 1 << (31 - shift)  # the smallest bound of that bit length
    for word in struct.unpack(f"<{len(words) // 4}I", words):
        r = word >> shift
        if r < m:
            m -= 1
            x[m], x[r] = x[r], x[m]
            if m < low:  # one bit fewer from now on
                if m == 1:
                    break
                shift += 1
                low >>= 1
    return m


def shuffle(rng: random.Random, x: list, *, compiled: bool | None = None) -> None:
    """``rng.shuffle(x)``, faster: the same permutation, and ``rng`` left in the same state.

    It reproduces CPython's ``Random.shuffle`` (3.11): for ``i`` from ``len(x) - 1`` down to 1 it swaps
    ``x[i]`` with ``x[_randbelow(i + 1)]``, where ``_randbelow(m)`` draws ``getrandbits(k)`` (``k`` the bit
    length of ``m``) until the draw is below ``m``; for ``k <= 32`` that is one 32-bit Mersenne Twister word
    shifted right by ``32 - k``. Here the words come in bulk — ``getrandbits(32 * n)`` is ``n`` such words,
    the first drawn the least significant — ``n`` being the swaps still to make, so never a word more than
    the loop uses (each swap takes at least one), and a loop applies the shifts, rejections and swaps: the
    compiled one (``_fisher_yates.c``) where the install built it, else the same loop in Python
    (:func:`_python_swaps`) on lists of :data:`_BULK_SHUFFLE_FROM` items or more, ``rng.shuffle`` below.
    ``compiled`` forces one loop (tests); by default the compiled one is used when it is there.
    Anything but a plain ``random.Random`` (a subclass may draw differently) or a plain list goes to its
    own ``shuffle``. ``epic_levels_pipeline_tests/test_seeding.py`` proves them equal, permutation and state."""
    if compiled is None:
        compiled = _compiled_swaps is not None
    elif compiled and _compiled_swaps is None:
        raise RuntimeError("the compiled shuffle loop (epic_levels_pipeline._fisher_yates) is not built here")
    i = len(x) - 1
    if (type(rng) is not random.Random or type(x) is not list or i >= (1 << 32) - 1
            or i < (1 if compiled else _BULK_SHUFFLE_FROM)):
        rng.shuffle(x)
        return
    loop = _compiled_swaps if compiled else _python_swaps
    getrandbits = rng.getrandbits
    while i > 0:
        i = loop(x, i + 1, getrandbits(32 * i).to_bytes(4 * i, "little")) - 1
