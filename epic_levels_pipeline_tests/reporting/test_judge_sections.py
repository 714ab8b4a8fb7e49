"""The report's judge sections: agreement and judge swap from two judges' votes (the real audit functions), the
caption semantic layer per clip beside pooled with the schema gate, and what each says with nothing to show."""

import numpy as np
import pandas as pd

from epic_levels_pipeline.reporting.judge_sections import SECTION_JUDGES, SECTION_SEMANTIC
from epic_levels_pipeline.reporting.report import build_report
from epic_levels_pipeline.scoring.judge_audit import all_agreement, all_swaps, vote_rows
from epic_levels_pipeline.scoring.metrics.partials import score_partials
from epic_levels_pipeline.scoring.verdicts import JudgePanel, verdicts as make_verdicts
from epic_levels_pipeline_tests.scoring.test_judge_panel import build, named

NO_CAPTION_VOTES = pd.DataFrame(columns=["track", "unit", "judge", "label", "clip_key"])


def section(markdown: str, title: str) -> str:
    """The Markdown of one ``## title`` section."""
    return markdown.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def two_judges():
    responses, items = build()
    panel = JudgePanel({"names_first": named("first"), "names_last": named("last")}, "names_first")
    v = make_verdicts(responses, items, judge=panel)
    votes = vote_rows(v)
    return all_agreement(votes, NO_CAPTION_VOTES), all_swaps(score_partials(v), votes, pd.DataFrame())


def test_agreement_and_swap_in_the_report():
    agreement, swap = two_judges()
    text = section(build_report(None, None, None, None, judge_agreement=agreement, judge_swap=swap).markdown,
                   SECTION_JUDGES)
    pair = agreement[(agreement["track"] == "qa") & (agreement["judge_a"] != "*")].iloc[0]
    row = next(line for line in text.splitlines() if "names_first · names_last" in line)
    assert f"| {pair['n']} |" in row and f"{pair['cohen_kappa']:.3f}" in row  # κ as the table has it
    everyone = agreement[(agreement["track"] == "qa") & (agreement["judge_a"] == "*")].iloc[0]
    assert f"{everyone['krippendorff_alpha']:.3f}" in next(line for line in text.splitlines() if "| all |" in line)
    moved = swap[(swap["judge"] == "names_last")]
    shift = next(line for line in text.splitlines() if "| names_last |" in line)
    assert f"{moved['shift'].abs().max():.3f}" in shift and f"{moved['spearman_rho'].iloc[0]:.3f}" in shift
    assert "| names_first |" in text  # the verdict's own judge: shift 0, ρ 1


def test_one_judge_says_there_is_nothing_to_compare():
    responses, items = build()
    v = make_verdicts(responses, items, judge=named("first"))
    votes = vote_rows(v)
    text = section(build_report(None, None, None, None, judge_agreement=all_agreement(votes, NO_CAPTION_VOTES),
                                judge_swap=all_swaps(score_partials(v), votes, pd.DataFrame())).markdown,
                   SECTION_JUDGES)
    assert "fewer than two judges" in text and "Cohen's κ |" not in text


def caption_scores(semantic: bool) -> pd.DataFrame:
    """``caption_scores``' top rows (both datasets, greedy) for two responders: the schema gate and each unit kind's
    semantic precision / recall, per clip and pooled (NaN without a judge)."""
    rows = []
    for responder, value, pooled, gate in (("oracle", 5.0, 5.0, 1.0), ("corrupted", 2.25, 2.5, 0.75)):
        metrics = {"schema_gate": gate, "action_f1": 1.0}
        for kind in ("event", "action", "reference"):
            for m in ("p", "r"):
                metrics[f"semantic_{kind}_{m}"] = value if semantic else np.nan
                metrics[f"semantic_{kind}_{m}_pooled"] = pooled if semantic else np.nan
        rows += [{"responder": responder, "model": "offline", "condition": "clip", "dataset": "*",
                  "matcher": "greedy", "metric": metric, "n": 4, "value": x} for metric, x in metrics.items()]
    return pd.DataFrame(rows)


def test_semantic_layer_per_clip_beside_pooled_and_the_schema_gate():
    text = section(build_report(None, None, None, None, caption_scores=caption_scores(True)).markdown,
                   SECTION_SEMANTIC)
    corrupted = next(line for line in text.splitlines() if line.startswith("| corrupted"))
    assert "| 0.750 |" in corrupted and corrupted.count("2.25 (2.50)") == 6  # per clip, pooled in brackets
    assert next(line for line in text.splitlines() if line.startswith("| oracle")).count("5.00 (5.00)") == 6
    assert "No judge is configured" not in text


def test_no_judge_leaves_the_semantic_cells_empty_with_a_note():
    text = section(build_report(None, None, None, None, caption_scores=caption_scores(False)).markdown,
                   SECTION_SEMANTIC)
    assert "No judge is configured" in text
    oracle = next(line for line in text.splitlines() if line.startswith("| oracle"))
    assert "| 1.000 |" in oracle and "5.00" not in oracle  # the schema gate stays; no semantic figure
