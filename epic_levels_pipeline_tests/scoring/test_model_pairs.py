"""Models compared with each other: ``paired_comparisons`` rows of ``kind = model`` (two models' verdicts of the
same item under one condition, per level x condition x format with '*' roll-ups), from every verdict (the
reference, :func:`tables.paired_comparisons`) and from the per-clip partials, which agree."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from epic_levels_pipeline.scoring.metrics import partials as P
from epic_levels_pipeline.scoring.metrics import tables as T
from epic_levels_pipeline.scoring.metrics.stats import mcnemar_exact

from .test_partials import assert_same, per_clip

WHO = ["responder", "model"]
KEYS = ["level", "condition", "a", "b", "format"]


def verdict(item, fmt, condition, correct, clip, responder, model, *, level="L2", scored_by="rule", chance=0.25):
    return {"item_id": f"{item}#{fmt}", "question_id": item, "clip_key": clip, "dataset": "epic_sounds",
            "level": level, "subtype": "low_sound_object", "distractor_strategy": "same_clip_other_moments",
            "format": fmt, "base_format": fmt, "condition": condition, "responder": responder, "model": model,
            "reply": "", "parsed": "", "expected": "", "correct": correct, "scored_by": scored_by, "note": "",
            "n_marked_true": None, "judge_raw": "", "chance": chance}


def from_partials(v: pd.DataFrame, n_boot: int = 200) -> pd.DataFrame:
    """The table as the pipeline makes it: each clip's pair_partials, combined, then the cross-clip rows."""
    clips = sorted(v["clip_key"].unique())
    return P.paired_from_partials(P.combine("pair_partials", *[P.pair_partials(per_clip(v, c)) for c in clips]),
                                  n_boot=n_boot)


def test_two_models_on_the_same_items_are_one_row_per_level_condition_and_format():
    # two routes of one served model (vllm/qwen: qwen_iv, qwen_sep), replies imported under the NAME qwen_iv, and
    # the offline oracle; five questions in five clips, asked in multiple choice and yes/no under clip
    pattern = [(True, True), (True, False), (True, False), (False, True), (False, False)]
    rows = []
    for i, (iv, sep) in enumerate(pattern):
        for fmt, chance in (("multiple_choice", 0.25), ("yes_no", 0.5)):
            rows.append(verdict(f"q{i}", fmt, "clip", iv, f"c{i}", "vllm", "qwen_iv", chance=chance))
            rows.append(verdict(f"q{i}", fmt, "clip", sep, f"c{i}", "vllm", "qwen_sep", chance=chance))
            rows.append(verdict(f"q{i}", fmt, "clip", True, f"c{i}", "external", "qwen_iv", chance=chance))
            rows.append(verdict(f"q{i}", fmt, "clip", True, f"c{i}", "oracle", "offline", chance=chance))
    rows.append(verdict("q5", "multiple_choice", "clip", True, "c5", "vllm", "qwen_iv"))  # answered by one model only
    rows.append(verdict("q6", "multiple_choice", "clip", None, "c6", "vllm", "qwen_iv", scored_by="undecided"))
    rows.append(verdict("q6", "multiple_choice", "clip", True, "c6", "vllm", "qwen_sep"))  # undecided: no pair
    v = pd.DataFrame(rows)
    p = T.paired_comparisons(v, n_boot=200)
    models = p[p["kind"] == "model"]
    assert set(models["responder"]) == set(models["model"]) == {"*"}
    assert set(zip(models["a"], models["b"])) == {("external/qwen_iv", "qwen_iv"), ("external/qwen_iv", "qwen_sep"),
                                                  ("qwen_iv", "qwen_sep")}  # the oracle is compared with no model
    assert set(models["level"]) == {"*", "L2"} and set(models["format"]) == {"*", "multiple_choice", "yes_no"}
    assert (p.loc[p["kind"] != "model", "format"] == "*").all()
    row = models.set_index(KEYS).loc[("*", "clip", "qwen_iv", "qwen_sep", "multiple_choice")]
    assert (row["n_pairs"], row["both"], row["only_a"], row["only_b"], row["neither"]) == (5, 1, 2, 1, 1)
    assert row["diff"] == pytest.approx(0.2) and row["mcnemar_p"] == pytest.approx(1.0)
    assert (row["accuracy_a"], row["accuracy_b"]) == (pytest.approx(0.6), pytest.approx(0.4))
    assert row["chance_corrected_a"] == pytest.approx((0.6 - 0.25) / 0.75)
    pooled = models.set_index(KEYS).loc[("*", "clip", "qwen_iv", "qwen_sep", "*")]
    assert (pooled["n_pairs"], pooled["only_a"], pooled["only_b"]) == (10, 4, 2)
    assert pooled["mcnemar_p_unclustered"] == mcnemar_exact(4, 2)
    assert pooled["diff_ci_low"] <= pooled["diff"] <= pooled["diff_ci_high"]
    assert pooled["chance_corrected_b"] == pytest.approx((0.4 - 0.375) / 0.625)  # mean chance of both formats
    # model rows come first in each level (responder '*'), then the responders' own rows, as from the partials
    assert list(p.loc[p["level"] == "*", "responder"])[:len(models) // 2] == ["*"] * (len(models) // 2)
    assert_same("paired_comparisons", p, from_partials(v))


@pytest.fixture(scope="module")
def bundled_models(offline_bank):
    """Four bundled clips' offline verdicts as if models had answered: chance as vllm/qwen_iv, blind as
    vllm/qwen_sep, presence as replies imported under the NAME qwen_sep; the oracle stays offline."""
    v = offline_bank["verdicts"]
    clips = sorted(v["clip_key"].unique())[::6][:4]
    v = v[v["clip_key"].isin(clips)].copy()
    names = {"chance": ("vllm", "qwen_iv"), "blind": ("vllm", "qwen_sep"), "presence": ("external", "qwen_sep")}
    for responder, (provider, name) in names.items():
        mine = v["responder"] == responder
        v.loc[mine, "responder"], v.loc[mine, "model"] = provider, name
    return v


def test_model_pairs_from_partials_are_the_reference_on_bundled_clips(bundled_models):
    v = bundled_models
    reference = T.paired_comparisons(v, n_boot=200)
    assert_same("paired_comparisons", reference, from_partials(v))
    models = reference[reference["kind"] == "model"]
    assert set(zip(models["a"], models["b"])) == {("external/qwen_sep", "qwen_iv"), ("external/qwen_sep", "qwen_sep"),
                                                  ("qwen_iv", "qwen_sep")}
    assert set(models["condition"]) == {"clip", "no_clip", "silenced"} and len(set(models["level"])) > 2
    # every level's rows add up to level '*', every format's to format '*'
    counts = ["n_pairs", "both", "only_a", "only_b", "neither"]
    each = models[(models["level"] != "*") & (models["format"] != "*")]
    for pooled_level, pooled_format in (("*", "*"), ("*", None), (None, "*")):
        rows = models[(models["level"] == "*") == (pooled_level == "*")]
        rows = rows[(rows["format"] == "*") == (pooled_format == "*")]
        keys = [k for k, pooled in (("level", pooled_level), ("format", pooled_format)) if pooled is None]
        expected = each.groupby(["condition", "a", "b", *keys])[counts].sum()
        got = rows.set_index(["condition", "a", "b", *keys])[counts].sort_index()
        pd.testing.assert_frame_equal(got, expected.loc[got.index], check_dtype=False)
    # the offline rows are as without models: kind=format/condition rows of the oracle unchanged
    oracle = v[v["responder"] == "oracle"]
    assert_same("paired_comparisons", T.paired_comparisons(oracle, n_boot=200),
                reference[reference["responder"] == "oracle"])


def test_partials_without_the_format_column_count_as_all_formats(bundled_models):
    """pair_partials written before the format column existed (format and condition pairs only) combine as before."""
    v = bundled_models[bundled_models["responder"] == "oracle"]
    partials = P.combine("pair_partials", *[P.pair_partials(per_clip(v, c)) for c in sorted(v["clip_key"].unique())])
    assert_same("paired_comparisons", P.paired_from_partials(partials, n_boot=100),
                P.paired_from_partials(partials.drop(columns="format"), n_boot=100))


def _verdicts(draw) -> pd.DataFrame:
    """Items in 1-4 clips (two levels, two formats, two conditions) answered by up to three models, one of them an
    import named like a configured model, and the offline oracle; some answers missing or undecided."""
    n_clips = draw(st.integers(1, 4), label="clips")
    models = [("vllm", "m0"), ("vllm", "m1"), ("external", "m0")][:draw(st.integers(2, 3), label="models")]
    rows = []
    for c in range(n_clips):
        for i in range(draw(st.integers(1, 4), label="items")):
            level = draw(st.sampled_from(["L1", "L2"]))
            fmt, chance = draw(st.sampled_from([("multiple_choice", 0.25), ("yes_no", 0.5)]))
            for condition in draw(st.sets(st.sampled_from(["clip", "no_clip"]), min_size=1)):
                for responder, model in [*models, ("oracle", "offline")]:
                    kind = draw(st.sampled_from(["rule", "rule", "rule", "unparsed", "undecided", None]))
                    if kind is not None:
                        rows.append(verdict(f"c{c}q{i}", fmt, condition, draw(st.booleans()), f"c{c}", responder,
                                            model, level=level, scored_by=kind, chance=chance))
    return pd.DataFrame(rows)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_swapping_two_models_swaps_their_sides(data):
    """From the partials as from every verdict; renamed so that their names sort the other way round, two models
    trade sides: only_a and only_b, the accuracies and the chance-corrected accuracies swap, diff changes sign,
    the counts of pairs and the p-values stay, and (over more than one clip) the interval is mirrored."""
    v = _verdicts(data.draw)
    table = from_partials(v, n_boot=60)
    assert_same("paired_comparisons", T.paired_comparisons(v, n_boot=60), table)
    renamed = v.assign(model=v["model"].map({"m0": "z1", "m1": "z0"}).fillna(v["model"]))
    name = {"m0": "z1", "m1": "z0", "external/m0": "external/z1"}
    other = from_partials(renamed, n_boot=60)
    models, other = table[table["kind"] == "model"], other[other["kind"] == "model"].set_index(KEYS)
    assert len(models) == len(other)
    for r in models.itertuples(index=False):
        a, b = name[r.a], name[r.b]
        flipped = a > b
        s = other.loc[(r.level, r.condition, *sorted([a, b]), r.format)]
        assert (s["n_pairs"], s["both"], s["neither"]) == (r.n_pairs, r.both, r.neither)
        assert (s["mcnemar_p"], s["mcnemar_p_unclustered"]) == (r.mcnemar_p, r.mcnemar_p_unclustered)
        if not flipped:
            assert (s["only_a"], s["diff"], s["diff_ci_low"]) == (r.only_a, r.diff, r.diff_ci_low)
            continue
        assert (s["only_a"], s["only_b"]) == (r.only_b, r.only_a) and s["diff"] == -r.diff
        assert (s["accuracy_a"], s["accuracy_b"]) == (r.accuracy_b, r.accuracy_a)
        assert (s["chance_corrected_a"], s["chance_corrected_b"]) == (r.chance_corrected_b, r.chance_corrected_a)
        clips = _clips(v, r)
        if clips > 1:  # a single clip resamples its pairs in sorted order of their values, which are negated
            assert (s["diff_ci_low"], s["diff_ci_high"]) == (pytest.approx(-r.diff_ci_high, abs=1e-12),
                                                             pytest.approx(-r.diff_ci_low, abs=1e-12))


def _clips(v: pd.DataFrame, r) -> int:
    """Clips holding a pair of row ``r`` (both models decided on one item)."""
    c = v[v["scored_by"].isin(T.COUNTED) & (v["condition"] == r.condition)]
    c = c.assign(who=T.model_labels(c["responder"], c["model"]))
    if r.level != "*":
        c = c[c["level"] == r.level]
    if r.format != "*":
        c = c[c["format"] == r.format]
    both = set(c.loc[c["who"] == r.a, "item_id"]) & set(c.loc[c["who"] == r.b, "item_id"])
    return c.loc[c["item_id"].isin(both), "clip_key"].nunique()


def test_model_labels_tell_an_import_from_a_configured_model():
    labels = T.model_labels(pd.Series(["vllm", "external", "oracle", "openai"]),
                            pd.Series(["qwen", "qwen", "offline", "openai/gpt-4o"]))
    assert list(labels) == ["qwen", "external/qwen", None, "openai/gpt-4o"]
    assert np.all(pd.isna(T.model_labels(pd.Series(["chance"]), pd.Series(["offline"]))))
