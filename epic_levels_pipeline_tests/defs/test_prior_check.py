"""The ``prior_shortcut`` check judges by its Holm-corrected flags: the bundled bank's few uncorrected flags (what
95 % intervals give by chance over some 90 rows) pass, a row far from chance warns."""

from __future__ import annotations

import pandas as pd

from epic_levels_pipeline.defs.scoring.assets import prior_shortcut_check
from epic_levels_pipeline.scoring.metrics.tables import prior_audit, prior_shortcuts


def _rows(rates_and_halves, n=100):
    return pd.DataFrame([{"dataset": "d", "subtype": f"s{i}", "distractor_strategy": "x", "format": "multiple_choice",
                          "prior": "blind", "n": n, "n_clips": n, "rate": r, "chance": 0.25, "ci_low": r - h,
                          "ci_high": r + h, "chance_corrected": 0.0, "excludes_chance": bool(r - h > 0.25 or r + h < 0.25)}
                         for i, (r, h) in enumerate(rates_and_halves)])


def test_the_bundled_bank_passes_the_prior_check(offline_bank):
    priors = prior_audit(offline_bank["questions"], offline_bank["items"])
    result = prior_shortcut_check(priors)
    assert result.passed, result.metadata["rows"]
    assert result.metadata["flagged"].value == len(prior_shortcuts(priors))
    assert result.metadata["flagged_after_holm"].value == 0 and result.metadata["judged"].value > 50


def test_chance_flags_pass_and_a_real_prior_warns():
    at_chance = [(0.25, 0.05)] * 94 + [(0.306, 0.05)] * 5
    result = prior_shortcut_check(_rows(at_chance))
    assert result.passed and result.metadata["flagged"].value == 5 and result.metadata["flagged_after_holm"].value == 0
    warned = prior_shortcut_check(_rows(at_chance + [(0.45, 0.05)]))
    assert not warned.passed and warned.metadata["flagged_after_holm"].value == 1
    assert "0.45" in warned.metadata["rows"].value
