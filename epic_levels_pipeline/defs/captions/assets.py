"""The caption track: reference structures, structured captions, alignments and scores (docs/design/captions.md).

Thin wiring of :mod:`epic_levels_pipeline.captions`; every table goes through the IO manager.
"""

import dagster as dg
import pandas as pd

from ...annotations.catalogue import Catalogue
from ...annotations.clips import Clip
from ...captions import track
from ...captions.models import model_caption_responses
from ...responses.runner import ClipMediaInfo
from ..automation import CROSS_CLIP, PER_CLIP
from ..evaluation import EvaluationResource
from ..judging import caption_judges
from ..metadata import ClipBatch, counts_markdown, markdown_table, table_metadata
from ..partitions import CLIP_BACKFILL, clip_in, clip_partitions
from ..resources import ProjectResource

ALL_CLIPS = dg.AllPartitionMapping()


def _bullets(lines: list[str]) -> dg.MetadataValue:
    return dg.MetadataValue.md("\n".join(f"- {line}" for line in lines)[:20000] or "_(none)_")


@dg.asset(
    partitions_def=clip_partitions, automation_condition=PER_CLIP, group_name="captions", kinds={"python", "parquet"},
    code_version="1", backfill_policy=CLIP_BACKFILL, ins={"clip_annotations": clip_in(), "entity_catalogue": dg.AssetIn()},
    check_specs=[dg.AssetCheckSpec("reference_structure_valid", asset="caption_references", blocking=True,
                                   description="Unique ids, spans inside the clip, every link between existing units "
                                               "of the right kinds, event→action links with positive overlap.")],
    description="The clip's reference structure from its annotation rows, times from the window start: events "
                "(EPIC-SOUNDS segments), actions (narrations; HD-EPIC object movements), references (named "
                "entities; HD-EPIC objects) and links (event→action by overlap, action→reference).",
)
def caption_references(context: dg.AssetExecutionContext, clip_annotations: dict[str, pd.DataFrame],
                       entity_catalogue: Catalogue):
    clips = ClipBatch(context)
    problems, notes = [], []  # a batch's problems and notes name their clip
    for key in clips:
        clip, rows = Clip.from_key(key), clip_annotations[key]
        frame = track.caption_references(clip, rows, entity_catalogue)
        info = track.reference_metadata(clip, rows, entity_catalogue)
        problems += [f"{key}: {p}" if clips.batch else p for p in info["problems"]]
        notes += [f"{key}: {n}" if clips.batch else n for n in info["notes"]]
        meta = clips.metadata(frame, ["kind", "unit_id", "start_s", "stop_s", "label", "linked_ids", "source_id"], 10)
        meta.update({k: dg.MetadataValue.int(info[k]) for k in ("events", "actions", "references", "links")})
        clips.add(key, frame, meta)
    yield dg.AssetCheckResult(check_name="reference_structure_valid", asset_key="caption_references",
                              passed=not problems, metadata={"problems": _bullets(problems)})
    if problems:
        raise dg.Failure(description=f"{len(problems)} problem(s) in the reference structure of {', '.join(clips.keys)}; "
                                     "the last good one is kept", metadata={"problems": _bullets(problems)})
    yield clips.output(extra={"notes": _bullets(notes)})


@dg.asset(
    partitions_def=clip_partitions, automation_condition=PER_CLIP, group_name="captions",
    kinds={"python", "gemini", "parquet"}, code_version="3", pool="model_calls", backfill_policy=CLIP_BACKFILL,
    ins={"caption_references": clip_in(), "entity_catalogue": dg.AssetIn(), "clip_media": clip_in(),
         "clip_annotations": clip_in()},
    description="One structured caption per clip × condition × responder (silenced where the clip's annotation rows "
                "make its audio annotated): the offline caption responders and, "
                "when models are configured, each model through the QA track's call runner and cache with the "
                "caption JSON schema (one request per clip × condition).",
)
def caption_responses(context: dg.AssetExecutionContext, project: ProjectResource, evaluation: EvaluationResource,
                      caption_references: dict[str, pd.DataFrame], entity_catalogue: Catalogue,
                      clip_media: dict[str, pd.DataFrame], clip_annotations: dict[str, pd.DataFrame]):
    clips = ClipBatch(context)
    cache = evaluation.cache(project.paths)
    try:
        runs = evaluation.model_runs(cache)
        for key in clips:
            clip, streams = Clip.from_key(key), clip_annotations[key]["stream"]
            frames = [track.caption_responses(clip, caption_references[key], entity_catalogue,
                                              evaluation.caption_offline(), seed=project.seed, streams=streams)]
            calls = []
            media = ClipMediaInfo.from_table(clip_media[key])
            for run in runs:
                frame, stats = model_caption_responses(clip, media, run, streams)
                frames.append(frame)
                if stats is not None:
                    calls.append({"model": run.model, "requests": stats.requests, "cache_hits": stats.cache_hits,
                                  "calls_made": stats.calls_made, "retries": stats.retries, "errors": stats.errors})
            out = pd.concat([f for f in frames if len(f)], ignore_index=True) if any(len(f) for f in frames) \
                else frames[0]
            clips.add(key, out, _responses_metadata(clips, out, calls))
    finally:
        cache.close()
    return clips.output()


def _responses_metadata(clips: ClipBatch, out: pd.DataFrame, calls: list[dict]) -> dict:
    meta = clips.metadata(out, ["condition", "responder", "model", "status", "reply"], 6)
    if clips.batch:  # a batch's shared metadata keeps the counts (batch_metadata)
        return meta
    by_status = out.groupby(["responder", "model", "condition", "status"]).size().rename("rows").reset_index()
    failed = out[out["status"] != "ok"]
    meta.update({"by_status": dg.MetadataValue.md(markdown_table(by_status, 80)),
                 "not_ok_reasons": dg.MetadataValue.md(counts_markdown(failed["error"].fillna("").value_counts().to_dict())),
                 "model_calls": dg.MetadataValue.md(markdown_table(pd.DataFrame(calls)))})
    return meta


@dg.multi_asset(
    partitions_def=clip_partitions, group_name="captions", can_subset=False, pool="model_calls",
    backfill_policy=CLIP_BACKFILL,
    ins={"caption_references": clip_in(), "caption_responses": clip_in(), "entity_catalogue": dg.AssetIn()},
    outs={
        "caption_alignments": dg.AssetOut(kinds={"python", "parquet"}, code_version="1", automation_condition=PER_CLIP,
                                          description="Every matched and unmatched unit of every caption (greedy and "
                                                      "Hungarian), with its tIoU and label verdict (rule or judge)."),
        "caption_response_scores": dg.AssetOut(kinds={"python", "parquet"}, code_version="1",
                                               automation_condition=PER_CLIP,
                                               description="Per caption × matcher: parsed or why not, structural rule "
                                                           "counts, and every metric (an unparsable reply scores 0)."),
        "caption_judge_partials": dg.AssetOut(
            kinds={"python", "parquet"}, code_version="1", automation_condition=PER_CLIP,
            description="Per caption (greedy) × judge × label and semantic metric, as that judge alone would have made "
                        "it, when several judges are asked (empty otherwise): the caption track's judge-swap input."),
        "caption_judge_votes": dg.AssetOut(
            kinds={"python", "parquet"}, code_version="1", automation_condition=PER_CLIP,
            description="Every judge's answer about the clip's label pairs and semantic pairs, when several judges "
                        "are asked (empty otherwise): the caption track's agreement between judges."),
        "caption_threshold_partials": dg.AssetOut(
            kinds={"python", "parquet"}, code_version="1", automation_condition=PER_CLIP,
            description="Per caption × tIoU setting (event 0.1–0.5, action 0.1–0.7, the other at its default): the "
                        "greedy metrics caption_threshold_sensitivity averages over clips, written with the clip so "
                        "the sweep never re-scores other clips."),
    },
)
def caption_alignments(context: dg.AssetExecutionContext, project: ProjectResource, evaluation: EvaluationResource,
                       caption_references: dict[str, pd.DataFrame], caption_responses: dict[str, pd.DataFrame],
                       entity_catalogue: Catalogue):
    clips = ClipBatch(context, ("caption_alignments", "caption_response_scores", "caption_judge_partials",
                                "caption_judge_votes", "caption_threshold_partials"))
    cache = evaluation.cache(project.paths)
    try:
        panel, judge_model = caption_judges(evaluation, cache)
        for key in clips:
            judge = panel.fresh() if panel is not None else None  # one panel per clip: its votes are the clip's
            alignments, scored = track.caption_alignments(caption_references[key], caption_responses[key],
                                                          entity_catalogue, judge)
            for name, frame in (("caption_judge_partials", track.caption_judge_partials(
                                     caption_references[key], caption_responses[key], entity_catalogue, judge)),
                                ("caption_judge_votes", track.caption_judge_votes(judge).assign(clip_key=key))):
                clips.add(key, frame, clips.metadata(frame, output=name), name)
            sweep = track.caption_threshold_partials(caption_references[key], caption_responses[key],
                                                     entity_catalogue, judge)
            clips.add(key, sweep, clips.metadata(sweep, ["unit", "threshold", "condition", "responder", "action_f1"], 6,
                                                 "caption_threshold_partials"), "caption_threshold_partials")
            greedy = scored[scored["matcher"] == "greedy"]
            summary = greedy.groupby(["responder", "model", "condition"], sort=False)[track.MAIN_METRICS].mean().round(3).reset_index()
            verdicts = alignments.groupby(["matcher", "unit", "verdict", "verdict_by"], dropna=False).size().rename("units").reset_index()
            unparsed = greedy[~greedy["parsed"].astype(bool)]
            meta = table_metadata(alignments, ["responder", "condition", "matcher", "unit", "ref_id", "resp_id", "tiou", "verdict"], 8)
            meta.update({"per_responder": dg.MetadataValue.md(markdown_table(summary, 60)),
                         "verdicts": dg.MetadataValue.md(markdown_table(verdicts, 60)),
                         "judge_model": judge_model or "(none: undecided label pairs count as not agreeing, and are counted)",
                         "undecided": dg.MetadataValue.int(int(greedy["n_undecided"].sum())),
                         "judged": dg.MetadataValue.int(int(greedy["n_judged"].sum())),
                         "semantic": (f"{int(greedy[track.SEMANTIC_PAIR_COUNTS].sum().sum())} aligned pairs scored, "
                                      f"{int(greedy['n_semantic_unscored'].sum())} not (judge failed or could not tell)")
                         if judge is not None else track.NO_JUDGE_NOTE})
            clips.add(key, alignments, meta, "caption_alignments")
            clips.add(key, scored, {
                **table_metadata(scored, ["responder", "model", "condition", "matcher", "parsed", "event_f1", "action_f1"], 8),
                "unparsed": dg.MetadataValue.int(len(unparsed)),
                "unparsed_reasons": dg.MetadataValue.md(counts_markdown(unparsed["parse_error"].fillna("").value_counts().to_dict()))},
                "caption_response_scores")
    finally:
        cache.close()
    for name in clips.tables:
        yield clips.output(name)


@dg.asset(
    group_name="captions", kinds={"pandas", "duckdb"}, code_version="1", automation_condition=CROSS_CLIP,
    ins={"caption_response_scores": dg.AssetIn(partition_mapping=ALL_CLIPS)},
    check_specs=[dg.AssetCheckSpec("oracle_scores_one", asset="caption_scores", blocking=True,
                                   description="The oracle scores 1.0 on every metric under clip (both matchers), "
                                               "parses and breaks no structural rule: the track's self-test.")],
    description="Mean of each caption metric over the captions where it applies (n), per responder × model × "
                "condition × dataset ('*': both) × matcher, long form.",
)
def caption_scores(caption_response_scores: pd.DataFrame):
    problems = track.oracle_problems(caption_response_scores)
    yield dg.AssetCheckResult(check_name="oracle_scores_one", asset_key="caption_scores", passed=not problems,
                              metadata={"problems": _bullets(problems[:200])})
    if problems:
        raise dg.Failure(description=f"the caption oracle does not score 1.0 ({len(problems)} problem(s)); "
                                     "the last good caption_scores is kept", metadata={"problems": _bullets(problems[:200])})
    frame = track.caption_scores(caption_response_scores)
    greedy = caption_response_scores[caption_response_scores["matcher"] == "greedy"]
    unparsed = greedy[~greedy["parsed"].astype(bool)]
    meta = table_metadata(frame)
    meta.update({"main_table": dg.MetadataValue.md(markdown_table(track.main_table(frame), 80)),
                 "clips": dg.MetadataValue.int(int(greedy["clip_key"].nunique())),
                 "captions": dg.MetadataValue.int(len(greedy)),
                 "unparsed_scored_zero": dg.MetadataValue.md(markdown_table(
                     unparsed.groupby(["responder", "model", "condition"]).size().rename("captions").reset_index()))})
    yield dg.Output(frame, metadata=meta)


@dg.asset(
    group_name="captions", kinds={"pandas", "duckdb"}, code_version="2", automation_condition=CROSS_CLIP,
    ins={"caption_threshold_partials": dg.AssetIn(partition_mapping=ALL_CLIPS)},
    description="Greedy scores with the event tIoU swept 0.1–0.5 and the action tIoU 0.1–0.7, and the Spearman ρ of "
                "the responder ranking at each threshold against the ranking at the defaults (the mean of every "
                "clip's caption_threshold_partials).",
)
def caption_threshold_sensitivity(caption_threshold_partials: pd.DataFrame) -> dg.Output[pd.DataFrame]:
    frame = track.sensitivity_from_partials(caption_threshold_partials)
    rho = frame.groupby(["unit", "metric"])["spearman_rho"].min().round(3).rename("min_spearman_rho").reset_index()
    return dg.Output(frame, metadata={**table_metadata(frame), "min_rho": dg.MetadataValue.md(markdown_table(rho, 40))})
