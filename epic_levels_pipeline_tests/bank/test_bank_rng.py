"""``build_bank`` reseeds one generator for every draw: after ``rng.seed(s)`` it is in the state a new
``random.Random(s)`` starts in, whatever it drew before (Gaussian draws included)."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**48 - 1), st.integers(0, 2**48 - 1), st.integers(0, 5))
def test_reseeded_generator_is_a_new_one(before, seed, draws):
    rng = random.Random(before)
    for _ in range(draws):
        rng.random()
        rng.gauss(0, 1)
        rng.shuffle(list(range(70)))
    rng.seed(seed)
    fresh = random.Random(seed)
    assert rng.getstate() == fresh.getstate()
    assert [rng.random() for _ in range(3)] == [fresh.random() for _ in range(3)]
