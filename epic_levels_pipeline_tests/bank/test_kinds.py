"""Typed candidate values: parsed once, stored unchanged, and each kind answered in one place."""

import pytest

from epic_levels_pipeline.annotations.values import CandidateValue
from epic_levels_pipeline.bank.kinds import KINDS, kind_of, present, render, synonyms


@pytest.mark.parametrize("text", ["noun:12", "action:3:12", "purpose:0:4", "object:mug", "sound:water", "count:3",
                                  "step:P01_R01_3", "activity:make tea", "odd"])
def test_value_text_round_trips(text):
    assert str(CandidateValue.parse(text)) == (text if ":" in text else f"{text}:")


def test_pair_and_noun_class():
    assert CandidateValue.parse("action:3:12").pair == (3, 12)
    assert CandidateValue.parse("noun:12").noun_class == 12


def test_every_stored_kind_has_its_behaviour(offline_bank, bundled):
    _, cat = bundled
    kinds = {CandidateValue.parse(v).kind for vs in offline_bank["questions"]["option_values"] for v in vs}
    assert kinds <= set(KINDS)


def test_unknown_kind_renders_as_an_error_and_has_no_presence():
    with pytest.raises(ValueError, match="unknown candidate kind in 'colour:red'"):
        render(None, "colour:red")
    assert present(None, "colour:red") is None
    assert kind_of("colour").synonyms(None, None, CandidateValue.parse("colour:red"), "Red") == ["Red"]
    assert synonyms(None, None, "count:3", "three") == ["3"]


def test_every_subtype_has_a_solver_and_a_missing_one_says_where_to_add_it():
    from epic_levels_pipeline.bank.solvers import SOLVERS, solve
    from epic_levels_pipeline.bank.subtypes import SUBTYPES

    assert set(SUBTYPES) <= set(SOLVERS)
    with pytest.raises(LookupError, match=r"no solver: add one with @solver\('nope'\) in .*bank/solvers.py"):
        solve("nope", None, {}, [])


def test_a_subtype_without_a_solver_is_refused_at_registration():
    from epic_levels_pipeline.bank.subtypes import SUBTYPES, Subtype, register

    with pytest.raises(ValueError, match=r"subtype 'unsolved' has no solver: add one with @solver\('unsolved'\)"):
        register(Subtype("unsolved", "epic_sounds", ("sound",), "presence", "absent_from_clip", "sound", lambda v: iter(())))
    assert "unsolved" not in SUBTYPES
    assert SUBTYPES["easy_goal"].solve is SUBTYPES["medium_goal"].solve  # one solver serves both


def test_action_texts_kept_with_the_catalogue_are_the_phrases_of_the_clips_narrations(bundled):
    """An action or purpose the clip narrates reads as its first narration's phrase, kept with the catalogue
    (the same narration in another window reads the same): what ``action_phrase`` makes of it, clip by clip."""
    from dataclasses import replace

    from epic_levels_pipeline.annotations.clip_rows import clip_annotations
    from epic_levels_pipeline.annotations.clip_keys import read_manifest
    from epic_levels_pipeline.annotations.language import action_phrase
    from epic_levels_pipeline.bank.clip_view import ClipView

    from ..conftest import ROOT

    ann, cat = bundled
    cat = replace(cat, _derived={})  # (a catalogue of its own: the texts kept are this test's)
    checked = 0
    for clip in read_manifest(ROOT / "data" / "clips.csv"):
        for _ in range(2):  # a fresh view of the clip reads the kept texts the second time
            view = ClipView(clip, clip_annotations(ann, clip), cat)
            for (v, n), own in view.first_narration_of.items():
                for kind, form in (("action", "gerund"), ("purpose", "infinitive")):
                    want = action_phrase(own.narration, list(own.all_nouns), form, own.verb)
                    assert render(view, CandidateValue(kind, f"{v}:{n}")) == want
                    checked += 1
    assert checked > 100
