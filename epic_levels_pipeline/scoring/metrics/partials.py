"""Per-clip partial results and the cross-clip tables combined from them (one import place: the reducers are in
:mod:`.clip_partials`, the combine in :mod:`.combined`). A changed clip costs its own partials plus a combine over
small tables; counts, intervals and p-values equal those from all verdicts, chances to rounding
(docs/design/scoring.md)."""

from __future__ import annotations

from .clip_partials import (JUDGE_SAMPLE_COLUMNS, PAIR_COUNTS, PAIR_KEYS, PARTIAL_COLUMNS, PRESENCE_KEYS, SCORE_COUNTS,
                            SCORE_KEYS, clip_partials, combine, judge_partials, judge_vote_partials, pair_partials, presence_partials,
                            prior_partials, score_partials)
from .combined import (judge_sample_from_partials, mc_accuracy_from_partials, over_marking_from_partials,
                       paired_from_partials, presence_from_partials, priors_from_partials, scores_from_partials,
                       shortcut_audit_from_partials)
from .tallies import tally_intervals

__all__ = ["JUDGE_SAMPLE_COLUMNS", "PAIR_COUNTS", "PAIR_KEYS", "PARTIAL_COLUMNS", "PRESENCE_KEYS", "SCORE_COUNTS",
           "SCORE_KEYS", "clip_partials", "combine", "judge_partials", "judge_vote_partials", "judge_sample_from_partials", "mc_accuracy_from_partials",
           "over_marking_from_partials", "pair_partials", "paired_from_partials", "presence_from_partials",
           "presence_partials", "prior_partials", "priors_from_partials", "score_partials", "scores_from_partials",
           "shortcut_audit_from_partials", "tally_intervals"]
