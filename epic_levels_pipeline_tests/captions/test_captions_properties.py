"""Property tests: a caption matched against itself scores 1.0; shifted past its units' extent, 0 recall."""

import math
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from epic_levels_pipeline.captions.labels import LabelRules
from epic_levels_pipeline.captions.parse import parse_caption, render_caption
from epic_levels_pipeline.captions.score import score_response
from epic_levels_pipeline.captions.sources import Catalogue
from epic_levels_pipeline.captions.structure import Structure, Unit, overlap_s

RULES = LabelRules.build(Catalogue())     # an empty catalogue: only the identical-text rule can agree
WORDS = ["water", "chopping", "beep", "take plate", "wash blueberries", "open cupboard", "knife", "mango"]
DURATION = 60.0


@st.composite
def spans(draw, n):
    out = []
    for _ in range(n):
        a = draw(st.floats(0, 50, allow_nan=False).map(lambda x: round(x, 2)))
        out.append((a, round(a + draw(st.floats(0.1, 9.9, allow_nan=False)), 2)))
    return out


@st.composite
def structures(draw):
    dataset = draw(st.sampled_from(["epic_sounds", "hd_epic"]))
    s = Structure(dataset, DURATION)
    action_spans = draw(spans(draw(st.integers(1, 8))))
    # As in every reference structure, each entity is named by at least one action.
    n_refs = draw(st.integers(1, min(4, len(action_spans))))
    s.references = [Unit("reference", f"R{i}", label=draw(st.sampled_from(WORDS))) for i in range(1, n_refs + 1)]
    for i, (a, b) in enumerate(action_spans, start=1):
        s.actions.append(Unit("action", f"A{i}", a, b, label=draw(st.sampled_from(WORDS)), verb="v", noun="n"))
        s.links.append((f"A{i}", f"R{i if i <= n_refs else draw(st.integers(1, n_refs))}"))
    if dataset == "epic_sounds":
        for i, (a, b) in enumerate(draw(spans(draw(st.integers(1, 8)))), start=1):
            s.events.append(Unit("event", f"E{i}", a, b, label=draw(st.sampled_from(WORDS))))
        s.links += [(e.id, a.id) for e in s.events for a in s.actions if overlap_s(e, a) > 0]
    return s


@settings(deadline=None)
@given(structures(), st.sampled_from(["greedy", "hungarian"]))
def test_a_caption_against_itself_scores_one(s, matcher):
    parsed = parse_caption(render_caption(s), s.dataset, s.duration_s)
    m = score_response(s, parsed, RULES, matcher=matcher).metrics
    for name, value in m.items():
        if name.startswith("rate_") or name == "parse_failure":
            assert value == 0, name
        elif not math.isnan(value):
            assert value == 1.0, (name, value)
    assert m["action_f1"] == 1.0 and m["reference_f1"] == 1.0
    if s.dataset == "epic_sounds":
        assert m["event_label_f1"] == 1.0
    assert parsed.structure.links == s.links


@settings(deadline=None)
@given(structures(), st.floats(0.01, 5))
def test_shifting_past_the_units_extent_gives_zero_temporal_recall(s, extra):
    """Shift every time by more than the extent of all units (last stop − first start): no response unit
    overlaps any reference unit, so nothing matches at any threshold (the clip is made long enough that
    nothing is clamped)."""
    timed = s.events + s.actions
    shift = max(u.stop_s for u in timed) - min(u.start_s for u in timed) + extra
    moved = Structure(s.dataset, 200.0,
                      [replace(u, start_s=u.start_s + shift, stop_s=u.stop_s + shift) for u in s.events],
                      [replace(u, start_s=u.start_s + shift, stop_s=u.stop_s + shift) for u in s.actions],
                      s.references, s.links)
    ref = replace(s, duration_s=200.0)
    parsed = parse_caption(render_caption(moved), s.dataset, 200.0)
    for matcher in ("greedy", "hungarian"):
        m = score_response(ref, parsed, RULES, matcher=matcher).metrics
        assert m["action_r"] == 0 and m["reference_r"] == 0
        if s.dataset == "epic_sounds":
            assert m["event_r"] == 0 and not m["evsa_r"] > 0      # NaN when the reference has no event→action link
