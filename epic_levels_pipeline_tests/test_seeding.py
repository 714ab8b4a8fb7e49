"""Seeds and the seeded shuffle: :func:`seeding.shuffle` must be ``random.Random.shuffle`` exactly."""

import hashlib
import random
import shutil
import sys
import sysconfig
from pathlib import Path

import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from epic_levels_pipeline import seeding
from epic_levels_pipeline.seeding import shuffle, stable_seed

# Both swap loops where the compiled one is built (the install builds it wherever it can: see the test below).
LOOPS = [False] + ([True] if seeding._compiled_swaps is not None else [])


@pytest.mark.parametrize("compiled", LOOPS)
@settings(max_examples=300, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**64), n=st.one_of(st.integers(0, 140), st.integers(0, 5000)),
       warm=st.integers(0, 700))
def test_shuffle_is_random_shuffle(compiled, seed, n, warm):
    """The same permutation, and the generator in the same state after (what it draws next is the same)."""
    ours, theirs = random.Random(seed), random.Random(seed)
    for rng in (ours, theirs):  # a state part-way through the Mersenne Twister's 624-word block
        rng.getrandbits(32 * warm) if warm else None
    x, y = [f"v{i}" for i in range(n)], [f"v{i}" for i in range(n)]
    shuffle(ours, x, compiled=compiled)
    theirs.shuffle(y)
    assert x == y
    assert ours.getstate() == theirs.getstate()


@pytest.mark.parametrize("compiled", LOOPS)
def test_shuffle_bit_length_edges(compiled):
    """Lengths around powers of two, where the number of bits drawn per swap changes."""
    for n in (2, 3, 4, 5, 63, 64, 65, 66, 127, 128, 129, 255, 256, 257, 1023, 1024, 1025, 4096, 4097):
        for seed in range(5):
            ours, theirs = random.Random(seed), random.Random(seed)
            x, y = list(range(n)), list(range(n))
            shuffle(ours, x, compiled=compiled)
            theirs.shuffle(y)
            assert x == y and ours.getstate() == theirs.getstate(), (n, seed)


def test_shuffle_of_a_subclass_is_its_own():
    class Reversing(random.Random):
        def shuffle(self, x):
            x.reverse()

    x = list(range(200))
    shuffle(Reversing(1), x)
    assert x == list(range(199, -1, -1))


def test_shuffle_of_other_sequences_is_their_own():
    """Only a plain list is swapped in place by the loops; anything else goes to ``Random.shuffle``."""
    class Items(list):
        pass

    for compiled in LOOPS:
        ours, theirs = random.Random(3), random.Random(3)
        x, y = Items(range(300)), list(range(300))
        shuffle(ours, x, compiled=compiled)
        theirs.shuffle(y)
        assert list(x) == y and ours.getstate() == theirs.getstate()


def test_compiled_loop_is_built_where_it_can_be():
    """The install compiles ``_fisher_yates.c`` wherever there is a C compiler and Python's headers; the
    shuffle then uses it by default."""
    headers = Path(sysconfig.get_paths()["include"], "Python.h")
    if not (shutil.which("cc") or shutil.which("gcc")) or not headers.exists():
        pytest.skip("no C compiler or no Python headers here: the install falls back to the Python loop")
    assert seeding._compiled_swaps is not None, (
        "epic_levels_pipeline._fisher_yates is not built: reinstall (pip install -e .) to compile it")
    from epic_levels_pipeline import _fisher_yates

    assert seeding._compiled_swaps is _fisher_yates.swaps


@pytest.mark.skipif(seeding._compiled_swaps is None, reason="the compiled loop is not built here")
def test_compiled_loop_checks_its_arguments():
    swaps = seeding._compiled_swaps
    words = (7).to_bytes(4, sys.byteorder)
    with pytest.raises(TypeError):
        swaps((1, 2, 3), 3, words)
    for bound in (1, 4, 2**32):  # (OverflowError: 2**32 past a 32-bit Py_ssize_t)
        with pytest.raises((ValueError, OverflowError)):
            swaps([1, 2, 3], bound, words)
    with pytest.raises(ValueError):
        swaps([1, 2, 3], 3, b"abc")
    x = [1, 2, 3]
    assert swaps(x, 3, b"") == 3 and x == [1, 2, 3]  # no words: nothing swapped, the bound unchanged


def test_asking_for_the_compiled_loop_where_it_is_not_built_says_so(monkeypatch):
    monkeypatch.setattr(seeding, "_compiled_swaps", None)
    with pytest.raises(RuntimeError, match="not built"):
        shuffle(random.Random(1), list(range(10)), compiled=True)
    x, y = list(range(100)), list(range(100))  # and by default the Python loop runs, the same shuffle
    ours, theirs = random.Random(2), random.Random(2)
    shuffle(ours, x)
    theirs.shuffle(y)
    assert x == y and ours.getstate() == theirs.getstate()


def test_stable_seed_is_stable():
    assert stable_seed(20261130, "clip", "q") == stable_seed("20261130", "clip", "q")
    assert stable_seed(1, "a") != stable_seed(1, "b")
    assert 0 <= stable_seed("x") < 2**48


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.one_of(st.integers(), st.text(max_size=40), st.floats(allow_nan=False)), min_size=1,
                      max_size=5))
def test_stable_seed_is_the_hex_rule(parts):
    """The digest's first six bytes are its first twelve hex digits: the seed of the earlier hex rule."""
    text = "|".join(str(p) for p in parts)
    assert stable_seed(*parts) == int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)
