"""The cross-clip tables of the scoring stage: scores, paired comparisons, the shortcut and judge audits, and
over-marking."""

from __future__ import annotations

import pyarrow as pa

from .fields import BOOL, FLOAT, INT, JUDGE, RESPONDER, STR, _f


JUDGE_AUDIT = pa.schema([
    *RESPONDER,
    _f("n", INT, "rows counted"),
    _f("judge_rule_agreement", FLOAT, "share where the judge agrees with the rules"),
    _f("judge_self_agreement", FLOAT, "share where the judge agrees with itself on the options reordered"),
    _f("judge_none_rate", FLOAT, "share of judge replies without a choice"),
    _f("judge_errors", INT, "judge calls that failed"),
    _f("note", STR, "a note for readers"),
    *JUDGE,
    _f("self_judged", BOOL, "did the model judge its own replies (asked for explicitly: --judge self)"),
])

OVER_MARKING = pa.schema([
    *RESPONDER,
    _f("condition", STR, "clip, no_clip or silenced"),
    _f("n_wrong", INT, "count of wrong"),
    _f("n_wrong_over_marked", INT, "count of wrong over marked"),
    _f("share", FLOAT, "share of wrong answers over-marked"),
])

PAIRED_COMPARISONS = pa.schema([
    *RESPONDER,
    _f("level", STR, "L1-L4, from the subtype's evidence scope"),
    _f("kind", STR, "format (two formats of one question), condition (clip against no_clip or silenced on one "
                    "item) or model (two models on one item; responder and model '*')"),
    _f("condition", STR, "clip, no_clip or silenced ('*' for condition pairs)"),
    _f("a", STR, "first side of the pair: a format, a condition, or a model's NAME (external/NAME for imported "
                 "replies)"),
    _f("b", STR, "second side of the pair (sorted after a for format and model pairs)"),
    _f("n_pairs", INT, "count of pairs"),
    _f("both", INT, "pairs both sides answered correctly"),
    _f("only_a", INT, "pairs only a answered correctly"),
    _f("only_b", INT, "pairs only b answered correctly"),
    _f("neither", INT, "pairs neither side answered correctly"),
    _f("mcnemar_p", FLOAT, "two-sided McNemar p clustered by clip (an exact sign-flip test over clips)"),
    _f("diff", FLOAT, "accuracy of a minus accuracy of b"),
    _f("diff_ci_low", FLOAT, "lower 95 % bound of diff"),
    _f("diff_ci_high", FLOAT, "upper 95 % bound of diff"),
    _f("accuracy_a", FLOAT, "accuracy a"),
    _f("accuracy_b", FLOAT, "accuracy b"),
    _f("chance_corrected_a", FLOAT, "chance-corrected accuracy a"),
    _f("chance_corrected_b", FLOAT, "chance-corrected accuracy b"),
    _f("mcnemar_p_unclustered", FLOAT, "McNemar p without clustering by clip"),
    _f("format", STR, "answer format of the paired items of a model pair ('*' for all formats, and for format and "
                      "condition pairs)"),
])

SCORES = pa.schema([
    *RESPONDER,
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("level", STR, "L1-L4, from the subtype's evidence scope"),
    _f("subtype", STR, "question subtype"),
    _f("distractor_strategy", STR, "how the wrong options were drawn"),
    _f("format", STR, "answer format of the item"),
    _f("condition", STR, "clip, no_clip or silenced"),
    _f("n", INT, "rows counted"),
    _f("correct", INT, "is the parsed answer the expected one"),
    _f("accuracy", FLOAT, "share correct"),
    _f("chance", FLOAT, "chance accuracy"),
    _f("chance_corrected", FLOAT, "(accuracy - chance) / (1 - chance)"),
    _f("ci_low", FLOAT, "lower end of the clip-clustered 95 % bootstrap interval"),
    _f("ci_high", FLOAT, "upper end of that interval"),
    _f("accuracy_ci_low", FLOAT, "lower 95 % bound of accuracy"),
    _f("accuracy_ci_high", FLOAT, "upper 95 % bound of accuracy"),
    _f("accuracy_strict", FLOAT, "accuracy strict"),
    _f("chance_corrected_strict", FLOAT, "chance-corrected accuracy strict"),
    _f("n_undecided", INT, "count of undecided"),
    _f("n_unparsed", INT, "count of unparsed"),
    _f("n_skipped", INT, "count of skipped"),
    _f("n_error", INT, "count of error"),
    _f("n_judge", INT, "count of judge"),
    _f("n_clips", INT, "count of clips"),
    _f("n_self_judged", INT, "count of verdicts the model judged itself (--judge self)"),
    _f("n_judge_failed", INT, "verdicts whose judge failed (timeout, error, unparsable judge reply): left out, never "
                              "counted wrong"),
])

SHORTCUT_AUDIT = pa.schema([
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("subtype", STR, "question subtype"),
    _f("level", STR, "L1-L4, from the subtype's evidence scope"),
    _f("distractor_strategy", STR, "how the wrong options were drawn"),
    *RESPONDER,
    _f("n", INT, "rows counted"),
    _f("singles_out_key", FLOAT, "share where the presence oracle singles out the key"),
    _f("only_absent_give_away", FLOAT, "share where only an absent option gives the key away"),
    _f("presence_oracle_rate", FLOAT, "accuracy of the presence oracle"),
    _f("chance", FLOAT, "chance accuracy"),
    _f("accuracy_clip", FLOAT, "accuracy clip"),
    _f("accuracy_no_clip", FLOAT, "accuracy no clip"),
    _f("accuracy_silenced", FLOAT, "accuracy silenced"),
    _f("blind_gap", FLOAT, "accuracy under clip minus under no_clip"),
    _f("silenced_gap", FLOAT, "accuracy under clip minus under silenced"),
    _f("prior_n_mc", INT, "multiple-choice items judged by the priors"),
    _f("anti_prior_rate_mc", FLOAT, "accuracy of picking the least frequent option (multiple choice)"),
    _f("anti_prior_ci_low_mc", FLOAT, "lower 95 % bound of the anti-prior rate (multiple choice)"),
    _f("anti_prior_ci_high_mc", FLOAT, "upper 95 % bound of the anti-prior rate (multiple choice)"),
    _f("blind_rate_mc", FLOAT, "accuracy of picking the most frequent option (multiple choice)"),
    _f("blind_ci_low_mc", FLOAT, "lower 95 % bound of the blind rate (multiple choice)"),
    _f("blind_ci_high_mc", FLOAT, "upper 95 % bound of the blind rate (multiple choice)"),
    _f("prior_n_yes_no", INT, "yes/no items judged by the priors"),
    _f("anti_prior_rate_yes_no", FLOAT, "accuracy of the least-frequent prior (yes/no)"),
    _f("anti_prior_ci_low_yes_no", FLOAT, "lower 95 % bound of the anti-prior rate (yes/no)"),
    _f("anti_prior_ci_high_yes_no", FLOAT, "upper 95 % bound of the anti-prior rate (yes/no)"),
    _f("blind_rate_yes_no", FLOAT, "accuracy of the most-frequent prior (yes/no)"),
    _f("blind_ci_low_yes_no", FLOAT, "lower 95 % bound of the blind rate (yes/no)"),
    _f("blind_ci_high_yes_no", FLOAT, "upper 95 % bound of the blind rate (yes/no)"),
])

JUDGE_AGREEMENT = pa.schema([
    _f("track", STR, "qa (open replies the rules could not decide), caption_label (label agreement of aligned "
                     "units) or caption_semantic (the bounded 1-5 description scores)"),
    _f("judge_a", STR, "a judge (NAME); '*' on the row over every judge"),
    _f("judge_b", STR, "the other judge; '*' on the row over every judge"),
    _f("n", INT, "units both judges answered (or, on the '*' row, units at least two judges answered)"),
    _f("agreement", FLOAT, "share of those units on which the two judges gave the same label"),
    _f("cohen_kappa", FLOAT, "Cohen's kappa of the two judges' labels"),
    _f("krippendorff_alpha", FLOAT, "Krippendorff's alpha (nominal; interval for caption_semantic) of the labels"),
    _f("note", STR, "a note for readers"),
])

JUDGE_SWAP = pa.schema([
    _f("track", STR, "qa, caption_label or caption_semantic"),
    _f("metric", STR, "the score compared (qa: chance_corrected; captions: the metric's name)"),
    *RESPONDER,
    _f("condition", STR, "clip, no_clip or silenced"),
    _f("judge", STR, "the judge whose answers replace the verdict's ('verdict': the scores as materialized)"),
    _f("n", INT, "replies (qa) or captions counted"),
    _f("value", FLOAT, "qa: accuracy; captions: the metric's mean"),
    _f("chance", FLOAT, "qa: mean chance of the counted items"),
    _f("chance_corrected", FLOAT, "qa: (accuracy - chance) / (1 - chance)"),
    _f("shift", FLOAT, "the change from the verdict's score (chance-corrected for qa)"),
    _f("rank", FLOAT, "the responder/model's rank under this judge (1 = best; ties share the mean rank)"),
    _f("spearman_rho", FLOAT, "Spearman rho of this judge's ranking against the verdict's (NaN under 3 ranked)"),
    _f("n_ranked", INT, "responders/models ranked"),
    _f("note", STR, "a note for readers"),
])
