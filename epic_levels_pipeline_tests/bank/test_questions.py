"""The question bank: levels by evidence, solver-verified keys, distractors, on real and generated rows."""

import json

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from epic_levels_pipeline.annotations.readers import Annotations, empty_table
from epic_levels_pipeline.bank.checks import key_problems, level_problems, shortcut_rates
from epic_levels_pipeline.annotations.catalogue import build_catalogue
from epic_levels_pipeline.bank.clip_view import ClipView
from epic_levels_pipeline.annotations.clips import Clip
from epic_levels_pipeline.annotations.clip_rows import clip_annotations
from epic_levels_pipeline.annotations.clip_keys import read_manifest
from epic_levels_pipeline.annotations.language import SOUND_CUES, action_phrase, gerund, noun_display
from epic_levels_pipeline.bank.levels import Evidence, derive_scope, level_of, moments
from epic_levels_pipeline.bank.build import build_bank
from epic_levels_pipeline.bank.solvers import solve
from epic_levels_pipeline.bank.subtypes import SUBTYPES

from ..conftest import ROOT


def bank_of(offline_bank, key):
    """(clip, rows, bank) of a bundled clip: the session's bank (``conftest.offline_bank``)."""
    return offline_bank["banks"][Clip.from_key(key).key]


def test_every_bundled_clip_gets_questions_at_the_right_levels(bundled, offline_bank):
    levels = {"epic_sounds": set(), "hd_epic": set()}
    for clip in read_manifest(ROOT / "data" / "clips.csv"):
        _, rows, bank = bank_of(offline_bank, clip.key)
        assert len(bank.questions), clip.key
        levels[clip.dataset] |= set(bank.questions["level"])
        view = ClipView(clip, rows, bundled[1])
        assert key_problems(bank.questions, view) == []
        assert level_problems(bank.questions) == []
    assert levels == {"epic_sounds": {"L1", "L2", "L3"}, "hd_epic": {"L1", "L2", "L3", "L4"}}


def test_p09_08_sound_moment_question_checkable_by_hand(offline_bank):
    # EPIC_Sounds_validation.csv: P09_08_18 metal / ceramic collision 57.109–57.569 (heard once in 45–75 s).
    # EPIC_100_validation.csv: the only narration overlapping it is P09_08_14 "wash blueberries" 57.50–62.29.
    _, _, bank = bank_of(offline_bank, "epic_sounds__P09_08__45-75")
    q = bank.questions
    moment = q[(q["subtype"] == "low_sound_object") & (q["distractor_strategy"] == "same_clip_other_moments")].iloc[0]
    assert moment["level"] == "L2"
    assert moment["question"] == "At the moment you hear metal hitting ceramic, which object is the camera wearer handling?"
    assert moment["answer"] == "blueberry"
    evidence = {(e["stream"], e["row_id"]) for e in json.loads(moment["provenance"])}
    assert evidence == {("sound", "P09_08_18"), ("narration", "P09_08_14")}
    # same-clip distractors occur in the clip at other moments; the leaky variant's do not occur at all
    assert all(moment["option_present"])
    leaky = q[(q["subtype"] == "low_sound_object") & (q["distractor_strategy"] == "absent_from_clip")].iloc[0]
    assert sum(leaky["option_present"]) == 1 and leaky["presence_correct"]


def test_hd_epic_design_windows(offline_bank):
    _, _, bank = bank_of(offline_bank, "hd_epic__P09-20240623-120359__1440-1470")
    goal = bank.questions[bank.questions["subtype"] == "easy_goal"].iloc[0]
    assert goal["answer"] == "Prepare mango" and goal["level"] == "L1"
    medium = bank.questions[bank.questions["subtype"] == "medium_goal"].iloc[0]
    assert medium["answer"] == "Prepare mango" and medium["level"] == "L3"
    _, _, bank = bank_of(offline_bank, "hd_epic__P02-20240210-113925__90-120")
    step = bank.questions[bank.questions["subtype"] == "hard_next_step"].iloc[0]
    assert step["level"] == "L4" and derive_scope(json.loads(step["provenance"])) == "beyond"


def test_levels_are_derived_from_scope():
    assert {s.name: s.level for s in SUBTYPES.values()}["low_sound_object"] == "L2"
    assert [level_of(s) for s in ("presence", "moment", "sequence", "beyond")] == ["L1", "L2", "L3", "L4"]
    assert derive_scope([Evidence("sound", "a", 1, 2, "occurrence")]) == "presence"
    assert derive_scope([Evidence("sound", "a", 1, 2, "cue", at_s=1.5), Evidence("narration", "a", 1, 3, "answer", at_s=1.5)]) == "moment"
    assert derive_scope([Evidence("sound", "a", 1, 2, "cue", at_s=1.5), Evidence("narration", "b", 5, 6, "answer", at_s=5.0)]) == "sequence"
    assert derive_scope([Evidence("recipe_step", "s", 90, 95, "recipe", at_s=90, in_window=False)]) == "beyond"


def test_shortcut_audit_shows_the_leak(offline_bank):
    frames = [bank_of(offline_bank, c.key)[2].questions for c in read_manifest(ROOT / "data" / "clips.csv")]
    rates = shortcut_rates(pd.concat(frames))
    moment = rates[rates["level"] != "L1"]
    leaky = moment[moment["distractor_strategy"] == "absent_from_clip"]
    fixed = moment[moment["distractor_strategy"] == "same_clip_other_moments"]
    assert len(leaky) and (leaky["presence_oracle_rate"] > 0.9).all()
    assert len(fixed) and (fixed["presence_oracle_rate"] - fixed["chance"]).abs().max() < 0.05


def test_language():
    assert len(SOUND_CUES) == 44 and SOUND_CUES["plastic-only collision"] == "two plastic objects knocking together"
    assert gerund("wash") == "washing" and gerund("take") == "taking" and gerund("cut") == "cutting" and gerund("open") == "opening"
    assert noun_display("bottle:wine") == "wine bottle"
    assert action_phrase("pour water on plate", ["water", "plate"]) == "pouring the water on the plate"
    # a narration that already starts with a gerund is not gerundised twice ("stuffinging")
    assert action_phrase("stuffing tortillas with cheese", ["tortilla", "cheese"], "gerund", "stuff") == \
        "stuffing the tortillas with the cheese"
    assert action_phrase("stuffing tortillas with cheese", ["tortilla", "cheese"], "infinitive", "stuff") == \
        "stuff the tortillas with the cheese"


# --- property tests on generated annotation tables ----------------------------------------------------

CLASSES = ["water", "cut / chop", "metal-only collision", "rustle"]
WINDOW = Clip("epic_sounds", "P99_01", 0.0, 30.0)


@st.composite
def tables(draw):
    n_sounds = draw(st.integers(1, 8))
    sounds = []
    for i in range(n_sounds):
        start = draw(st.floats(0, 28, allow_nan=False)).__round__(2)
        sounds.append((f"P99_01_{i}", "P99", "P99_01", start, round(start + draw(st.floats(0.2, 3)), 2), "desc",
                       draw(st.sampled_from(CLASSES)), 0, True, "f", i + 2))
    n_narr = draw(st.integers(1, 8))
    narrations = []
    for i in range(n_narr):
        start = round(draw(st.floats(0, 28, allow_nan=False)), 2)
        verb, noun = draw(st.integers(0, 3)), draw(st.integers(10, 14))
        narrations.append((f"P99_01_{i}", "P99", "P99_01", start, round(start + draw(st.floats(0.3, 4)), 2),
                           f"verb{verb} noun{noun}", f"verb{verb}", verb, f"noun{noun}", noun, [f"noun{noun}"], [noun],
                           True, "generated", "f", i + 2))
    ann = Annotations(
        sounds=pd.DataFrame(sounds, columns=empty_table("sounds").columns),
        narrations=pd.DataFrame(narrations, columns=empty_table("narrations").columns),
        activities=empty_table("activities"), recipe_steps=empty_table("recipe_steps"),
        object_tracks=empty_table("object_tracks"), vocabulary=empty_table("vocabulary"), videos=empty_table("videos"))
    return ann


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])  # a bank per example
@given(tables())
def test_generated_banks_hold_their_invariants(ann):
    ann.sounds = ann.sounds.astype({"start_s": float, "stop_s": float})
    ann.narrations = ann.narrations.astype({"start_s": float, "stop_s": float, "verb_class": "Int64", "noun_class": "Int64"})
    cat = build_catalogue(ann)
    rows = clip_annotations(ann, WINDOW)
    bank = build_bank(WINDOW, rows, cat)
    view = ClipView(WINDOW, rows, cat)
    assert key_problems(bank.questions, view) == []
    assert level_problems(bank.questions) == []
    by_id = {(r.stream, r.row_id): r for r in rows.itertuples()}
    for q in bank.questions.itertuples():
        evidence = json.loads(q.provenance)
        # every evidence row is a real row of the clip that overlaps the window
        for e in evidence:
            row = by_id[(e["stream"], e["row_id"])]
            assert row.start_s < WINDOW.end_s and row.stop_s > WINDOW.start_s
        params = json.loads(q.params)
        if "cue_class" in params and q.subtype != "medium_sound_count":
            cues = [o for o in view.occurrences.get(params["cue_class"], [])]
            assert len(cues) == 1  # a cue picks out exactly one moment
            cue = cues[0]
            if q.subtype == "low_sound_object":
                # the key is supported by a narration overlapping the cued moment
                noun = int(q.answer_value.split(":")[1])
                at = view.narrations_at(cue.start_s, cue.stop_s)
                assert noun in set(at["noun_class"].astype(int))
        if q.level == "L3":
            anchored = [e["at_s"] for e in evidence if e["at_s"] is not None]
            assert len(moments(anchored)) >= 2
