"""The per-clip partial sums the cross-clip tables are combined from (``scoring/metrics/partials.py``)."""

from __future__ import annotations

import pyarrow as pa

from .fields import BOOL, FLOAT, INT, RESPONDER, STR, _f


SCORE_PARTIALS = pa.schema([
    *RESPONDER,
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("level", STR, "L1-L4 (or '*' for the sum over levels in pair_partials)"),
    _f("subtype", STR, "question subtype"),
    _f("distractor_strategy", STR, "how the wrong options were drawn"),
    _f("format", STR, "answer format"),
    _f("condition", STR, "clip, no_clip or silenced ('*' for condition pairs)"),
    _f("clip_key", STR, "the clip the partial sums belong to"),
    _f("chance", FLOAT, "the items' chance accuracy (one row per distinct chance)"),
    _f("n", INT, "verdicts counted (rule or judge)"),
    _f("correct", INT, "of them correct"),
    _f("n_undecided", INT, "undecided verdicts"),
    _f("correct_undecided", INT, "undecided verdicts whose reply holds the key (strict scores)"),
    _f("n_unparsed", INT, "unparsed verdicts"),
    _f("n_skipped", INT, "skipped responses"),
    _f("n_error", INT, "failed calls"),
    _f("n_judge", INT, "verdicts the judge decided"),
    _f("n_rule_wrong_4b", INT, "wrong option-judgement verdicts decided by rule"),
    _f("n_over_marked_4b", INT, "of them with more than one option marked true"),
    _f("n_self_judged", INT, "verdicts the model judged itself (--judge self)"),
    _f("n_judge_failed", INT, "verdicts whose judge failed (timeout, error, unparsable judge reply): never wrong"),
])

PAIR_PARTIALS = pa.schema([
    *RESPONDER,
    _f("level", STR, "L1-L4 (or '*' for the sum over levels in pair_partials)"),
    _f("kind", STR, "format (two formats of one question), condition (clip against another condition) or model "
                    "(two models on one item; responder and model '*')"),
    _f("condition", STR, "clip, no_clip or silenced ('*' for condition pairs)"),
    _f("a", STR, "first of the pair"),
    _f("b", STR, "second of the pair"),
    _f("format", STR, "answer format of a model pair's items ('*' for format and condition pairs)"),
    _f("clip_key", STR, "the clip the partial sums belong to"),
    _f("n_pairs", INT, "pairs counted"),
    _f("both", INT, "pairs right in both"),
    _f("only_a", INT, "right only in a"),
    _f("only_b", INT, "right only in b"),
    _f("neither", INT, "wrong in both"),
    _f("chance_a_sum", FLOAT, "sum of a's chance over the pairs"),
    _f("chance_b_sum", FLOAT, "sum of b's chance over the pairs"),
])

PRIOR_PARTIALS = pa.schema([
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("subtype", STR, "question subtype"),
    _f("level", STR, "L1-L4 (or '*' for the sum over levels in pair_partials)"),
    _f("distractor_strategy", STR, "how the wrong options were drawn"),
    _f("format", STR, "answer format"),
    _f("prior", STR, "the text-only prior (blind or anti-prior)"),
    _f("clip_key", STR, "the clip the partial sums belong to"),
    _f("chance", FLOAT, "the items' chance accuracy (one row per distinct chance)"),
    _f("credit", FLOAT, "the prior's expected credit per item"),
    _f("n", INT, "verdicts counted (rule or judge)"),
])

PRESENCE_PARTIALS = pa.schema([
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("subtype", STR, "question subtype"),
    _f("level", STR, "L1-L4 (or '*' for the sum over levels in pair_partials)"),
    _f("distractor_strategy", STR, "how the wrong options were drawn"),
    _f("clip_key", STR, "the clip the partial sums belong to"),
    _f("n", INT, "verdicts counted (rule or judge)"),
    _f("correct", INT, "of them correct"),
    _f("absent_give_away", INT, "questions whose absent-from-clip options give the key away"),
    _f("expected", FLOAT, "sum of the presence oracle's expected rate"),
])

JUDGE_PARTIALS = pa.schema([
    *RESPONDER,
    _f("item_id", STR, "the item"),
    _f("condition", STR, "clip, no_clip or silenced ('*' for condition pairs)"),
    _f("format", STR, "answer format"),
    _f("base_format", STR, "the format the item renders"),
    _f("scored_by", STR, "rule, judge, unparsed or undecided"),
    _f("reply", STR, "the reply"),
    _f("parsed", STR, "the answer parsed from the reply"),
    _f("options", STR, "the options as shown (JSON)"),
    _f("prompt", STR, "the prompt sent"),
    _f("sample_key", INT, "the seeded key the judge audit samples by (smallest first)"),
    _f("clip_key", STR, "the clip the partial sums belong to"),
])

JUDGE_VOTE_PARTIALS = pa.schema([
    *RESPONDER,
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("subtype", STR, "question subtype"),
    _f("distractor_strategy", STR, "how the wrong options were drawn"),
    _f("format", STR, "answer format"),
    _f("condition", STR, "clip, no_clip or silenced"),
    _f("clip_key", STR, "the clip the partial rows belong to"),
    _f("item_id", STR, "the item"),
    _f("chance", FLOAT, "the item's chance accuracy"),
    _f("verdict_scored_by", STR, "the reply's verdict: judge, judge_failed or undecided (judges split)"),
    _f("verdict_correct", BOOL, "the reply's verdict: right or wrong (null when not decided)"),
    _f("judge", STR, "the judge asked (its NAME in the models file)"),
    _f("outcome", STR, "chose (an option), none (no option fits) or failed (timeout, error, unparsable reply)"),
    _f("choice", INT, "the option the judge chose (index into the item's options; -1 for none or failed)"),
    _f("correct", BOOL, "is the judge's choice the key (null when its call failed)"),
])
