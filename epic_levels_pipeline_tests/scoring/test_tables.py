"""Scored tables on synthetic verdicts with known counts, and the reference responders over the bundled bank."""

import numpy as np
import pandas as pd
import pytest

from epic_levels_pipeline.scoring.metrics.stats import chance_corrected_interval, cluster_bootstrap, mcnemar_exact, score_intervals
from epic_levels_pipeline.scoring.metrics.tables import PAIR_COLUMNS, SCORE_COLUMNS, over_marking, paired_comparisons, scores


def verdict(qid, fmt, condition, correct, clip, scored_by="rule", chance=0.25, marked=None, base=None):
    return {"item_id": f"{qid}#{fmt}", "question_id": qid, "clip_key": clip, "dataset": "epic_sounds", "level": "L2",
            "subtype": "low_sound_object", "distractor_strategy": "same_clip_other_moments", "format": fmt,
            "base_format": base or fmt, "condition": condition, "responder": "r", "model": "m", "reply": "",
            "parsed": "", "expected": "", "correct": correct, "scored_by": scored_by, "note": "",
            "n_marked_true": marked, "judge_raw": "", "chance": chance}


def test_scores_counts_roll_ups_and_strict_accuracy():
    rows = [verdict(f"q{i}", "multiple_choice", "clip", i < 6, f"c{i % 3}") for i in range(8)]
    rows += [verdict("q8", "open", "clip", None, "c0", scored_by="undecided", chance=0.0),
             verdict("q9", "open", "clip", True, "c1", chance=0.0)]
    s = scores(pd.DataFrame(rows), n_boot=200)
    mc = s[(s["format"] == "multiple_choice") & (s["subtype"] == "low_sound_object")].iloc[0]
    assert (mc["n"], mc["correct"]) == (8, 6)
    assert mc["accuracy"] == 0.75 and mc["chance_corrected"] == pytest.approx((0.75 - 0.25) / 0.75)
    assert mc["ci_low"] <= mc["chance_corrected"] <= mc["ci_high"]
    op = s[(s["format"] == "open") & (s["subtype"] == "low_sound_object")].iloc[0]
    assert (op["n"], op["n_undecided"], op["accuracy"], op["accuracy_strict"]) == (1, 1, 1.0, 0.5)
    top = s[(s["format"] == "*") & (s["subtype"] == "*") & (s["level"] == "*") & (s["dataset"] == "*")]
    assert len(top) == 1 and top.iloc[0]["n"] == 9 and top.iloc[0]["distractor_strategy"] == "*"


def test_paired_comparisons_count_pairs_by_question_and_item():
    rows = []
    pattern = [(True, True), (True, False), (True, False), (False, True), (False, False)]
    for i, (a, b) in enumerate(pattern):
        rows.append(verdict(f"q{i}", "multiple_choice", "clip", a, f"c{i}"))
        rows.append(verdict(f"q{i}", "yes_no", "clip", b, f"c{i}", chance=0.5))
        rows.append(verdict(f"q{i}", "multiple_choice", "no_clip", b, f"c{i}"))
    p = paired_comparisons(pd.DataFrame(rows), n_boot=200)
    fmt = p[(p["kind"] == "format") & (p["level"] == "*")].iloc[0]
    assert (fmt["a"], fmt["b"]) == ("multiple_choice", "yes_no")
    assert (fmt["n_pairs"], fmt["both"], fmt["only_a"], fmt["only_b"], fmt["neither"]) == (5, 1, 2, 1, 1)
    assert fmt["mcnemar_p"] == pytest.approx(1.0)  # 2 vs 1 discordant: exact two-sided p = 1
    assert fmt["mcnemar_p_unclustered"] == fmt["mcnemar_p"]  # one question per clip: the same test
    cond = p[(p["kind"] == "condition") & (p["level"] == "*")].iloc[0]
    assert (cond["a"], cond["b"], cond["only_a"], cond["only_b"]) == ("clip", "no_clip", 2, 1)
    assert cond["diff"] == pytest.approx(0.2)


def test_paired_p_is_clustered_by_clip():
    # twelve questions from three clips, every one right in multiple choice and wrong in yes/no
    rows = []
    for i in range(12):
        rows.append(verdict(f"q{i}", "multiple_choice", "clip", True, f"c{i % 3}"))
        rows.append(verdict(f"q{i}", "yes_no", "clip", False, f"c{i % 3}", chance=0.5))
    p = paired_comparisons(pd.DataFrame(rows), n_boot=100)
    assert list(p.columns) == PAIR_COLUMNS and PAIR_COLUMNS[20:] == ["mcnemar_p_unclustered", "format"]  # added at the end
    fmt = p[(p["kind"] == "format") & (p["level"] == "*")].iloc[0]
    assert fmt["mcnemar_p_unclustered"] == mcnemar_exact(12, 0) == pytest.approx(2 ** -11)
    assert fmt["mcnemar_p"] == pytest.approx(2 ** -2)  # three clips leaning one way: 2 of 8 sign patterns


def _top(s: pd.DataFrame, fmt: str = "*") -> pd.Series:
    return s[(s["format"] == fmt) & (s["subtype"] == "*") & (s["level"] == "*") & (s["dataset"] == "*")].iloc[0]


@pytest.mark.parametrize("balanced", [True, False])
def test_pooled_formats_resample_their_chance(balanced):
    # multiple choice (chance 1/4) in every clip; yes/no (1/2) in every clip, or only in clips c0–c3
    rows = []
    for i in range(24):
        clip = f"c{i % 8}"
        rows.append(verdict(f"q{i}", "multiple_choice", "clip", i % 8 < 5, clip))
        if balanced or i % 8 < 4:
            rows.append(verdict(f"q{i}", "yes_no", "clip", i % 3 == 0, clip, chance=0.5))
    v = pd.DataFrame(rows)
    s = scores(v, n_boot=300, seed=1)
    assert list(s.columns) == SCORE_COLUMNS
    top = _top(s)
    ok = v["correct"].astype(float).to_numpy()
    acc, cc = score_intervals(ok, v["chance"].to_numpy(), v["clip_key"].to_numpy(), n_boot=300, seed=1)
    assert (top["accuracy_ci_low"], top["accuracy_ci_high"]) == acc
    assert (top["ci_low"], top["ci_high"]) == cc
    fixed = chance_corrected_interval(*acc, top["chance"])
    if balanced:  # every clip has the same mix of chance: the resampled mean chance never moves
        assert cc == pytest.approx(fixed, abs=1e-12)
    else:
        assert cc != pytest.approx(fixed, abs=1e-3)
    assert top["ci_low"] <= top["chance_corrected"] <= top["ci_high"]
    # one format, one chance: the transformed accuracy interval, as before
    mc = _top(s, "multiple_choice")
    sub = v[v["format"] == "multiple_choice"]
    low, high = cluster_bootstrap(sub["correct"].astype(float), sub["clip_key"], n_boot=300, seed=1)
    assert (mc["ci_low"], mc["ci_high"]) == chance_corrected_interval(low, high, 0.25)


def test_over_marking_share():
    rows = [verdict("q1", "option_judgement", "clip", False, "c1", marked=2, chance=1 / 16),
            verdict("q2", "option_judgement", "clip", False, "c1", marked=1, chance=1 / 16),
            verdict("q3", "option_judgement", "clip", True, "c1", marked=1, chance=1 / 16),
            verdict("q4", "open_with_reason", "clip", False, "c2", marked=3, chance=1 / 16, base="option_judgement")]
    om = over_marking(pd.DataFrame(rows)).iloc[0]
    assert (om["n_wrong"], om["n_wrong_over_marked"]) == (3, 2) and om["share"] == pytest.approx(2 / 3)


def test_reference_responders_over_the_bundled_bank(offline_bank):
    s = scores(offline_bank["verdicts"], n_boot=500)
    top = s[(s["dataset"] == "*") & (s["subtype"] == "*")]
    oracle = top[(top["responder"] == "oracle") & (top["condition"] == "clip")]
    assert (oracle["chance_corrected"] == 1.0).all() and len(oracle) >= 25  # every format and level
    chance = top[(top["responder"] == "chance") & (top["level"] == "*")]
    pooled = chance[chance["format"] == "*"]
    assert ((pooled["ci_low"] <= 0) & (pooled["ci_high"] >= 0)).all()
    # per format, the chance responder's accuracy is within 3 standard errors of the format's chance
    closed = chance[chance["format"].isin(["yes_no", "multiple_choice", "statements", "option_judgement"])]
    se = np.sqrt(closed["chance"] * (1 - closed["chance"]) / closed["n"])
    assert ((closed["accuracy"] - closed["chance"]).abs() <= 3 * se).all()
    # strict scoring (undecided open replies wrong) puts chance's open replies at chance (0)
    open_rows = chance[chance["format"] == "open"]
    assert len(open_rows)
    n_strict = open_rows["n"] + open_rows["n_undecided"]
    cc = open_rows["chance_corrected_strict"]
    # within 3 standard errors of 0 (the strict rate is near 0, so its binomial SE is at most sqrt(p/n))
    assert (cc.abs() <= 3 * np.sqrt(np.maximum(open_rows["accuracy_strict"], 1 / n_strict) / n_strict)).all(), (
        open_rows[["condition", "n", "n_undecided", "accuracy_strict", "chance_corrected_strict"]])
    # presence: high on L1, near chance on L2+ with same-clip distractors, well above it with absent ones
    sub = s[(s["responder"] == "presence") & (s["condition"] == "clip") & (s["format"] == "multiple_choice")
            & (s["dataset"] != "*") & (s["subtype"] != "*")]
    assert (sub[sub["level"] == "L1"]["chance_corrected"] == 1.0).all()
    fixed = sub[(sub["level"] != "L1") & (sub["distractor_strategy"] == "same_clip_other_moments")]
    leaky = sub[(sub["level"] != "L1") & (sub["distractor_strategy"] == "absent_from_clip")]
    assert (leaky["chance_corrected"] == 1.0).all()
    assert fixed["chance_corrected"].mean() < 0.2
