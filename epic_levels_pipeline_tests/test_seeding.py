"""Seeds and the seeded shuffle: :func:`seeding.shuffle` must be ``random.Random.shuffle`` exactly."""

import hashlib
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from epic_levels_pipeline.seeding import shuffle, stable_seed


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**64), n=st.one_of(st.integers(0, 140), st.integers(0, 5000)),
       warm=st.integers(0, 700))
def test_shuffle_is_random_shuffle(seed, n, warm):
    """The same permutation, and the generator in the same state after (what it draws next is the same)."""
    ours, theirs = random.Random(seed), random.Random(seed)
    for rng in (ours, theirs):  # a state part-way through the Mersenne Twister's 624-word block
        rng.getrandbits(32 * warm) if warm else None
    x, y = [f"v{i}" for i in range(n)], [f"v{i}" for i in range(n)]
    shuffle(ours, x)
    theirs.shuffle(y)
    assert x == y
    assert ours.getstate() == theirs.getstate()


def test_shuffle_bit_length_edges():
    """Lengths around powers of two, where the number of bits drawn per swap changes."""
    for n in (63, 64, 65, 66, 127, 128, 129, 255, 256, 257, 1023, 1024, 1025, 4096, 4097):
        for seed in range(5):
            ours, theirs = random.Random(seed), random.Random(seed)
            x, y = list(range(n)), list(range(n))
            shuffle(ours, x)
            theirs.shuffle(y)
            assert x == y and ours.getstate() == theirs.getstate(), (n, seed)


def test_shuffle_of_a_subclass_is_its_own():
    class Reversing(random.Random):
        def shuffle(self, x):
            x.reverse()

    x = list(range(200))
    shuffle(Reversing(1), x)
    assert x == list(range(199, -1, -1))


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
