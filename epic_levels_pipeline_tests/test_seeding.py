"""Seeds and the seeded generators: stable per-thing seeds, PCG64 generators that depend only on them."""

import hashlib

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pathlib import Path

from epic_levels_pipeline.seeding import Seed, generator, stable_seed

ROOT = Path(__file__).resolve().parents[1]


def test_stable_seed_is_stable():
    assert stable_seed(20261130, "clip", "q") == stable_seed("20261130", "clip", "q")
    assert stable_seed(1, "a") != stable_seed(1, "b")
    assert 0 <= stable_seed("x") < 2**48


@settings(deadline=None)
@given(parts=st.lists(st.one_of(st.integers(), st.text(max_size=40), st.floats(allow_nan=False)), min_size=1,
                      max_size=5))
def test_stable_seed_is_the_hex_rule(parts):
    """The digest's first six bytes are its first twelve hex digits: the seed of the earlier hex rule."""
    text = "|".join(str(p) for p in parts)
    assert stable_seed(*parts) == int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)


def test_generator_is_pcg64_of_the_stable_seed():
    rng = generator(20261130, "clip", "subtype")
    assert isinstance(rng.bit_generator, np.random.PCG64)
    want = np.random.Generator(np.random.PCG64(stable_seed(20261130, "clip", "subtype")))
    assert rng.permutation(50).tolist() == want.permutation(50).tolist()


def test_generator_draws_depend_only_on_the_parts():
    a, b = generator(1, "x"), generator(1, "x")
    b.random(7)  # another generator of the same parts, used before: the first is unaffected
    assert generator(1, "x").permutation(20).tolist() == a.permutation(20).tolist()
    assert generator(1, "x").permutation(20).tolist() != generator(1, "y").permutation(20).tolist()


def test_seed_makes_fresh_generators_of_the_parts():
    """Every generator of one :class:`Seed` starts where a generator of the same parts does, whatever was drawn
    from the others; the seed sequence's other requests are numpy's own."""
    seed = Seed(20261130, "clip", "subtype", "draft")
    first = seed.generator()
    first.random(5)
    want = np.random.Generator(np.random.PCG64(stable_seed(20261130, "clip", "subtype", "draft")))
    again = seed.generator()
    assert isinstance(again.bit_generator, np.random.PCG64)
    assert again.bit_generator.state == want.bit_generator.state
    assert again.permutation(50).tolist() == want.permutation(50).tolist()
    sequence = np.random.SeedSequence(stable_seed(20261130, "clip", "subtype", "draft"))
    assert seed.generate_state(8).tolist() == sequence.generate_state(8).tolist()
    assert np.random.Generator(np.random.MT19937(seed)).random() == np.random.Generator(np.random.MT19937(sequence)).random()


def test_generator_stream_is_recorded():
    """PCG64's stream for one seed, recorded: a numpy that changed it would re-draw every bank."""
    assert generator(20261130, "probe").permutation(10).tolist() == RECORDED


RECORDED = [7, 2, 6, 3, 1, 0, 9, 8, 5, 4]


def test_the_project_seed_reaches_every_seeded_step():
    """The offline responders' draws, the judge's option order, the judge audit's sample and the bootstrap intervals
    change with the project seed, and stay put for the same seed (P09_08 45-75 s, the chance responder)."""
    from epic_levels_pipeline.annotations.catalogue import build_catalogue
    from epic_levels_pipeline.annotations.clip_rows import clip_annotations
    from epic_levels_pipeline.annotations.clips import Clip
    from epic_levels_pipeline.annotations.readers import load_annotations
    from epic_levels_pipeline.pipeline import clip_chain
    from epic_levels_pipeline.scoring.metrics.combined import scores_from_partials
    from epic_levels_pipeline.scoring.verdicts import judge_order
    from epic_levels_pipeline.settings import Paths

    ann = load_annotations(Paths(ROOT).annotations)
    cat = build_catalogue(ann)
    clip = Clip.from_key("epic_sounds__P09_08__45-75")
    rows = clip_annotations(ann, clip)
    chains = {seed: clip_chain(clip, rows, cat, responders=["chance"], seed=seed, partials=True) for seed in (1, 1, 2)}
    replies = {seed: list(chain.responses["reply"]) for seed, chain in chains.items()}
    assert replies[1] != replies[2]
    again = clip_chain(clip, rows, cat, responders=["chance"], seed=1, partials=True)
    assert list(again.responses["reply"]) == replies[1]
    orders = {seed: [judge_order(f"i{n}", "m", "clip", 4, seed) for n in range(20)] for seed in (1, 2)}
    assert orders[1] != orders[2]
    samples = {seed: list(chain.partials["judge_partials"]["sample_key"]) for seed, chain in chains.items()}
    assert samples[1] != samples[2] or not samples[1]
    partials = chains[1].partials["score_partials"]
    intervals = {seed: scores_from_partials(partials, seed=seed)[["ci_low", "ci_high"]] for seed in (1, 2)}
    assert not intervals[1].equals(intervals[2])
