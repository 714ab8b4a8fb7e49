"""The caption track on the bundled clips: reference structures, the offline responders' scores, the
threshold sweep and the timeline figure."""

import math

import pandas as pd
import pytest

from epic_levels_pipeline.captions import (caption_alignments, caption_references, caption_responses, caption_scores,
                                           caption_threshold_sensitivity)
from epic_levels_pipeline.captions.figure import timeline_png
from epic_levels_pipeline.captions.prompt import caption_prompt
from epic_levels_pipeline.captions.reference import reference_structure, validate_structure
from epic_levels_pipeline.captions.responders import JITTER_SIGMAS
from epic_levels_pipeline.captions.sources import Clip, clip_annotations, read_manifest
from epic_levels_pipeline.captions.track import (SWEEP_METRICS, caption_threshold_partials, sensitivity_from_partials,
                                                 side_by_side, structure_from_table)

from ..conftest import ROOT


@pytest.fixture(scope="module")
def track(bundled):
    ann, cat = bundled
    refs, resps = [], []
    for clip in read_manifest(ROOT / "data" / "clips.csv"):
        r = caption_references(clip, clip_annotations(ann, clip), cat)
        refs.append(r)
        resps.append(caption_responses(clip, r, cat))
    refs, resps = pd.concat(refs, ignore_index=True), pd.concat(resps, ignore_index=True)
    alignments, scored = caption_alignments(refs, resps, cat)
    return refs, resps, alignments, scored, caption_scores(scored)


def value(scores, responder, condition, metric, dataset="*", matcher="greedy"):
    s = scores[(scores["responder"] == responder) & (scores["condition"] == condition) & (scores["metric"] == metric)
               & (scores["dataset"] == dataset) & (scores["matcher"] == matcher)]
    return float(s["value"].iat[0])


def test_reference_of_p09_08(bundled):
    """P09_08 45–75 s: sound P09_08_13 'water' (tap running, 47.662–48.966 s video time) is event E3 at
    2.662–3.966 s; narration P09_08_11 'pour water on plate' (46.82–49.31 s) names water and plate, and
    overlaps it: link E3 → A2, A2 → the water and plate references."""
    ann, cat = bundled
    clip = Clip.from_key("epic_sounds__P09_08__45-75")
    s = reference_structure(clip, clip_annotations(ann, clip), cat)
    assert validate_structure(s) == []
    assert (len(s.events), len(s.actions)) == (14, 8)
    e = {u.source_id: u for u in s.events}["P09_08_13"]
    assert (e.id, e.start_s, e.stop_s, e.sound_class) == ("E3", 2.662, 3.966, "water")
    nc = {u.source_id: u for u in s.events}["P09_08_NC_8"]
    assert nc.sound_class is None and nc.label == "clang / clatter"
    a = {u.source_id: u for u in s.actions}["P09_08_11"]
    assert a.id == "A2" and (e.id, a.id) in s.links
    names = {r.id: r.label for r in s.references}
    assert sorted(names[t] for x, t in s.links if x == "A2") == ["plate", "water"]
    assert "cabinet" in {u.label for u in s.references} and "cupboard" in {u for r in s.references for u in r.synonyms}
    assert any("not categorised" in n for n in s.notes)


def test_reference_of_an_hd_epic_clip(bundled):
    """P09-20240623-120359 1440–1470 s: five movement tracks of four associations; the two mango tracks
    (b7b5353c…, 4a6255b1…) are one object, so both actions link to one reference."""
    ann, cat = bundled
    clip = Clip.from_key("hd_epic__P09-20240623-120359__1440-1470")
    s = reference_structure(clip, clip_annotations(ann, clip), cat)
    assert validate_structure(s) == [] and s.events == []
    assert len(s.actions) == 5 and len(s.references) == 4
    mango = [a.id for a in s.actions if a.object_name == "mango"]
    assert len(mango) == 2 and len({t for x, t in s.links if x in mango}) == 1
    assert any("HD-EPIC sound annotations are not available here: no events" in n for n in s.notes)
    assert "move the knife" in {a.label for a in s.actions}


def test_every_bundled_reference_is_valid_and_round_trips(bundled, track):
    ann, cat = bundled
    refs = track[0]
    for clip in read_manifest(ROOT / "data" / "clips.csv"):
        s = reference_structure(clip, clip_annotations(ann, clip), cat)
        assert validate_structure(s) == [], clip.key
        back = structure_from_table(clip.key, refs[refs["clip_key"] == clip.key])
        assert back.links == s.links and [u.id for u in back.actions] == [u.id for u in s.actions]


def test_oracle_scores_one_on_every_metric_under_clip(track):
    scored = track[3]
    oracle = scored[(scored["responder"] == "oracle") & (scored["condition"] == "clip")]
    for column in [c for c in oracle.columns if c.endswith(("_p", "_r", "_f1")) or c == "ccc"]:
        values = oracle[column].dropna()
        assert (values == 1.0).all(), column
    assert (oracle.filter(like="rate_") == 0).all().all() and (oracle["n_undecided"] == 0).all()
    assert oracle["event_f1"].notna().sum() == 2 * 13      # every epic_sounds clip, both matchers
    assert oracle["ccc"].notna().any()


def test_oracle_under_silenced_perceives_no_sound(track):
    scored = track[3]
    silenced = scored[(scored["responder"] == "oracle") & (scored["condition"] == "silenced")]
    assert len(silenced) and (silenced["dataset"] == "epic_sounds").all()
    assert (silenced["event_r"] == 0).all() and (silenced["evsa_r"] == 0).all()
    for column in ("action_p", "action_r", "action_f1", "action_label_f1", "reference_f1", "reference_label_f1"):
        assert (silenced[column] == 1.0).all(), column


def test_jitter_falls_monotonically_with_sigma(track):
    scores = track[4]
    for metric in ("event_f1", "action_f1", "event_label_f1", "action_label_f1", "reference_f1"):
        values = [1.0] + [value(scores, f"jitter_{s:g}s", "clip", metric) for s in JITTER_SIGMAS]
        assert all(a >= b for a, b in zip(values, values[1:])), (metric, values)
        assert values[-1] < 0.8


def test_presence_blind_and_chance_are_well_below_the_oracle(track):
    scores = track[4]
    for responder in ("presence", "blind", "chance"):
        for metric in ("event_label_f1", "action_label_f1", "reference_label_f1"):
            assert value(scores, responder, "clip", metric) < 0.5, (responder, metric)
    assert value(scores, "presence", "clip", "reference_name_f1") == 1.0   # it knows what, not when


def test_alignments_list_every_unit(track):
    refs, _, alignments, _, _ = track
    a = alignments[(alignments["responder"] == "chance") & (alignments["condition"] == "clip")
                   & (alignments["matcher"] == "greedy")]
    for key, g in refs.groupby("clip_key"):
        listed = a[(a["clip_key"] == key) & a["ref_id"].notna()]
        assert sorted(listed["ref_id"]) == sorted(g["unit_id"]), key
    matched = a[a["ref_id"].notna() & a["resp_id"].notna() & (a["unit"] != "reference")]
    assert (matched["tiou"] >= 0.2).all() and matched["verdict"].isin(["agree", "disagree", "undecided"]).all()


def test_the_judge_is_asked_only_about_undecided_pairs(bundled, track):
    refs, resps = track[0], track[1]
    ann, cat = bundled
    asked = []

    def judge(kind, a, b):
        asked.append((kind, a, b))
        return True

    part = resps[resps["responder"].isin(["oracle", "jitter_1s", "presence"]) & (resps["condition"] == "clip")]
    _, with_judge = caption_alignments(refs, part, cat, judge=judge)
    _, without = caption_alignments(refs, part, cat)
    # Exactly the pairs the rules left undecided went to the judge (it always answered, so none remain).
    assert with_judge["n_judged"].sum() == without["n_undecided"].sum() > 0
    assert with_judge["n_undecided"].sum() == 0 and without["n_judged"].sum() == 0
    assert len(set(asked)) == len(asked)                       # each distinct pair asked once
    assert (with_judge["action_label_f1"].fillna(0) >= without["action_label_f1"].fillna(0)).all()


def test_threshold_sweep_and_spearman(track, bundled):
    refs, resps = track[0], track[1]
    ann, cat = bundled
    keys = sorted(refs["clip_key"].unique())[:6]
    sweep = caption_threshold_sensitivity(refs, resps[resps["clip_key"].isin(keys)], cat)
    assert set(sweep.loc[sweep["unit"] == "event", "threshold"]) == {0.1, 0.2, 0.3, 0.4, 0.5}
    assert set(sweep.loc[sweep["unit"] == "action", "threshold"]) == {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7}
    at_default = sweep[sweep["is_default"] & (sweep["condition"] == "clip") & (sweep["metric"] == "action_f1")]
    assert (at_default["spearman_rho"] == 1.0).all()
    loose = sweep[(sweep["unit"] == "action") & (sweep["threshold"] == 0.1) & (sweep["condition"] == "clip")
                  & (sweep["metric"] == "action_f1")]
    assert loose["value"].max() == 1.0 and 0 < loose["spearman_rho"].iat[0] <= 1


def test_sweep_from_per_clip_partials_equals_the_whole_sweep_and_the_scores_at_the_defaults(track, bundled):
    """The pipeline writes each clip's share of the sweep and averages them: in any clip order, that is the
    sweep of all responses at once; at the default thresholds it is ``caption_scores``' greedy mean, computed
    by the other path (``caption_alignments``)."""
    refs, resps, _, _, scores = track
    ann, cat = bundled
    keys = sorted(refs["clip_key"].unique())
    per_clip = [caption_threshold_partials(refs[refs["clip_key"] == k], resps[resps["clip_key"] == k], cat)
                for k in reversed(keys)]
    assert all(set(p["clip_key"]) == {k} for p, k in zip(per_clip, reversed(keys)))
    combined = sensitivity_from_partials(pd.concat(per_clip, ignore_index=True))
    whole = caption_threshold_sensitivity(refs, resps, cat)
    pd.testing.assert_frame_equal(combined, whole, check_exact=False, rtol=1e-12, atol=1e-12)
    at_default = combined[combined["is_default"]]
    assert set(at_default["metric"]) == set(SWEEP_METRICS) and len(at_default)
    for r in at_default.dropna(subset=["value"]).itertuples():
        assert math.isclose(r.value, value(scores, r.responder, r.condition, r.metric), rel_tol=1e-12), r
    assert sensitivity_from_partials(per_clip[0].iloc[0:0]).empty


def test_prompt_and_side_by_side(track):
    refs, resps = track[0], track[1]
    clip = Clip.from_key("epic_sounds__P09_08__45-75")
    text = caption_prompt(clip, "silenced")
    assert "between 0 and 30" in text and '"events"' in text and "silent" in text
    view = side_by_side(refs, resps, clip.key, "jitter_1s")
    assert "take plate" in view and "[events] 14 | 14" in view


def test_timeline_figure(track, tmp_path):
    alignments = track[2]
    one = alignments[(alignments["clip_key"] == "epic_sounds__P09_08__45-75") & (alignments["responder"] == "jitter_1s")
                     & (alignments["condition"] == "clip")]
    png = timeline_png(one, 30.0, "P09_08 45–75 s, jitter 1 s", tmp_path / "t.png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and (tmp_path / "t.png").read_bytes() == png
