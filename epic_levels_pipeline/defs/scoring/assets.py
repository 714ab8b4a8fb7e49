"""Scoring: verdicts per clip (rules first, judge when configured), then the cross-clip scored tables."""

import dagster as dg
import pandas as pd

from ...bank.checks import shortcut_rates
from ...scoring.verdicts import verdicts as make_verdicts
from ...scoring.metrics.tables import over_marking as make_over_marking
from ...scoring.metrics.tables import paired_comparisons as make_pairs
from ...scoring.metrics.tables import scores as make_scores
from ...scoring.metrics.tables import PRIOR_MIN_N, prior_audit, prior_shortcuts, prior_shortcuts_holm
from ...scoring.metrics.tables import shortcut_audit as make_audit
from ..evaluation import EvaluationResource
from ..metadata import batch_metadata, clip_table_metadata, counts_markdown, markdown_table, table_metadata
from ..automation import CROSS_CLIP, PER_CLIP
from ..partitions import CLIP_BACKFILL, clip_in, clip_keys, clip_partitions
from ..resources import ProjectResource

ALL_CLIPS = dg.AllPartitionMapping()


@dg.asset(
    partitions_def=clip_partitions, automation_condition=PER_CLIP, group_name="scoring", kinds={"python", "parquet"}, code_version="1",
    pool="model_calls", ins={"responses": clip_in(), "items": clip_in()}, backfill_policy=CLIP_BACKFILL,
    description="One verdict per response: parsed answer, correct, and whether it was scored by rule, by the "
                "judge, could not be parsed, or stayed undecided (no judge configured).",
)
def verdicts(context: dg.AssetExecutionContext, project: ProjectResource, evaluation: EvaluationResource,
             responses: dict[str, pd.DataFrame], items: dict[str, pd.DataFrame]):
    frames, metas = {}, {}
    cache = evaluation.cache(project.paths)
    try:
        judge, judge_model = evaluation.judge(cache)
        keys = clip_keys(context)
        batch = len(keys) > 1
        for key in keys:
            frames[key] = frame = make_verdicts(responses[key], items[key], judge=judge)
            meta = clip_table_metadata(frame, ["item_id", "condition", "responder", "parsed", "expected", "correct",
                                               "scored_by"], 6, batch=batch, first=not metas)
            meta["undecided"] = int((frame["scored_by"] == "undecided").sum())
            if not batch:  # a batch's shared metadata keeps the counts (batch_metadata)
                by = frame.groupby(["responder", "model", "scored_by"]).size().rename("rows").reset_index()
                meta.update({"scored_by": dg.MetadataValue.md(markdown_table(by, 60)),
                             "judge_model": judge_model or "(none: undecided rows are reported, not counted)"})
            metas[key] = meta
    finally:
        cache.close()
    return dg.Output(frames, metadata=batch_metadata(metas, context))


def main_table(scores: pd.DataFrame) -> pd.DataFrame:
    """Chance-corrected accuracy by level × format, per responder/model and condition (all datasets)."""
    top = scores[(scores["dataset"] == "*") & (scores["subtype"] == "*")]
    table = top.pivot_table(index=["responder", "model", "condition", "level"], columns="format",
                            values="chance_corrected", aggfunc="first")
    return table.round(3).reset_index()


@dg.asset(
    group_name="scoring", kinds={"pandas", "duckdb"}, code_version="2", automation_condition=CROSS_CLIP,
    ins={"verdicts": dg.AssetIn(partition_mapping=ALL_CLIPS)},
    description="n, accuracy, chance, chance-corrected accuracy and its clip-clustered 95 % bootstrap interval "
                "per responder/model × dataset × level × subtype × format × condition, with '*' roll-ups.",
)
def scores(verdicts: pd.DataFrame) -> dg.Output[pd.DataFrame]:
    frame = make_scores(verdicts)
    counts = verdicts["scored_by"].value_counts().to_dict()
    meta = table_metadata(frame)
    meta.update({"main_table": dg.MetadataValue.md(markdown_table(main_table(frame), 80)),
                 "rule_judge_counts": dg.MetadataValue.md(counts_markdown(counts, "scored_by", "verdicts"))})
    return dg.Output(frame, metadata=meta)


@dg.asset(
    group_name="scoring", kinds={"pandas", "duckdb"}, code_version="2", automation_condition=CROSS_CLIP,
    ins={"verdicts": dg.AssetIn(partition_mapping=ALL_CLIPS)},
    description="Paired comparisons on the same base questions: every pair of formats, clip vs no_clip and clip vs "
                "silenced; both/only-A/only-B counts, clip-clustered McNemar p (and the unclustered one), "
                "difference with a clip-clustered interval.",
)
def paired_comparisons(verdicts: pd.DataFrame) -> dg.Output[pd.DataFrame]:
    frame = make_pairs(verdicts)
    cond = frame[(frame["kind"] == "condition") & (frame["level"] == "*")]
    return dg.Output(frame, metadata={**table_metadata(frame),
                                      "conditions": dg.MetadataValue.md(markdown_table(cond.round(3), 40))})


@dg.asset(
    group_name="scoring", kinds={"pandas", "duckdb"}, code_version="1", automation_condition=CROSS_CLIP,
    ins={"verdicts": dg.AssetIn(partition_mapping=ALL_CLIPS)},
    description="4b over-marking: among wrong option-judgement answers, the share with more than one option "
                "marked true (Liu et al. 2025 report 63–86 %).",
)
def over_marking(verdicts: pd.DataFrame) -> dg.Output[pd.DataFrame]:
    frame = make_over_marking(verdicts)
    return dg.Output(frame, metadata={**table_metadata(frame), "table": dg.MetadataValue.md(markdown_table(frame.round(3)))})


@dg.asset(
    group_name="scoring", kinds={"pandas", "duckdb"}, code_version="2", automation_condition=CROSS_CLIP,
    ins={"questions": dg.AssetIn(partition_mapping=ALL_CLIPS), "verdicts": dg.AssetIn(partition_mapping=ALL_CLIPS),
         "items": dg.AssetIn(partition_mapping=ALL_CLIPS)},
    description="Shortcut audit per subtype × distractor strategy × responder/model: presence-oracle rate (no model "
                "needed), blind gap (no-clip accuracy − chance), silenced gap (clip − silenced accuracy), and the "
                "text-only priors: blind (most frequent option) and anti-prior (least frequent) rates with "
                "clip-clustered intervals, in multiple choice and yes/no.",
    check_specs=[dg.AssetCheckSpec("prior_shortcut", asset="shortcut_audit", blocking=False,
                                   description=f"Blind and anti-prior intervals contain chance for every subtype × "
                                               f"strategy × format with n ≥ {PRIOR_MIN_N}.")],
)
def shortcut_audit(questions: pd.DataFrame, verdicts: pd.DataFrame, items: pd.DataFrame):
    priors = prior_audit(questions, items)
    frame = make_audit(shortcut_rates(questions), verdicts, priors)
    presence = frame.drop_duplicates(["dataset", "subtype", "distractor_strategy"])[
        ["dataset", "subtype", "level", "distractor_strategy", "n", "singles_out_key", "presence_oracle_rate", "chance"]]
    yield dg.Output(frame, metadata={**table_metadata(frame),
                                     "presence_oracle": dg.MetadataValue.md(markdown_table(presence.round(3), 40)),
                                     "priors": dg.MetadataValue.md(markdown_table(priors.round(3), 80))})
    flagged = prior_shortcuts(priors)
    yield dg.AssetCheckResult(check_name="prior_shortcut", asset_key="shortcut_audit", passed=not len(flagged),
                              severity=dg.AssetCheckSeverity.WARN,
                              metadata={"flagged": len(flagged),
                                        "judged": int((priors["n"] >= PRIOR_MIN_N).sum()) if len(priors) else 0,
                                        "flagged_after_holm": len(prior_shortcuts_holm(priors)),
                                        "rows": dg.MetadataValue.md(markdown_table(flagged.round(3), 40) if len(flagged) else "_(none)_")})


@dg.asset(
    group_name="scoring", kinds={"pandas", "gemini"}, code_version="1", automation_condition=CROSS_CLIP,
    pool="model_calls",
    ins={"verdicts": dg.AssetIn(partition_mapping=ALL_CLIPS), "items": dg.AssetIn(partition_mapping=ALL_CLIPS)},
    description="Judge audit: on a seeded sample of open replies the rules decided, the judge's agreement with the "
                "rules, and with itself under a second shuffle (position bias). Empty with a note when no judge "
                "is configured.",
)
def judge_audit(project: ProjectResource, evaluation: EvaluationResource, verdicts: pd.DataFrame,
                items: pd.DataFrame) -> dg.Output[pd.DataFrame]:
    from ...scoring.judge_audit import judge_audit as audit

    cache = evaluation.cache(project.paths)
    try:
        judge, model = evaluation.judge(cache)
        frame = audit(verdicts, items, judge)
    finally:
        cache.close()
    return dg.Output(frame, metadata={**table_metadata(frame), "judge_model": model or "(none)",
                                      "audit": dg.MetadataValue.md(markdown_table(frame.round(3)))})


@dg.asset(
    group_name="scoring", kinds={"html", "markdown"}, code_version="1", automation_condition=CROSS_CLIP,
    deps=["scores", "paired_comparisons", "over_marking", "shortcut_audit", "judge_audit", "caption_scores"],
    ins={"verdicts": dg.AssetIn(partition_mapping=ALL_CLIPS)},
    description="The human report (Markdown and a self-contained HTML page with plots) under data/reports/.",
)
def report(project: ProjectResource, verdicts: pd.DataFrame) -> dg.MaterializeResult:
    from ...reporting.report import load_table, main_table as report_main_table, write_report

    paths = project.paths
    tables = {name: load_table(paths, name) for name in ("scores", "paired_comparisons", "over_marking",
                                                         "shortcut_audit", "judge_audit", "caption_scores",
                                                         "caption_alignments")}
    captions = {"caption_scores": tables["caption_scores"], "caption_alignments": tables["caption_alignments"]}
    md, html = write_report(paths.reports, tables["scores"], tables["paired_comparisons"], tables["over_marking"],
                            tables["shortcut_audit"], verdicts, tables["judge_audit"], **captions)
    return dg.MaterializeResult(metadata={  # the report's main table, not a second build of the report
        "markdown": dg.MetadataValue.path(str(md)), "html": dg.MetadataValue.path(str(html)),
        "main_table": dg.MetadataValue.md(markdown_table(report_main_table(tables["scores"]), 80)),
    })
