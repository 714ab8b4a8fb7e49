"""Per-clip partials and the cross-clip tables combined from them: the same numbers as the tables computed
from every verdict (:mod:`scoring.metrics.tables`, the reference), on the bundled offline run and on any
grouping of clips.

Equality: counts, keys, accuracies, accuracy and difference intervals, p-values and flags are identical;
columns built from a mean of non-integer item chances (1/15 …) or prior credits (1/3 …) are summed in another
order and agree within ``TOL`` (listed per table in ``ROUNDED``)."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from epic_levels_pipeline.bank.checks import shortcut_rates
from epic_levels_pipeline.scoring.judge_audit import judge_audit, sample_rows
from epic_levels_pipeline.scoring.metrics import partials as P
from epic_levels_pipeline.scoring.metrics import tables as T
from epic_levels_pipeline.scoring.metrics.stats import cluster_bootstrap, score_intervals

TOL = 1e-12
ROUNDED = {
    "scores": {"chance", "chance_corrected", "ci_low", "ci_high", "chance_corrected_strict"},
    "paired_comparisons": {"chance_corrected_a", "chance_corrected_b"},
    "priors": {"rate", "chance", "ci_low", "ci_high", "chance_corrected"},
    "shortcut_audit": {"blind_rate_mc", "blind_ci_low_mc", "blind_ci_high_mc", "anti_prior_rate_mc",
                       "anti_prior_ci_low_mc", "anti_prior_ci_high_mc", "blind_rate_yes_no", "blind_ci_low_yes_no",
                       "blind_ci_high_yes_no", "anti_prior_rate_yes_no", "anti_prior_ci_low_yes_no",
                       "anti_prior_ci_high_yes_no"},
}


def assert_same(name: str, reference: pd.DataFrame, combined: pd.DataFrame) -> None:
    reference, combined = reference.reset_index(drop=True), combined.reset_index(drop=True)
    assert list(combined.columns) == list(reference.columns), name
    assert len(combined) == len(reference), name
    for column in reference.columns:
        a, b = reference[column], combined[column]
        if pd.api.types.is_float_dtype(a) or pd.api.types.is_float_dtype(b):
            x, y = a.astype(float).to_numpy(), b.astype(float).to_numpy()
            assert (np.isnan(x) == np.isnan(y)).all(), (name, column)
            tol = TOL if column in ROUNDED.get(name, ()) else 0.0
            diff = np.abs(np.nan_to_num(x) - np.nan_to_num(y))
            assert (diff <= tol).all(), (name, column, float(diff.max()))
        else:
            mismatch = a.astype(str).to_numpy() != b.astype(str).to_numpy()
            assert not mismatch.any(), (name, column, a[mismatch].head(3).tolist(), b[mismatch].head(3).tolist())


def per_clip(frame: pd.DataFrame, clip: str) -> pd.DataFrame:
    return frame[frame["clip_key"] == clip]


@pytest.fixture(scope="module")
def bundled_partials(offline_bank):
    """Each bundled clip's partial tables (as the clip_partials step makes them), combined in clip order."""
    v, q, it = offline_bank["verdicts"], offline_bank["questions"], offline_bank["items"]
    clips = sorted(v["clip_key"].unique())
    made = [P.clip_partials(per_clip(v, c), per_clip(q, c), per_clip(it, c)) for c in clips]
    return {name: P.combine(name, *[m[name] for m in made]) for name in P.PARTIAL_COLUMNS}


@pytest.mark.slow  # the reference tables of every bundled verdict take half a minute on 2 cores
def test_combined_scores_and_pairs_are_todays_tables_on_the_bundled_run(offline_bank, bundled_partials):
    v = offline_bank["verdicts"]
    assert v["clip_key"].nunique() > 20
    assert_same("scores", T.scores(v), P.scores_from_partials(bundled_partials["score_partials"]))
    assert_same("paired_comparisons", T.paired_comparisons(v), P.paired_from_partials(bundled_partials["pair_partials"]))
    assert_same("over_marking", T.over_marking(v), P.over_marking_from_partials(bundled_partials["score_partials"]))


def test_combined_audits_are_todays_tables_on_the_bundled_run(offline_bank, bundled_partials):
    v, q, it = offline_bank["verdicts"], offline_bank["questions"], offline_bank["items"]
    priors = T.prior_audit(q, it)
    combined_priors = P.priors_from_partials(bundled_partials["prior_partials"])
    assert_same("priors", priors, combined_priors)
    assert_same("presence", shortcut_rates(q), P.presence_from_partials(bundled_partials["presence_partials"]))
    assert_same("shortcut_audit", T.shortcut_audit(shortcut_rates(q), v, priors),
                P.shortcut_audit_from_partials(bundled_partials["presence_partials"], bundled_partials["score_partials"],
                                               combined_priors))
    # the judge audit: the sample made from the clips' candidates is the sample of all verdicts, and so is its audit
    rows, items = P.judge_sample_from_partials(bundled_partials["judge_partials"])
    identity = ["responder", "model", "item_id", "condition", "format"]
    reference = sample_rows(v, 50, 0)
    assert len(reference) and sorted(map(tuple, rows[identity].to_numpy())) == sorted(map(tuple, reference[identity].to_numpy()))

    def judge(requests):  # picks the candidate the reply names, by reading it
        return [(next((i for i, c in enumerate(r.candidates) if c.lower() in r.reply.lower()), None), "{}")
                for r in requests]

    assert_same("judge_audit", judge_audit(v, it, judge), judge_audit(rows, items, judge))


def test_intervals_do_not_depend_on_row_order():
    rng = np.random.default_rng(3)
    values = rng.integers(0, 2, 60).astype(float)
    chance = rng.choice([0.25, 0.5, 1 / 15], 60)
    clips = rng.choice(["c", "a", "b", "d"], 60)
    order = rng.permutation(60)
    assert cluster_bootstrap(values, clips, n_boot=200) == cluster_bootstrap(values[order], clips[order], n_boot=200)
    (acc, cc), (acc_shuffled, cc_shuffled) = (score_intervals(values, chance, clips, n_boot=200),
                                              score_intervals(values[order], chance[order], clips[order], n_boot=200))
    assert acc == acc_shuffled and cc == pytest.approx(cc_shuffled, rel=0, abs=TOL)  # chance summed in another order
    one = np.array(["a"] * 60)  # one clip: its rows resampled in sorted order
    assert score_intervals(values, chance, one, n_boot=200) == score_intervals(values[order], chance[order], one, n_boot=200)


def _sorted(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    keys = [c for c in P.PARTIAL_COLUMNS[name] if frame[c].dtype == object or pd.api.types.is_string_dtype(frame[c])
            or c == "chance"]
    return frame.sort_values(keys, kind="stable").reset_index(drop=True)


@pytest.mark.slow  # each example computes the reference tables (a few seconds on 2 cores)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_partials_combine_in_any_grouping_and_order(offline_bank, data):
    """Partials of any split of any clips, combined in any order and nesting, are the partials of their union,
    and the tables combined from them are the reference tables of the union's verdicts."""
    v = offline_bank["verdicts"]
    clips = sorted(v["clip_key"].unique())
    chosen = data.draw(st.lists(st.sampled_from(clips), min_size=1, max_size=4, unique=True), label="clips")
    responders = data.draw(st.lists(st.sampled_from(["oracle", "chance", "presence", "blind"]), min_size=1,
                                    max_size=2, unique=True), label="responders")
    union = v[v["clip_key"].isin(chosen) & v["responder"].isin(responders)]
    keep = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="rows")).random(len(union)) < 0.4
    union = union[keep]  # a row subset: clips of one row, groups without counted rows, unpaired rows
    labels = data.draw(st.lists(st.integers(0, 3), min_size=len(chosen), max_size=len(chosen)), label="parts")
    parts = [union[union["clip_key"].isin([c for c, l in zip(chosen, labels) if l == part])] for part in range(4)]
    order = data.draw(st.permutations(range(4)), label="order")
    for name, make in (("score_partials", P.score_partials), ("pair_partials", P.pair_partials)):
        pieces = [make(parts[i]) for i in order]
        nested = P.combine(name, P.combine(name, *pieces[:2]), P.combine(name, *pieces[2:]))
        pd.testing.assert_frame_equal(_sorted(nested, name), _sorted(P.combine(name, make(union)), name),
                                      check_dtype=False, check_exact=False, rtol=0, atol=TOL)
        if name == "score_partials":
            assert_same("scores", T.scores(union, n_boot=60), P.scores_from_partials(nested, n_boot=60))
            assert_same("over_marking", T.over_marking(union), P.over_marking_from_partials(nested))
        else:
            assert_same("paired_comparisons", T.paired_comparisons(union, n_boot=60), P.paired_from_partials(nested, n_boot=60))


def test_no_partials_give_the_empty_tables():
    empty = {name: P.combine(name) for name in P.PARTIAL_COLUMNS}
    assert list(P.scores_from_partials(empty["score_partials"]).columns) == T.SCORE_COLUMNS
    assert list(P.paired_from_partials(empty["pair_partials"]).columns) == T.PAIR_COLUMNS
    assert not len(P.over_marking_from_partials(empty["score_partials"]))
    assert not len(P.priors_from_partials(empty["prior_partials"]))
    assert not len(P.shortcut_audit_from_partials(empty["presence_partials"], empty["score_partials"],
                                                  P.priors_from_partials(empty["prior_partials"])))
    assert not len(P.judge_sample_from_partials(empty["judge_partials"])[0])


def test_partial_tables_are_declared_with_their_columns():
    """Every partial table is a declared warehouse table whose columns are the ones the combine reads."""
    from epic_levels_pipeline import schemas
    from epic_levels_pipeline.scoring.metrics.partials import PARTIAL_COLUMNS

    for name, columns in PARTIAL_COLUMNS.items():
        assert schemas.columns(name) == columns, name
