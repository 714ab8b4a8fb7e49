"""The bank builder's own rules: reading rows inside their spans, the question-id digest, and the bank's
tables typed by the declared schemas."""

from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st


def test_read_inside_is_the_rule_it_shortcuts(bundled):
    """``_read_inside`` derives the scope once when no row moved: the same verdict, rows and scope as
    deriving it from the rows before and after reading them inside."""
    import copy

    from epic_levels_pipeline.bank.build import _read_inside
    from epic_levels_pipeline.bank.clip_view import ClipView
    from epic_levels_pipeline.bank.levels import derive_scope
    from epic_levels_pipeline.bank.subtypes import SUBTYPES
    from epic_levels_pipeline.annotations.clip_rows import clip_annotations
    from epic_levels_pipeline.annotations.clip_keys import read_manifest
    from epic_levels_pipeline_tests.conftest import ROOT

    ann, cat = bundled
    seen = 0
    for clip in read_manifest(ROOT / "data" / "clips.csv"):
        view = ClipView(clip, clip_annotations(ann, clip), cat)
        for subtype in SUBTYPES.values():
            if subtype.dataset != clip.dataset:
                continue
            for draft in subtype.generate(view):
                if isinstance(draft, tuple):
                    continue
                before = copy.copy(draft)
                inside = [e.read_inside() for e in before.provenance]
                derived = derive_scope(inside)
                refused = derive_scope(before.provenance) == subtype.scope != derived
                reason, scope = _read_inside(draft, subtype)
                assert (bool(reason), scope) == (refused, derived)
                assert draft.provenance == (before.provenance if refused else inside)
                seen += 1
    assert seen


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                    max_leaves=12)


@settings(deadline=None)
@given(st.dictionaries(st.text(max_size=4), JSON, max_size=4), JSON)
def test_digest_from_params_json_is_digest_of_the_pair(params, value):
    """A draft's question-id digest, made from its params' JSON (made once per draft), is the sha1 of the
    sorted JSON of ``[params, answer value]``, as :func:`build.question_id` has always made it."""
    import hashlib

    from epic_levels_pipeline.bank.build import _digest, _sorted_json

    whole = hashlib.sha1(json.dumps([params, value], sort_keys=True).encode()).hexdigest()[:8]
    assert _digest(_sorted_json(params), value) == whole


def test_bank_tables_have_the_declared_schemas(bundled):
    """A clip's questions and pools are Arrow tables of the declared schemas; the frames hold list cells."""
    from epic_levels_pipeline import schemas
    from epic_levels_pipeline.annotations.clip_rows import clip_annotations
    from epic_levels_pipeline.annotations.clip_keys import read_manifest
    from epic_levels_pipeline.bank.build import build_bank
    from epic_levels_pipeline_tests.conftest import ROOT

    ann, cat = bundled
    clip = read_manifest(ROOT / "data" / "clips.csv")[0]
    bank = build_bank(clip, clip_annotations(ann, clip), cat)
    assert bank.question_table.schema.equals(schemas.SCHEMAS["questions"])
    assert bank.pool_table.schema.equals(schemas.SCHEMAS["distractor_pools"])
    q = bank.questions
    assert len(q) and all(isinstance(v, list) for v in q["options"])
    assert list(q.columns) == schemas.columns("questions")


def test_pools_do_not_refer_back_to_their_view(bundled):
    """A clip's view keeps the pools it offers; no pool refers back to the view, so a clip's view and all it
    read are freed as soon as its bank is built (no reference cycle left for the garbage collector)."""
    import weakref

    from epic_levels_pipeline.annotations.clip_rows import clip_annotations
    from epic_levels_pipeline.annotations.clip_keys import read_manifest
    from epic_levels_pipeline.bank.clip_view import ClipView
    from epic_levels_pipeline.bank.pools import offered
    from epic_levels_pipeline.bank.subtypes import SUBTYPES, BankConfig
    from epic_levels_pipeline_tests.conftest import ROOT

    ann, cat = bundled
    config, strategies = BankConfig(), set()
    for clip in read_manifest(ROOT / "data" / "clips.csv"):
        view = ClipView(clip, clip_annotations(ann, clip), cat)
        pools = []
        for subtype in SUBTYPES.values():
            if subtype.applies(view):
                for draft in subtype.generate(view):
                    if not isinstance(draft, tuple):
                        for strategy in config.strategies(subtype):
                            pools.append(offered(strategy, view, draft))
                            strategies.add(strategy)
        ref = weakref.ref(view)
        del view
        assert ref() is None, clip.key
        assert all(p.note_of(0) for p in pools if len(p))  # (the pools still read their notes)
    assert "shares_objects" in strategies
