"""Scoring: verdicts per clip (rules first, judge when configured) and the clip's partial results, then the
cross-clip scored tables, combined from the partials of every clip (``scoring.metrics.partials``): a changed
clip re-runs its own steps, and the combine reads small tables instead of every verdict."""

import dagster as dg
import pandas as pd

from ...imports.vqa_source import source_scores
from ...scoring.verdicts import JudgePanel, verdicts as make_verdicts
from ...scoring.metrics import partials as clip_partial
from ...scoring.metrics.tables import PRIOR_MIN_N, prior_shortcuts, prior_shortcuts_holm
from ..evaluation import EvaluationResource
from ..judging import qa_judge
from ..metadata import ClipBatch, counts_markdown, markdown_table, table_metadata
from ..automation import CROSS_CLIP, PER_CLIP
from ..partitions import CLIP_BACKFILL, clip_in, clip_partitions
from ..resources import ProjectResource

ALL_CLIPS = dg.AllPartitionMapping()
# The per-clip partial tables (columns: scoring.metrics.partials.PARTIAL_COLUMNS), one asset each.
CLIP_PARTIALS = tuple(clip_partial.PARTIAL_COLUMNS)
PARTIAL_DESCRIPTIONS = {
    "score_partials": "Per clip: counted verdicts, correct, undecided, unparsed, skipped, error, judge and 4b "
                      "over-marking counts per responder/model × dataset × level × subtype × strategy × format × "
                      "condition × item chance (what scores, over_marking and the shortcut audit's gaps combine).",
    "pair_partials": "Per clip: the paired counts (both, only A, only B, neither) and chance sums of every format "
                     "pair and condition pair, per responder/model × level, and of every pair of models on the same "
                     "items per level × condition × format (what paired_comparisons combines).",
    "prior_partials": "Per clip: items per subtype × strategy × format × text-only prior × chance × expected prior "
                      "credit (what the shortcut audit's prior rows combine).",
    "presence_partials": "Per clip: questions and presence-oracle sums per subtype × strategy.",
    "judge_partials": "Per clip: its candidates for the judge audit's seeded sample (smallest sample keys per "
                      "responder/model), with the item's options and prompt.",
    "judge_vote_partials": "Per clip: every judge's answer about each reply the rules could not decide (one row per "
                           "reply x judge), for the agreement between judges and the judge-swap sensitivity.",
}

PARTIAL_CODE_VERSIONS = {"pair_partials": "2"}  # the partial tables whose logic changed since their first version


@dg.asset(
    partitions_def=clip_partitions, automation_condition=PER_CLIP, group_name="scoring", kinds={"python", "parquet"}, code_version="1",
    pool="model_calls", ins={"responses": clip_in(), "items": clip_in()}, backfill_policy=CLIP_BACKFILL,
    description="One verdict per response: parsed answer, correct, and whether it was scored by rule, by the "
                "judge (one, or the configured one / the majority of several, every judge's answer in judge_votes), "
                "could not be parsed, stayed undecided (no judge configured, or judges split) or the judge failed.",
)
def verdicts(context: dg.AssetExecutionContext, project: ProjectResource, evaluation: EvaluationResource,
             responses: dict[str, pd.DataFrame], items: dict[str, pd.DataFrame]):
    clips = ClipBatch(context)
    cache = evaluation.cache(project.paths)
    try:
        judge, judge_model = qa_judge(evaluation, cache)
        for key in clips:
            frame = make_verdicts(responses[key], items[key], judge=judge, judge_seed=project.seed)
            meta = clips.metadata(frame, ["item_id", "condition", "responder", "parsed", "expected", "correct",
                                          "scored_by"], 6)
            meta["undecided"] = int((frame["scored_by"] == "undecided").sum())
            meta["judge_failed"] = int((frame["scored_by"] == "judge_failed").sum())
            if not clips.batch:  # a batch's shared metadata keeps the counts (batch_metadata)
                by = frame.groupby(["responder", "model", "scored_by"]).size().rename("rows").reset_index()
                meta.update({"scored_by": dg.MetadataValue.md(markdown_table(by, 60)),
                             "judge_model": judge_model or "(none: undecided rows are reported, not counted)"})
            clips.add(key, frame, meta)
    finally:
        cache.close()
    return clips.output()


@dg.multi_asset(
    partitions_def=clip_partitions, group_name="scoring", can_subset=False, backfill_policy=CLIP_BACKFILL,
    ins={"verdicts": clip_in(), "questions": clip_in(), "items": clip_in()},
    outs={name: dg.AssetOut(kinds={"pandas", "parquet"}, code_version=PARTIAL_CODE_VERSIONS.get(name, "1"),
                            automation_condition=PER_CLIP, description=PARTIAL_DESCRIPTIONS[name])
          for name in CLIP_PARTIALS},
)
def clip_partials(context: dg.AssetExecutionContext, project: ProjectResource, verdicts: dict[str, pd.DataFrame],
                  questions: dict[str, pd.DataFrame], items: dict[str, pd.DataFrame]):
    clips = ClipBatch(context, CLIP_PARTIALS)
    for key in clips:
        for name, frame in clip_partial.clip_partials(verdicts[key], questions[key], items[key], seed=project.seed).items():
            clips.add(key, frame, clips.metadata(frame, output=name), name)
    for name in CLIP_PARTIALS:
        yield clips.output(name)


def main_table(scores: pd.DataFrame) -> pd.DataFrame:
    """Chance-corrected accuracy by level × format, per responder/model and condition (all datasets)."""
    top = scores[(scores["dataset"] == "*") & (scores["subtype"] == "*")]
    table = top.pivot_table(index=["responder", "model", "condition", "level"], columns="format",
                            values="chance_corrected", aggfunc="first")
    return table.round(3).reset_index()


@dg.asset(
    group_name="scoring", kinds={"pandas", "duckdb"}, code_version="2", automation_condition=CROSS_CLIP,
    ins={"score_partials": dg.AssetIn(partition_mapping=ALL_CLIPS),
         "hd_epic_vqa_score_partials": dg.AssetIn(partition_mapping=ALL_CLIPS)},
    description="n, accuracy, chance, chance-corrected accuracy and its clip-clustered 95 % bootstrap interval "
                "per responder/model × dataset × level × subtype × format × condition, with '*' roll-ups; then "
                "the imported questions' own rows (dataset hd_epic_vqa, level imported:<category>, clustered by "
                "video, never pooled into the '*' datasets).",
)
def scores(project: ProjectResource, score_partials: pd.DataFrame, hd_epic_vqa_score_partials: pd.DataFrame
           ) -> dg.Output[pd.DataFrame]:
    frame = clip_partial.scores_from_partials(score_partials, seed=project.seed)
    imported = source_scores(hd_epic_vqa_score_partials, seed=project.seed)
    if len(imported):
        frame = pd.concat([frame, imported], ignore_index=True) if len(frame) else imported
    sums = score_partials.reindex(columns=["n", "n_judge", "n_unparsed", "n_undecided", "n_skipped", "n_error",
                                           "n_judge_failed"]).fillna(0).sum()
    counts = {"rule": int(sums["n"] - sums["n_judge"] - sums["n_unparsed"])}
    counts.update({kind: int(sums[f"n_{kind}"]) for kind in ("judge", "unparsed", "undecided", "judge_failed",
                                                               "skipped", "error")})
    meta = table_metadata(frame)
    meta.update({"main_table": dg.MetadataValue.md(markdown_table(main_table(frame), 80)),
                 "rule_judge_counts": dg.MetadataValue.md(counts_markdown({k: c for k, c in counts.items() if c},
                                                                          "scored_by", "verdicts"))})
    return dg.Output(frame, metadata=meta)


@dg.asset(
    group_name="scoring", kinds={"pandas", "duckdb"}, code_version="3", automation_condition=CROSS_CLIP,
    ins={"pair_partials": dg.AssetIn(partition_mapping=ALL_CLIPS)},
    description="Paired comparisons on the same base questions: every pair of formats, clip vs no_clip and clip vs "
                "silenced, and every pair of models on the same items (kind model, per level × condition × format); "
                "both/only-A/only-B counts, clip-clustered McNemar p (and the unclustered one), difference with a "
                "clip-clustered interval.",
)
def paired_comparisons(project: ProjectResource, pair_partials: pd.DataFrame) -> dg.Output[pd.DataFrame]:
    frame = clip_partial.paired_from_partials(pair_partials, seed=project.seed)
    cond = frame[(frame["kind"] == "condition") & (frame["level"] == "*")]
    models = frame[(frame["kind"] == "model") & (frame["level"] == "*") & (frame["format"] == "*")]
    shown = ["condition", "a", "b", "n_pairs", "diff", "diff_ci_low", "diff_ci_high", "mcnemar_p"]
    return dg.Output(frame, metadata={**table_metadata(frame),
                                      "conditions": dg.MetadataValue.md(markdown_table(cond.round(3), 40)),
                                      "models": dg.MetadataValue.md(markdown_table(models[shown].round(3), 40))})


@dg.asset(
    group_name="scoring", kinds={"pandas", "duckdb"}, code_version="1", automation_condition=CROSS_CLIP,
    ins={"score_partials": dg.AssetIn(partition_mapping=ALL_CLIPS)},
    description="4b over-marking: among wrong option-judgement answers, the share with more than one option "
                "marked true (Liu et al. 2025 report 63–86 %).",
)
def over_marking(score_partials: pd.DataFrame) -> dg.Output[pd.DataFrame]:
    frame = clip_partial.over_marking_from_partials(score_partials)
    return dg.Output(frame, metadata={**table_metadata(frame), "table": dg.MetadataValue.md(markdown_table(frame.round(3)))})


@dg.asset(
    group_name="scoring", kinds={"pandas", "duckdb"}, code_version="2", automation_condition=CROSS_CLIP,
    ins={name: dg.AssetIn(partition_mapping=ALL_CLIPS) for name in ("presence_partials", "score_partials",
                                                                      "prior_partials")},
    description="Shortcut audit per subtype × distractor strategy × responder/model: presence-oracle rate (no model "
                "needed), blind gap (no-clip accuracy − chance), silenced gap (clip − silenced accuracy), and the "
                "text-only priors: blind (most frequent option) and anti-prior (least frequent) rates with "
                "clip-clustered intervals, in multiple choice and yes/no.",
    check_specs=[dg.AssetCheckSpec("prior_shortcut", asset="shortcut_audit", blocking=False,
                                   description=f"No blind or anti-prior rate differs from chance after Holm's "
                                               f"correction over every subtype × strategy × format with n ≥ "
                                               f"{PRIOR_MIN_N} (the uncorrected flags are in the metadata).")],
)
def shortcut_audit(project: ProjectResource, presence_partials: pd.DataFrame, score_partials: pd.DataFrame,
                   prior_partials: pd.DataFrame):
    priors = clip_partial.priors_from_partials(prior_partials, seed=project.seed)
    frame = clip_partial.shortcut_audit_from_partials(presence_partials, score_partials, priors)
    presence = frame.drop_duplicates(["dataset", "subtype", "distractor_strategy"])[
        ["dataset", "subtype", "level", "distractor_strategy", "n", "singles_out_key", "presence_oracle_rate", "chance"]]
    yield dg.Output(frame, metadata={**table_metadata(frame),
                                     "presence_oracle": dg.MetadataValue.md(markdown_table(presence.round(3), 40)),
                                     "priors": dg.MetadataValue.md(markdown_table(priors.round(3), 80))})
    yield prior_shortcut_check(priors)


def prior_shortcut_check(priors: pd.DataFrame) -> dg.AssetCheckResult:
    """The ``prior_shortcut`` check: passed unless a judged row differs from chance after Holm's correction. With
    some 100 judged rows at 95 % each, about five intervals exclude chance by chance alone: those uncorrected flags
    are reported (``flagged``, ``uncorrected_rows``) but warn only when a row survives the correction."""
    flagged, holm = prior_shortcuts(priors), prior_shortcuts_holm(priors)

    def rows(frame: pd.DataFrame) -> dg.MetadataValue:
        return dg.MetadataValue.md(markdown_table(frame.round(3), 40) if len(frame) else "_(none)_")

    return dg.AssetCheckResult(check_name="prior_shortcut", asset_key="shortcut_audit", passed=not len(holm),
                               severity=dg.AssetCheckSeverity.WARN,
                               metadata={"flagged_after_holm": len(holm), "rows": rows(holm),
                                         "judged": int((priors["n"] >= PRIOR_MIN_N).sum()) if len(priors) else 0,
                                         "flagged": len(flagged), "uncorrected_rows": rows(flagged)})


@dg.multi_asset(
    group_name="scoring", can_subset=False, pool="model_calls",
    ins={name: dg.AssetIn(partition_mapping=ALL_CLIPS) for name in ("judge_partials", "judge_vote_partials",
                                                                    "score_partials", "caption_judge_partials",
                                                                    "caption_judge_votes")},
    outs={
        "judge_audit": dg.AssetOut(
            kinds={"pandas", "gemini"}, code_version="2", automation_condition=CROSS_CLIP,
            description="Judge audit: on a seeded sample of open replies the rules decided, each judge's agreement "
                        "with the rules, and with itself under a second shuffle (position bias). Empty with a note "
                        "when no judge is configured."),
        "judge_agreement": dg.AssetOut(
            kinds={"pandas"}, code_version="1", automation_condition=CROSS_CLIP,
            description="Agreement between judges when several are asked: per pair of judges Cohen's kappa and "
                        "Krippendorff's alpha (and alpha over all), for the QA judge's choices, the caption labels "
                        "and the caption semantic scores. One row with a note when fewer than two judges."),
        "judge_swap": dg.AssetOut(
            kinds={"pandas"}, code_version="1", automation_condition=CROSS_CLIP,
            description="Judge-swap sensitivity: every responder/model's score with each judge's answers in place of "
                        "the verdict's (QA: chance-corrected, every format pooled; captions: label F1 and semantic "
                        "scores), the shift from the materialized score and the Spearman rho of the ranking."),
    },
)
def judge_audit(project: ProjectResource, evaluation: EvaluationResource, judge_partials: pd.DataFrame,
                judge_vote_partials: pd.DataFrame, score_partials: pd.DataFrame, caption_judge_partials: pd.DataFrame,
                caption_judge_votes: pd.DataFrame):
    from ...scoring import judge_audit as audits

    sample, items = clip_partial.judge_sample_from_partials(judge_partials)
    cache = evaluation.cache(project.paths)
    try:
        judge, model = qa_judge(evaluation, cache)
        judges = list(judge.judges.values()) if isinstance(judge, JudgePanel) else [judge]
        frame = pd.concat([audits.judge_audit(sample, items, j, seed=project.seed, judge_seed=project.seed)
                           for j in judges], ignore_index=True)
    finally:
        cache.close()
    agreement = audits.all_agreement(judge_vote_partials, caption_judge_votes)
    swap = audits.all_swaps(score_partials, judge_vote_partials, caption_judge_partials)
    yield dg.Output(frame, output_name="judge_audit",
                    metadata={**table_metadata(frame), "judge_model": model or "(none)",
                              "audit": dg.MetadataValue.md(markdown_table(frame.round(3)))})
    yield dg.Output(agreement, output_name="judge_agreement",
                    metadata={**table_metadata(agreement), "table": dg.MetadataValue.md(markdown_table(agreement.round(3)))})
    summary = swap[swap["judge"] != audits.VERDICT] if len(swap) else swap
    yield dg.Output(swap, output_name="judge_swap",
                    metadata={**table_metadata(swap), "shifts": dg.MetadataValue.md(markdown_table(summary.round(3), 60))})


@dg.asset(
    group_name="scoring", kinds={"html", "markdown"}, code_version="1", automation_condition=CROSS_CLIP,
    deps=["scores", "paired_comparisons", "over_marking", "shortcut_audit", "judge_audit", "caption_scores",
          "vqa_official_scores", "judge_agreement", "judge_swap", "media_integrity", "spend"],
    description="The human report (Markdown and a self-contained HTML page with plots) under data/reports/, from "
                "the cross-clip tables (verdict counts from the scores table, not every clip's verdicts).",
)
def report(project: ProjectResource) -> dg.MaterializeResult:
    from ...reporting.loading import caption_timeline_rows
    from ...reporting.report import CAPTION_SAMPLE_RESPONDER, load_table, main_table as report_main_table, write_report

    paths = project.paths
    tables = {name: load_table(paths, name) for name in ("scores", "paired_comparisons", "over_marking",
                                                         "shortcut_audit", "judge_audit", "caption_scores",
                                                         "vqa_official_scores", "judge_agreement", "judge_swap",
                                                         "media_integrity", "spend")}
    # the timelines' rows only: every clip's alignments would be read for two sample clips
    captions = {"caption_scores": tables["caption_scores"],
                "caption_alignments": caption_timeline_rows(paths, CAPTION_SAMPLE_RESPONDER)}
    md, html = write_report(paths.reports, tables["scores"], tables["paired_comparisons"], tables["over_marking"],
                            tables["shortcut_audit"], None, tables["judge_audit"], **captions,
                            vqa_official=tables["vqa_official_scores"], judge_agreement=tables["judge_agreement"],
                            judge_swap=tables["judge_swap"], media_integrity=tables["media_integrity"],
                            spend=tables["spend"])
    return dg.MaterializeResult(metadata={  # the report's main table, not a second build of the report
        "markdown": dg.MetadataValue.path(str(md)), "html": dg.MetadataValue.path(str(html)),
        "main_table": dg.MetadataValue.md(markdown_table(report_main_table(tables["scores"]), 80)),
    })
