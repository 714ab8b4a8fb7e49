"""Questions a text-only model cannot game, over the whole bundled bank: the key's corpus-frequency rank is
not a give-away (blind and anti-prior at chance), no two options are the same thing, and the bank keeps
its questions."""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest
from hypothesis import assume, given, strategies as st

from epic_levels_pipeline.bank.checks import option_problems, shortcut_rates
from epic_levels_pipeline.bank.options import clash, option_words, prior_pick
from epic_levels_pipeline.scoring.metrics.tables import (PRIOR_MIN_N, prior_audit, prior_correct, prior_credit,
                                                         prior_shortcuts, prior_shortcuts_holm)

# The bank before frequency matching, distinct options, exact cues and object-sharing purposes.
BEFORE = {("epic_sounds", "L1"): 75, ("epic_sounds", "L2"): 136, ("epic_sounds", "L3"): 111,
          ("hd_epic", "L1"): 51, ("hd_epic", "L2"): 54, ("hd_epic", "L3"): 33, ("hd_epic", "L4"): 9}


@pytest.fixture(scope="module")
def bank(bundled, offline_bank):
    """The whole bundled bank and its items, the banks' drops and (annotations, catalogue): the session's
    ``offline_bank`` and ``bundled`` (read-only), which build them clip by clip as the pipeline does."""
    return offline_bank["questions"], offline_bank["items"], offline_bank["drops"], bundled


def _view(bank, clip_key):
    from epic_levels_pipeline.annotations.clips import Clip
    from epic_levels_pipeline.annotations.clip_rows import clip_annotations
    from epic_levels_pipeline.bank.clip_view import ClipView

    ann, cat = bank[3]
    clip = Clip.from_key(clip_key)
    return ClipView(clip, clip_annotations(ann, clip), cat)


def test_time_cues_are_exact(bank):
    import json

    moments = bank[0][bank[0]["subtype"] == "low_object_moment"]
    assert len(moments)
    for q in moments.itertuples():
        view = _view(bank, q.clip_key)
        instant = view.clip.start_s + json.loads(q.params)["offset_s"]
        (row,) = json.loads(q.provenance)
        assert row["start_s"] <= row["at_s"] <= row["stop_s"]
        assert row["start_s"] - 0.5 <= instant <= row["stop_s"] + 0.5
        t = view.tracks
        for value in q.option_values:
            if value == q.answer_value:
                continue
            name = value.split(":", 1)[1]
            near = t[(t["object_name"] == name) & (t["start_s"] < instant + 1.5) & (t["stop_s"] > instant - 1.5)]
            assert not len(near), (q.question_id, name)


def test_purpose_keys_share_an_object_with_the_cued_action(bank):
    import json

    purposes = bank[0][bank[0]["subtype"] == "medium_sound_purpose"]
    assert len(purposes)
    for q in purposes.itertuples():
        view = _view(bank, q.clip_key)
        rows = {r.row_id: r for r in view.narration_records}
        roles = {e["role"]: rows[e["row_id"]] for e in json.loads(q.provenance) if e["stream"] == "narration"}
        assert view.objects_of(roles["context"]) & view.objects_of(roles["answer"]), q.question_id


def test_rows_are_read_inside_the_window_and_inside_themselves(bank):
    import json

    from epic_levels_pipeline.annotations.clips import Clip
    from epic_levels_pipeline.bank.levels import Evidence, outside_window

    for q in bank[0].itertuples():
        evidence = [Evidence(**e) for e in json.loads(q.provenance)]
        assert outside_window(evidence, Clip.from_key(q.clip_key)) == ""
        assert all(e.at_s is None or e.start_s <= e.at_s <= e.stop_s for e in evidence), q.question_id
    window = Clip("epic_sounds", "P01_01", 45.0, 75.0)
    assert outside_window([Evidence("narration", "n", 44.37, 45.22, "context")], window)
    assert not outside_window([Evidence("object_track", "t", 50.0, 50.3, "answer")], window)
    assert not outside_window([Evidence("object_track", "t", 0.0, 103.0, "answer")], window)
    assert Evidence("object_track", "t", 863.6, 863.9, "answer", at_s=864.0).read_inside().at_s == 863.9


def test_blind_and_anti_prior_contain_chance_for_every_subtype_and_strategy(bank):
    questions, items, _, _ = bank
    priors = prior_audit(questions, items)
    judged = priors[priors["n"] >= PRIOR_MIN_N]
    assert set(judged["format"]) == {"multiple_choice", "yes_no"} and set(judged["prior"]) == {"blind", "anti_prior"}
    # Some 90 judged rows at 95 % each: a few exclude chance by chance alone (the bundled bank is one draw of
    # 26 clips). None may survive Holm's correction, and no more may be flagged than chance explains.
    assert not len(prior_shortcuts_holm(priors)), prior_shortcuts_holm(priors).to_string()
    assert len(prior_shortcuts(priors)) <= 0.05 * len(judged), prior_shortcuts(priors).to_string()


def test_presence_oracle_at_chance_on_fixed_and_leaking_on_absent(bank):
    rates = shortcut_rates(bank[0])
    fixed = rates[rates["distractor_strategy"] == "same_clip_other_moments"]
    leaky = rates[(rates["distractor_strategy"] == "absent_from_clip") & (rates["level"] != "L1")]
    assert len(fixed) and (fixed["singles_out_key"] == 0).all()
    assert len(leaky) and (leaky["singles_out_key"] == 1).all()


def test_no_question_has_nested_or_duplicate_options(bank):
    assert option_problems(bank[0]) == []


def test_bank_keeps_nine_tenths_of_its_questions_per_level_and_dataset(bank):
    questions, _, drops, _ = bank
    now = questions.groupby(["dataset", "level"]).size().to_dict()
    short = {k: (now.get(k, 0), n) for k, n in BEFORE.items() if now.get(k, 0) < 0.9 * n}
    assert sum(drops.values()) > 0  # drops are counted by reason
    assert not short, f"(now, before) where fewer than 90 % are kept: {short}"


def test_option_words_and_clashes():
    assert clash("freezer", "freezer drawer") and clash("opening the freezer", "opening the freezer drawer")
    assert clash("plate", "Plate") and clash("plates", "the plate") and clash("plate", "plate cover")
    assert clash("glass bowl", "metal bowl", entity=True) and not clash("glass bowl", "metal bowl")
    assert not clash("Metal hitting metal", "Metal hitting ceramic")
    assert option_words("a bag of the onions") == Counter({"bag": 1, "onion": 1})


@given(st.lists(st.integers(0, 50), min_size=1, max_size=6))
def test_prior_pick_is_the_most_or_least_frequent_first_option(freqs):
    assert freqs[prior_pick(freqs)] == max(freqs) and prior_pick(freqs) == freqs.index(max(freqs))
    assert freqs[prior_pick(freqs, least=True)] == min(freqs) and prior_pick(freqs, least=True) == freqs.index(min(freqs))


def _item_and_question(freqs, key, fmt, statement=None, true=None):
    from types import SimpleNamespace

    values = [f"sound:s{i}" for i in range(len(freqs))]
    question = SimpleNamespace(option_frequency=freqs, answer_index=key, option_values=values)
    item = SimpleNamespace(format=fmt, statement_value=None if statement is None else values[statement],
                           statement_true=true)
    return item, question


@given(st.lists(st.integers(0, 6), min_size=2, max_size=5), st.data(), st.booleans())
def test_prior_credit_is_the_prior_averaged_over_tie_breaks_and_the_yes_no_draw(freqs, data, least):
    """The audit's credit is the mean of the deterministic prior over every order of the options (ties
    broken every way) and, in yes/no, over the formats layer's statement draw."""
    import itertools

    key = data.draw(st.integers(0, len(freqs) - 1))
    n = len(freqs)

    def mean_over_orders(fmt, statement=None, true=None):
        scores = []
        for order in itertools.permutations(range(n)):
            item, q = _item_and_question([freqs[i] for i in order], order.index(key), fmt,
                                         None if statement is None else order.index(statement), true)
            scores.append(float(prior_correct(item, q, least)))
        return sum(scores) / len(scores)

    item, q = _item_and_question(freqs, key, "multiple_choice")
    assert prior_credit(item, q, least) == pytest.approx(mean_over_orders("multiple_choice"))
    wrong = [i for i in range(n) if i != key]
    expected = 0.5 * mean_over_orders("yes_no", key, True) + 0.5 * sum(
        mean_over_orders("yes_no", d, False) for d in wrong) / len(wrong)
    item, q = _item_and_question(freqs, key, "yes_no", key, True)
    assert prior_credit(item, q, least) == pytest.approx(expected)


def test_prior_credit_of_equally_frequent_options_is_chance():
    item, q = _item_and_question([3, 3, 3, 3], 2, "multiple_choice")
    assert prior_credit(item, q, False) == prior_credit(item, q, True) == 0.25
    item, q = _item_and_question([3, 3, 3, 3], 2, "yes_no", 0, False)
    assert prior_credit(item, q, False) == 0.5
    item, q = _item_and_question([9, 3, 3, 3], 0, "multiple_choice")  # the key the most frequent: a give-away
    assert prior_credit(item, q, False) == 1.0 and prior_credit(item, q, True) == 0.0


def test_prior_audit_clusters_by_the_named_column(bank):
    questions, items, _, _ = bank
    by_clip = prior_audit(questions, items)
    same = prior_audit(questions, items.assign(video_id=items["clip_key"]), cluster="video_id")
    pd.testing.assert_frame_equal(by_clip, same)
    by_video = prior_audit(questions, items, cluster="video_id")
    assert (by_video["rate"] == by_clip["rate"]).all()
    assert items.groupby("video_id")["clip_key"].nunique().max() > 1  # some videos hold several clips
    assert not by_video[["ci_low", "ci_high"]].equals(by_clip[["ci_low", "ci_high"]])


def _drafts(keys):
    from types import SimpleNamespace

    return [SimpleNamespace(answer=SimpleNamespace(value=k), n=i) for i, k in enumerate(keys)]


@given(st.lists(st.sampled_from("abcde"), max_size=20), st.integers(0, 10_000))
def test_drafts_take_turns_over_their_keys(keys, seed):
    import numpy as np

    from epic_levels_pipeline.bank.build import _by_key_turns

    drafts = _drafts(keys)
    out = _by_key_turns(list(drafts), np.random.default_rng(seed))
    assert sorted(d.n for d in out) == list(range(len(drafts)))  # a reordering, nothing lost
    distinct = len(set(keys))
    assert len({d.answer.value for d in out[:distinct]}) == distinct  # every key once before any twice
    for k in set(keys):  # a key's drafts keep their (shuffled) order
        ns = [d.n for d in out if d.answer.value == k]
        assert ns == sorted(ns)


def test_every_key_is_as_likely_to_be_asked_first_however_many_moments_it_has():
    import numpy as np

    from epic_levels_pipeline.bank.build import _by_key_turns

    # One key with nine moments, one with a single moment: a plain shuffle asks the first one 90 % of the
    # time; taking turns asks each half of the time (2,000 fixed seeds: 0.5 ± 0.035 at 3 SE).
    firsts = Counter()
    for seed in range(2000):
        rng = np.random.default_rng(seed)
        drafts = _drafts(["common"] * 9 + ["rare"])
        drafts = [drafts[i] for i in rng.permutation(len(drafts))]
        firsts[_by_key_turns(drafts, rng)[0].answer.value] += 1
    assert abs(firsts["rare"] / 2000 - 0.5) < 0.035


def test_clip_pools_draw_the_subtypes_other_answers_first(bank, offline_bank):
    """Under the default ``exchangeable`` rule a same-clip question's distractors are the subtype's other
    answers in the clip before anything else the clip holds (the pool rows keep the order of the draw)."""
    from epic_levels_pipeline.bank.clip_view import ClipView
    from epic_levels_pipeline.bank.subtypes import SUBTYPES

    questions, _, _, (_, cat) = bank
    fixed = questions[questions["distractor_strategy"] == "same_clip_other_moments"]
    checked = mixed = 0
    for clip_key, qs in fixed.groupby("clip_key"):
        clip, rows, built = offline_bank["banks"][clip_key]
        view = ClipView(clip, rows, cat)
        pools = built.pools
        for subtype, group in qs.groupby("subtype"):
            peers = {d.answer.value for d in SUBTYPES[subtype].generate(view) if not isinstance(d, tuple)}
            for qid in group["question_id"]:
                drawn = pools[(pools["question_id"] == qid) & (pools["role"] == "distractor")]["value"].tolist()
                is_peer = [v in peers for v in drawn]
                assert is_peer == sorted(is_peer, reverse=True), (qid, drawn)  # no peer after a non-peer
                checked += 1
                mixed += any(is_peer) and not all(is_peer)
    assert checked >= 100 and mixed > 0


def _prior_rows(rates_and_widths, n=100):
    rows = []
    for i, (rate, half) in enumerate(rates_and_widths):
        low, high = rate - half, rate + half
        rows.append({"dataset": "d", "subtype": f"s{i}", "distractor_strategy": "x", "format": "multiple_choice",
                     "prior": "blind", "n": n, "n_clips": n, "rate": rate, "chance": 0.25, "ci_low": low,
                     "ci_high": high, "chance_corrected": 0.0, "excludes_chance": bool(low > 0.25 or high < 0.25)})
    return pd.DataFrame(rows)


def test_holm_keeps_a_real_prior_and_lets_the_chance_flags_go():
    from epic_levels_pipeline.scoring.metrics.tables import prior_shortcuts_holm

    # 99 rows at chance give some intervals just missing 0.25 (what 95 % intervals do); one row is far off.
    rows = [(0.25, 0.05)] * 94 + [(0.306, 0.05)] * 5 + [(0.45, 0.05)]
    priors = _prior_rows(rows)
    assert len(prior_shortcuts(priors)) == 6
    kept = prior_shortcuts_holm(priors)
    assert kept["rate"].tolist() == [0.45]
    assert len(prior_shortcuts_holm(_prior_rows(rows, n=5))) == 0  # too few items to be judged


@given(st.lists(st.tuples(st.floats(0.0, 1.0), st.floats(0.0, 0.3)), min_size=1, max_size=30),
       st.floats(0.001, 0.2))
def test_holm_is_stricter_with_more_rows_and_a_lower_level(rows, alpha):
    from epic_levels_pipeline.scoring.metrics.tables import prior_shortcuts_holm

    def kept(frame, a=0.05):
        return set(prior_shortcuts_holm(frame, alpha=a)["subtype"])

    priors = _prior_rows(rows)
    assert kept(priors) <= set(prior_shortcuts(priors)["subtype"])
    with_chance_row = _prior_rows(rows + [(0.25, 0.05)])
    assert kept(with_chance_row) <= kept(priors)  # one more row at chance never adds a flag
    assert kept(priors, min(alpha, 0.05)) <= kept(priors, max(alpha, 0.05))


@given(st.floats(0.0, 1.0), st.floats(0.001, 0.3))
def test_holm_over_one_row_is_the_plain_flag(rate, half):
    from epic_levels_pipeline.scoring.metrics.tables import prior_shortcuts_holm

    assume(abs(abs(rate - 0.25) - half) > 1e-9)  # not on the interval's edge, where rounding decides
    priors = _prior_rows([(rate, half)])
    assert len(prior_shortcuts_holm(priors)) == len(prior_shortcuts(priors))


def test_holm_reads_the_interval_side_facing_chance_and_skips_rows_without_one():
    from epic_levels_pipeline.scoring.metrics.tables import prior_shortcuts_holm

    lopsided = _prior_rows([(0.30, 0.0)])
    lopsided.loc[0, ["ci_low", "ci_high", "excludes_chance"]] = [0.251, 0.45, True]
    assert len(prior_shortcuts_holm(lopsided)) == 1  # p from the lower side: (0.30 - 0.251) / 1.96
    missing = _prior_rows([(0.45, 0.05), (0.30, 0.0)])
    missing.loc[1, ["ci_low", "ci_high"]] = [float("nan"), float("nan")]
    assert prior_shortcuts_holm(missing)["rate"].tolist() == [0.45]


def test_every_distractor_rule_builds_a_valid_bank_and_unknown_rules_are_refused(bank):
    """``distractor_rule`` is configuration: each rule gives a bank with valid options; the clip pools'
    draws differ between the exchangeable default and the rank-matching rule; a misspelt rule is an error."""
    from epic_levels_pipeline.annotations.clips import Clip
    from epic_levels_pipeline.annotations.clip_rows import clip_annotations
    from epic_levels_pipeline.bank.build import build_bank
    from epic_levels_pipeline.bank.subtypes import BankConfig

    questions, _, _, (ann, cat) = bank
    clip_key = questions[questions["distractor_strategy"] == "same_clip_other_moments"]["clip_key"].iloc[0]
    clip = Clip.from_key(clip_key)
    rows = clip_annotations(ann, clip)
    drawn = {}
    for rule in ("exchangeable", "uniform_rank", "uniform"):
        q = build_bank(clip, rows, cat, BankConfig(distractor_rule=rule)).questions
        assert len(q) and option_problems(q) == []
        fixed = q[q["distractor_strategy"] == "same_clip_other_moments"]
        drawn[rule] = sorted(map(tuple, fixed["option_values"]))
    assert drawn["exchangeable"] == sorted(map(tuple, questions[(questions["clip_key"] == clip_key) & (
        questions["distractor_strategy"] == "same_clip_other_moments")]["option_values"]))  # the default
    assert drawn["exchangeable"] != drawn["uniform_rank"]
    with pytest.raises(ValueError, match="unknown distractor rule 'uniform-rank'"):
        build_bank(clip, rows, cat, BankConfig(distractor_rule="uniform-rank"))
