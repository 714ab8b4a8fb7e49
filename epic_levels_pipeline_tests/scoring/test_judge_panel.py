"""Several judges: each asked about every reply the rules could not decide; the verdict is the configured judge's
or the majority's; a failed judge is judge_failed (never wrong); agreement between judges and judge swaps."""

import json

import numpy as np
import pandas as pd
import pytest

from epic_levels_pipeline.scoring.judge_audit import (VERDICT, agreement_table, all_agreement, all_swaps, cohen_kappa,
                                                      krippendorff_alpha, qa_swap, vote_rows)
from epic_levels_pipeline.scoring.metrics.partials import score_partials, scores_from_partials
from epic_levels_pipeline.scoring.verdicts import JudgePanel, verdicts as make_verdicts
from epic_levels_pipeline_tests.scoring.test_judge_audit import _item, _response


def build(n_items: int = 12, responders=("alpha", "beta", "gamma")):
    """Open items; every reply names two options (``X or Y``: undecided by the rules), the key first for
    ``alpha``, second for ``beta``; ``gamma`` names one option (decided by rule, never judged)."""
    items = [_item(k) for k in range(n_items)]
    responses = []
    for responder in responders:
        for item in items:
            key, other = item["expected"], next(o for o in item["options"] if o != item["expected"])
            reply = {"alpha": f"Answer: {key} or {other}", "beta": f"Answer: {other} or {key}",
                     "gamma": f"Answer: {key}"}[responder]
            responses.append(_response(item, responder, "clip", reply))
    return pd.DataFrame(responses), pd.DataFrame(items)


def named(order: str):
    """A judge choosing the candidate the reply names first (``order="first"``) or last."""
    def judge(requests):
        out = []
        for r in requests:
            hits = sorted((r.reply.find(c), i) for i, c in enumerate(r.candidates) if c in r.reply)
            pick = hits[0][1] if order == "first" else hits[-1][1]
            out.append((pick, json.dumps({"choice": "ABCD"[pick]})))
        return out
    judge.name = f"names_{order}"
    return judge


def failing(requests):
    return [(None, "error: timed out after 1.0 s") for _ in requests]


failing.name = "slow"


def test_every_judge_is_asked_and_the_configured_one_decides():
    responses, items = build()
    panel = JudgePanel({"names_first": named("first"), "names_last": named("last")}, "names_first")
    v = make_verdicts(responses, items, judge=panel)
    judged = v[v["responder"].isin(["alpha", "beta"])]
    assert set(judged["scored_by"]) == {"judge"} and set(v.loc[v["responder"] == "gamma", "scored_by"]) == {"rule"}
    assert judged.loc[judged["responder"] == "alpha", "correct"].all()  # the key named first
    assert not judged.loc[judged["responder"] == "beta", "correct"].any()
    votes = [json.loads(x) for x in judged["judge_votes"]]
    assert all({d["judge"] for d in vote} == {"names_first", "names_last"} for vote in votes)
    assert (v.loc[v["responder"] == "gamma", "judge_votes"] == "").all()
    last = make_verdicts(responses, items, judge=JudgePanel(panel.judges, "names_last"))
    assert not last.loc[last["responder"] == "alpha", "correct"].any()


def test_majority_and_a_split_panel():
    responses, items = build(responders=("alpha",))
    three = JudgePanel({"a": named("first"), "b": named("first"), "c": named("last")}, "majority")
    v = make_verdicts(responses, items, judge=three)
    assert set(v["scored_by"]) == {"judge"} and v["correct"].all() and set(v["judge_model"]) == {"majority"}
    two = JudgePanel({"a": named("first"), "c": named("last")}, "majority")
    split = make_verdicts(responses, items, judge=two)
    assert set(split["scored_by"]) == {"undecided"} and split["note"].str.startswith("judges split").all()
    with_failure = make_verdicts(responses, items, judge=JudgePanel({"a": named("first"), "slow": failing}, "majority"))
    assert set(with_failure["scored_by"]) == {"undecided"}  # one answer of two is no majority


def test_a_failed_judge_is_judge_failed_and_never_wrong():
    responses, items = build()
    v = make_verdicts(responses, items, judge=JudgePanel({"slow": failing, "names_first": named("first")}, "slow"))
    failed = v[v["scored_by"] == "judge_failed"]
    assert len(failed) == 2 * len(items) and failed["correct"].isna().all()
    assert failed["note"].str.contains("timed out").all()
    assert (make_verdicts(responses, items, judge=failing)["scored_by"] == "judge_failed").sum() == 2 * len(items)
    s = scores_from_partials(score_partials(v), n_boot=20)
    top = s[(s["dataset"] == "*") & (s["level"] == "*") & (s["subtype"] == "*") & (s["format"] == "*")]
    top = top.set_index("responder")
    assert top.loc["alpha", "n_judge_failed"] == len(items) and top.loc["alpha", "n"] == 0
    assert np.isnan(top.loc["alpha", "accuracy_strict"])  # not counted wrong, not even strictly
    assert top.loc["gamma", "n_judge_failed"] == 0 and top.loc["gamma", "accuracy"] == 1.0


def test_kappa_and_alpha_against_published_values():
    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": 4 coders, 12 units, missing values
    coders = [[1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
              [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None], [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]]
    units = [[x for x in unit if x is not None] for unit in zip(*coders)]
    assert krippendorff_alpha(units) == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(units, level="interval") == pytest.approx(0.849, abs=5e-4)
    assert cohen_kappa(list("aabb"), list("aabb")) == 1.0
    assert cohen_kappa(list("abab"), list("abba")) == pytest.approx(0.0)
    assert np.isnan(cohen_kappa(list("aaaa"), list("aaaa")))  # one label: chance agreement 1


def test_agreement_and_swap_from_the_votes():
    responses, items = build()
    panel = JudgePanel({"names_first": named("first"), "names_last": named("last")}, "names_first")
    v = make_verdicts(responses, items, judge=panel)
    votes = vote_rows(v)
    assert len(votes) == 2 * 2 * len(items) and set(votes["outcome"]) == {"chose"}
    agreement = all_agreement(votes, pd.DataFrame(columns=["track", "unit", "judge", "label", "clip_key"]))
    qa = agreement[agreement["track"] == "qa"].set_index(["judge_a", "judge_b"])
    assert qa.loc[("names_first", "names_last"), "agreement"] == 0.0  # they never pick the same option
    assert qa.loc[("names_first", "names_last"), "cohen_kappa"] < 0
    assert qa.loc[("*", "*"), "krippendorff_alpha"] < 0
    assert set(agreement["track"]) == {"qa", "caption_label", "caption_semantic"}
    assert agreement.loc[agreement["track"] == "caption_label", "note"].str.startswith("fewer than two").all()

    swap = qa_swap(score_partials(v), votes).set_index(["responder", "judge"])
    assert swap.loc[("alpha", VERDICT), "chance_corrected"] == 1.0 and swap.loc[("alpha", "names_last"), "value"] == 0.0
    assert swap.loc[("alpha", "names_last"), "shift"] == -1.0 and swap.loc[("beta", "names_last"), "shift"] == 1.0
    assert swap.loc[("gamma", "names_last"), "shift"] == 0.0  # decided by rule: no judge moves it
    assert swap.loc[("alpha", "names_first"), "spearman_rho"] == 1.0
    assert swap.loc[("alpha", "names_last"), "spearman_rho"] < 1.0
    one = all_swaps(score_partials(v), votes[votes["judge"] == "names_first"], pd.DataFrame())
    assert len(one) == 1 and one.loc[0, "note"].startswith("fewer than two")


def test_one_judge_agreement_row_says_so():
    table = agreement_table(pd.DataFrame({"unit": ["u"], "judge": ["j"], "label": ["a"]}), "qa")
    assert len(table) == 1 and table.loc[0, "note"].startswith("fewer than two judges")


def test_a_judge_whose_every_call_failed_is_compared_on_nothing():
    responses, items = build()
    v = make_verdicts(responses, items, judge=JudgePanel({"slow": failing, "names_first": named("first")}, "slow"))
    votes = vote_rows(v)
    assert set(votes.loc[votes["judge"] == "slow", "outcome"]) == {"failed"}
    agreement = all_agreement(votes, pd.DataFrame(columns=["track", "unit", "judge", "label", "clip_key"]))
    qa = agreement[agreement["track"] == "qa"].set_index(["judge_a", "judge_b"])
    assert qa.loc[("names_first", "slow"), "n"] == 0 and np.isnan(qa.loc[("names_first", "slow"), "cohen_kappa"])
    assert qa.loc[("*", "*"), "n"] == 0 and np.isnan(qa.loc[("*", "*"), "krippendorff_alpha"])
    everyone_failed = agreement_table(pd.DataFrame({"unit": ["u", "u"], "judge": ["a", "b"], "label": [None, None]}),
                                      "qa")
    assert everyone_failed.loc[0, "n"] == 0
    swap = all_swaps(score_partials(v), votes, pd.DataFrame())
    assert len(swap) and set(swap["judge"]) >= {VERDICT, "names_first"}
