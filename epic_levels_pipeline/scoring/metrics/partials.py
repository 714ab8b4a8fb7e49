"""Per-clip partial results, and the cross-clip tables combined from them.

A clip's verdicts (and its questions and items) are reduced, with the clip, to the counts and sums every
cross-clip table needs; the cross-clip tables are then computed from those partials alone, so a changed
clip costs its own partials plus a combine that reads small tables instead of every verdict.

The partial tables (their columns: :data:`PARTIAL_COLUMNS`, one place):

- ``score_partials`` — per responder × model × dataset × level × subtype × distractor strategy × format ×
  condition × item chance: ``n`` counted verdicts (rule, judge, unparsed), ``correct`` among them,
  ``n_undecided`` / ``correct_undecided`` (for the strict accuracy), the other ``scored_by`` counts, and the
  4b over-marking counts (rule-decided wrong option-judgement answers and how many of them marked more than
  one option true). Feeds ``scores``, ``over_marking`` and the responder gaps of ``shortcut_audit``.
- ``pair_partials`` — per responder × model × level × pair (``kind``, ``condition``, ``a``, ``b``): the
  paired counts (``both``, ``only_a``, ``only_b``, ``neither``) and the sums of each side's chance. A pair is
  two verdicts of one base question (or one item), so it never spans clips: the clip's counts are exact.
- ``prior_partials`` — per subtype × strategy × format × prior × item chance × expected prior credit: how many
  items. Feeds the text-only prior rows of ``shortcut_audit``.
- ``presence_partials`` — per subtype × strategy: questions and the sums behind the presence-oracle rates.
- ``judge_vote_partials`` — every judge's answer about the clip's replies the rules could not decide (one row per
  reply × judge), for the agreement between judges and the judge-swap sensitivity of ``judge_audit``.
- ``judge_partials`` — the clip's candidates for the judge audit's sample: per responder/model its
  ``sample_size`` eligible replies of smallest sample key (:func:`..judge_audit.sample_key`), with what the
  audit asks the judge. The audit's sample is the smallest keys over all clips, so it is the smallest keys
  among the clips' candidates.

Why the combined tables give the same numbers as the tables computed from all verdicts
(:mod:`.tables`): counts add; a clip-clustered bootstrap interval is a function of each clip's sums and
sizes (clusters numbered in sorted order, :mod:`.stats`), and of a single clip's value counts (its rows
resampled in sorted order); the clustered McNemar test is a function of the per-clip discordant counts.
Counts, accuracies, accuracy intervals, differences and p-values are therefore identical; a chance (a mean
of non-integer item chances, e.g. 1/15) is summed in another order, so chance, chance-corrected values and
their intervals agree to rounding (1e-12 in the tests), not bit for bit.

The draws of a clip-clustered bootstrap depend only on the number of clips, so groups of the same size
share one draw matrix here (one matrix product for all of them) instead of drawing per group.

Where it is (every name imports from here): the per-clip reducers and :func:`combine` in :mod:`.clip_partials`;
the cross-clip tables in :mod:`.combined`, the roll-ups of ``scores`` in :mod:`.rollups` and the intervals in
:mod:`.tallies` — on integer codes (key columns factorized once, in sorted order) and numpy, so the combine
costs sorts and sums of the partial rows, and one matrix product per number of clips, never a frame per roll-up.
"""

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
