"""HD-EPIC's VQA benchmark as a source: its import, then per video (the bootstrap cluster and unit of media) the same
steps as a clip's — items → responses → verdicts → partials — combined by ``scores`` into rows of dataset
``hd_epic_vqa``. With no VQA files the import writes empty tables and says why, and nothing else runs."""

import dagster as dg
import pandas as pd

from ...annotations.clips import Clip
from ...imports import vqa_official
from ...reporting.vqa_sections import published_layout
from ...imports.vqa_reading import DATASET, VqaFileError
from ...imports.vqa_source import answer_pools, load_source
from ...responses.imported import imported_responses
from ...responses.runner import ClipMediaInfo, model_responses
from ...scoring.metrics import partials as clip_partial
from ...scoring.verdicts import verdicts as make_verdicts
from ..evaluation import EvaluationResource
from ..judging import qa_judge
from ..metadata import ClipBatch, counts_markdown, markdown_table, table_metadata
from ..automation import CROSS_CLIP
from ..partitions import MAX_CLIPS_PER_RUN, clip_in
from ..resources import ProjectResource

#: One dynamic partition per video of the imported questions: ``hd_epic_vqa__<video id>``.
vqa_partitions = dg.DynamicPartitionsDefinition(name=DATASET)
VQA_BACKFILL = dg.BackfillPolicy.multi_run(max_partitions_per_run=MAX_CLIPS_PER_RUN)
NO_MEDIA = "imported question: no clip is cut for HD-EPIC VQA inputs (text-only no_clip runs)"
IMPORT_TABLES = ("hd_epic_vqa_questions", "hd_epic_vqa_all_items", "hd_epic_vqa_import_report", "hd_epic_vqa_skipped")
PARTIAL_TABLES = ("hd_epic_vqa_score_partials", "hd_epic_vqa_pair_partials")
PER_VIDEO_TABLES = ("hd_epic_vqa_items", "hd_epic_vqa_responses", "hd_epic_vqa_verdicts", *PARTIAL_TABLES,
                    "hd_epic_vqa_official_partials")
CROSS_VIDEO_TABLES = ("vqa_official_scores",)
GROUP = "hd_epic_vqa"


class VqaImportConfig(dg.Config):
    """``strict``: refuse the whole import when any question cannot be converted (as ``import-mcq --strict``)."""

    strict: bool = False


@dg.multi_asset(
    group_name=GROUP, can_subset=False,
    outs={
        "hd_epic_vqa_questions": dg.AssetOut(kinds={"pandas", "parquet"}, code_version="1",
                                             description="Every imported VQA question (one base question each)."),
        "hd_epic_vqa_all_items": dg.AssetOut(kinds={"pandas", "parquet"}, code_version="3",
                                             description="Every imported question in its formats (what each "
                                                         "video's hd_epic_vqa_items holds)."),
        "hd_epic_vqa_import_report": dg.AssetOut(kinds={"pandas", "parquet"}, code_version="1",
                                                 description="Per VQA file: questions read, imported, skipped by "
                                                             "reason, open / option judgement split."),
        "hd_epic_vqa_skipped": dg.AssetOut(kinds={"pandas", "parquet"}, code_version="1",
                                           description="Every question skipped as unconvertible, with its reason."),
    },
)
def hd_epic_vqa_import(context: dg.AssetExecutionContext, config: VqaImportConfig, project: ProjectResource):
    """Import ``vqa-benchmark/*.json`` of HD-EPIC under the annotations root (none: empty tables, and why);
    register one partition per video."""
    try:
        source = load_source(project.paths.annotations, strict=config.strict, seed=project.seed)
    except VqaFileError as exc:
        raise dg.Failure(description=f"{len(exc.problems)} problem(s) in the VQA files; nothing imported",
                         metadata={"problems": dg.MetadataValue.md("\n".join(f"- `{p}`" for p in exc.problems[:200]))})
    wanted = source.partitions
    existing = set(context.instance.get_dynamic_partitions(vqa_partitions.name))
    new = [k for k in wanted if k not in existing]
    if new:
        context.instance.add_dynamic_partitions(vqa_partitions.name, new)
    for key in sorted(existing - set(wanted)):
        context.instance.delete_dynamic_partition(vqa_partitions.name, key)
    note = source.note or f"{len(source.files)} files in {source.folder}"
    if source.note:
        context.log.info(source.note)
    common = {"source": note, "videos": dg.MetadataValue.int(len(wanted)),
              "skipped_by_reason": dg.MetadataValue.md(counts_markdown(source.skipped_by_reason()))}
    report = source.report
    totals = {c: int(report[c].sum()) for c in report.columns if c.startswith("n_")} if len(report) else {}
    yield dg.Output(source.questions, output_name="hd_epic_vqa_questions",
                    metadata={**table_metadata(source.questions, ["question_id", "prototype", "level", "base_format"]),
                              **common})
    yield dg.Output(source.items, output_name="hd_epic_vqa_all_items",
                    metadata={**table_metadata(source.items, ["item_id", "format", "expected", "chance"]), **common,
                              "by_format": dg.MetadataValue.md(counts_markdown(
                                  source.items["format"].value_counts().to_dict(), "format", "items"))})
    yield dg.Output(report, output_name="hd_epic_vqa_import_report",
                    metadata={**table_metadata(report), **common,
                              "totals": dg.MetadataValue.md(counts_markdown(totals, "count", "questions"))})
    yield dg.Output(source.skipped, output_name="hd_epic_vqa_skipped",
                    metadata={**table_metadata(source.skipped), **common})


@dg.asset(
    partitions_def=vqa_partitions, group_name=GROUP, kinds={"pandas", "parquet"}, code_version="3",
    backfill_policy=VQA_BACKFILL, ins={"hd_epic_vqa_all_items": dg.AssetIn()},
    description="A video's imported items: yes_no, multiple_choice, official_mcq (the question as its authors ask "
                "it), open or option_judgement, open_with_reason (the format registry's templates; no statements "
                "item: nothing verifies a second statement).",
)
def hd_epic_vqa_items(context: dg.AssetExecutionContext, hd_epic_vqa_all_items: pd.DataFrame):
    clips = ClipBatch(context)
    by_video = dict(tuple(hd_epic_vqa_all_items.groupby("clip_key", sort=False)))
    for key in clips:
        frame = by_video.get(key, hd_epic_vqa_all_items.iloc[:0]).reset_index(drop=True)
        clips.add(key, frame, clips.metadata(frame, ["item_id", "format", "expected", "chance"], 6))
    return clips.output()


@dg.asset(
    partitions_def=vqa_partitions, group_name=GROUP, kinds={"python", "parquet"}, code_version="1",
    pool="model_calls", backfill_policy=VQA_BACKFILL,
    ins={"hd_epic_vqa_items": clip_in(), "hd_epic_vqa_questions": dg.AssetIn()},
    description="Every imported item under clip and no_clip from the offline responders that apply to imported "
                "questions (oracle, chance, blind; presence is skipped: it needs annotations) and the models "
                "(no_clip as text; clip skipped until VQA media are cut), as the clips' responses.",
)
def hd_epic_vqa_responses(context: dg.AssetExecutionContext, evaluation: EvaluationResource,
                          project: ProjectResource, hd_epic_vqa_items: dict[str, pd.DataFrame],
                          hd_epic_vqa_questions: pd.DataFrame):
    clips = ClipBatch(context)
    pools = answer_pools(hd_epic_vqa_questions)
    cache = evaluation.cache(project.paths)
    try:
        runs = evaluation.model_runs(cache)
        media = ClipMediaInfo(reason=NO_MEDIA)
        for key in clips:
            items = hd_epic_vqa_items[key]
            frames = [imported_responses(items, evaluation.offline(), pools, seed=project.seed)]
            video = Clip(DATASET, key.split("__", 1)[-1], 0.0, 0.0)  # the conditions are the items' own (audio_annotated)
            frames += [model_responses(video, items, media, run, progress=context.log.info)[0] for run in runs]
            frames = [f for f in frames if len(f)] or frames[:1]
            out = pd.concat(frames, ignore_index=True)
            meta = clips.metadata(out, ["item_id", "condition", "responder", "status", "reply"], 6)
            if not clips.batch and len(out):
                status = out.groupby(["responder", "model", "condition", "status"]).size().rename("rows").reset_index()
                meta["by_status"] = dg.MetadataValue.md(markdown_table(status, 60))
            clips.add(key, out, meta)
    finally:
        cache.close()
    return clips.output()


@dg.asset(
    partitions_def=vqa_partitions, group_name=GROUP, kinds={"python", "parquet"}, code_version="1",
    pool="model_calls", backfill_policy=VQA_BACKFILL,
    ins={"hd_epic_vqa_responses": clip_in(), "hd_epic_vqa_items": clip_in()},
    description="One verdict per imported response, by the clips' rules (and judge, when one is named).",
)
def hd_epic_vqa_verdicts(context: dg.AssetExecutionContext, project: ProjectResource, evaluation: EvaluationResource,
                         hd_epic_vqa_responses: dict[str, pd.DataFrame], hd_epic_vqa_items: dict[str, pd.DataFrame]):
    clips = ClipBatch(context)
    cache = evaluation.cache(project.paths)
    try:
        judge, _ = qa_judge(evaluation, cache)
        for key in clips:
            frame = make_verdicts(hd_epic_vqa_responses[key], hd_epic_vqa_items[key], judge=judge,
                                  judge_seed=project.seed)
            clips.add(key, frame, {**clips.metadata(frame, ["item_id", "condition", "responder", "parsed", "correct",
                                                            "scored_by"], 6),
                                   "undecided": int((frame["scored_by"] == "undecided").sum()),
                                   "judge_failed": int((frame["scored_by"] == "judge_failed").sum())})
    finally:
        cache.close()
    return clips.output()


@dg.multi_asset(
    partitions_def=vqa_partitions, group_name=GROUP, can_subset=False, backfill_policy=VQA_BACKFILL,
    ins={"hd_epic_vqa_verdicts": clip_in()},
    outs={"hd_epic_vqa_score_partials": dg.AssetOut(kinds={"pandas", "parquet"}, code_version="1",
                                                    description="A video's score_partials (what scores combines)."),
          "hd_epic_vqa_pair_partials": dg.AssetOut(kinds={"pandas", "parquet"}, code_version="2",
                                                   description="A video's pair_partials (formats of one question, "
                                                               "clip against no_clip, models on one item).")},
)
def hd_epic_vqa_partials(context: dg.AssetExecutionContext, hd_epic_vqa_verdicts: dict[str, pd.DataFrame]):
    made = {"hd_epic_vqa_score_partials": clip_partial.score_partials,
            "hd_epic_vqa_pair_partials": clip_partial.pair_partials}
    clips = ClipBatch(context, tuple(made))
    for name, build in made.items():
        for key in clips:
            frame = build(hd_epic_vqa_verdicts[key])
            clips.add(key, frame, clips.metadata(frame, output=name), name)
        yield clips.output(name)


@dg.asset(
    partitions_def=vqa_partitions, group_name=GROUP, kinds={"pandas", "parquet"}, code_version="1",
    backfill_policy=VQA_BACKFILL, ins={"hd_epic_vqa_responses": clip_in(), "hd_epic_vqa_items": clip_in()},
    description="A video's official_mcq replies counted per responder/model × condition × question type, read by "
                "the authors' letter rule (first A–Z character as written) and by lmms-eval's (upper-cased): "
                "right, unreadable, failed (counted wrong), skipped (what vqa_official_scores combines).",
)
def hd_epic_vqa_official_partials(context: dg.AssetExecutionContext, hd_epic_vqa_responses: dict[str, pd.DataFrame],
                                  hd_epic_vqa_items: dict[str, pd.DataFrame]):
    clips = ClipBatch(context)
    for key in clips:
        frame = vqa_official.official_partials(hd_epic_vqa_responses[key], hd_epic_vqa_items[key])
        clips.add(key, frame, clips.metadata(frame))
    return clips.output()


@dg.asset(
    group_name=GROUP, kinds={"pandas", "duckdb"}, code_version="1", automation_condition=CROSS_CLIP,
    ins={"hd_epic_vqa_official_partials": dg.AssetIn(partition_mapping=dg.AllPartitionMapping())},
    description="HD-EPIC's VQA benchmark by its authors' protocol: accuracy per responder/model × condition × question "
                "type by their letter rule (failed calls wrong, unreadable replies counted), each category the "
                "unweighted mean of its types, the headline the unweighted mean of the categories (the paper's "
                "Avg.), the pooled accuracy beside them, lmms-eval's reading as a variant; intervals resample videos.",
)
def vqa_official_scores(project: ProjectResource, hd_epic_vqa_official_partials: pd.DataFrame
                        ) -> dg.Output[pd.DataFrame]:
    frame = vqa_official.official_scores(hd_epic_vqa_official_partials, seed=project.seed)
    layout = published_layout(frame)
    return dg.Output(frame, metadata={**table_metadata(frame),
                                      "published_layout": dg.MetadataValue.md(markdown_table(layout, 40))})
