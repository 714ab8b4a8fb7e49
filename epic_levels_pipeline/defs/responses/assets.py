"""Responses: clip media (cut and silenced with ffmpeg), and every item × condition × responder/model."""

from dataclasses import asdict

import dagster as dg
import pandas as pd

from ...annotations.catalogue import Catalogue
from ...annotations.clips import Clip
from ...plan import declaration_changes
from ...responses.cache import CallCache
from ...responses.media import prepare_clip_media
from ...responses.runner import ClipMediaInfo, integrity_table, model_responses, offline_responses
from ...responses.spend import spend_table
from ...sharing.replies import external_responses, stored_models
from ..evaluation import EvaluationResource
from ..metadata import ClipBatch, counts_markdown, markdown_table
from ..automation import CROSS_CLIP, PER_CLIP
from ..partitions import CLIP_BACKFILL, clip_in, clip_partitions
from ..resources import ProjectResource


@dg.asset(
    partitions_def=clip_partitions, automation_condition=PER_CLIP, group_name="responses", kinds={"ffmpeg", "parquet"}, code_version="1",
    backfill_policy=CLIP_BACKFILL,
    description="The clip window cut from its source video and a silenced copy (same video, digital silence). "
                "Clips without a source video are marked skipped with the reason; never a crash.",
)
def clip_media(context: dg.AssetExecutionContext, project: ProjectResource, evaluation: EvaluationResource):
    paths = project.paths
    clips, skipped = ClipBatch(context), {}
    for key in clips:
        clip = Clip.from_key(key)
        media = prepare_clip_media(evaluation.media_folder(paths), paths.media / "clips", clip.key, clip.dataset,
                                   clip.video_id, clip.start_s, clip.end_s)
        frame = pd.DataFrame([asdict(media)])
        if media.status != "ready":
            skipped.setdefault(media.reason or "no reason given", []).append(clip.key)
        clips.add(key, frame, {"status": media.status, "reason": media.reason or "",
                               "duration_s": media.duration_s or 0.0, **clips.metadata(frame)})
    # One log line for the step, not one per clip (each is an event stored in the run's log); every clip's
    # own status and reason are in its materialization's metadata.
    for reason, keys in skipped.items():
        context.log.info(f"media conditions skipped for {len(keys)} clip(s) ({reason}): {', '.join(keys)}")
    return clips.output()


@dg.asset(
    partitions_def=clip_partitions, automation_condition=PER_CLIP, group_name="responses", kinds={"python", "gemini", "parquet"}, code_version="1",
    pool="model_calls", backfill_policy=CLIP_BACKFILL,
    ins={"items": clip_in(), "questions": clip_in(), "clip_annotations": clip_in(),
         "entity_catalogue": dg.AssetIn(), "clip_media": clip_in()},
    description="Every item under every condition it is asked under (clip, no_clip, and silenced where its "
                "clip's audio is annotated: the items' audio_annotated) from each "
                "configured responder: the offline reference responders and the models; and, as responder "
                "`external`, every model of the replies store (data/replies/, `epic-levels import-replies`). "
                "Model calls are cached by content and persisted as they arrive.",
)
def responses(context: dg.AssetExecutionContext, project: ProjectResource, evaluation: EvaluationResource,
              items: dict[str, pd.DataFrame], questions: dict[str, pd.DataFrame],
              clip_annotations: dict[str, pd.DataFrame], entity_catalogue: Catalogue,
              clip_media: dict[str, pd.DataFrame]):
    clips = ClipBatch(context)
    cache = evaluation.cache(project.paths)
    try:
        runs = evaluation.model_runs(cache)
        imported = stored_models(project.paths.data)  # replies from other harnesses (`epic-levels import-replies`)
        for key in clips:
            clip, clip_items = Clip.from_key(key), items[key]
            frames = [offline_responses(clip, clip_items, questions[key], clip_annotations[key], entity_catalogue,
                                        evaluation.offline(), seed=project.seed)]
            call_stats = {}
            media = ClipMediaInfo.from_table(clip_media[key])
            for run in runs:
                frame, stats = model_responses(clip, clip_items, media, run, progress=context.log.info)
                frames.append(frame)
                if stats is not None:
                    call_stats[run.model] = stats
            frames.append(external_responses(key, clip_items, imported))
            out = pd.concat([f for f in frames if len(f)], ignore_index=True) if any(len(f) for f in frames) else frames[0]
            clips.add(key, out, _responses_metadata(clips, out, call_stats))
    finally:
        cache.close()
    current = {run.model: run.digest for run in runs}
    for line in declaration_changes(current, previous_models(project, list(clips)),
                                    f"the responses of these {len(clips)} clip(s)"):
        context.log.info(line)
    ignored = media_ignored(clips.tables[None].values())
    if ignored and evaluation.plan().strict_media:
        raise dg.Failure(description=f"--strict-media: {ignored[0]}" + (f" (and {len(ignored) - 1} more)" if len(ignored) > 1
                                                                        else ""), metadata={"ignored": "\n".join(ignored)})
    for line in ignored:
        context.log.warning(line)
    return clips.output()


def previous_models(project: ProjectResource, keys: list[str]) -> dict[str, set[str]]:
    """NAME -> the digests of every model's rows in the responses last written for ``keys`` (offline and imported
    responders left out)."""
    import pyarrow.parquet as pq

    found: dict[str, set[str]] = {}
    for key in keys:
        path = project.tables.path("responses", key)
        if not path.exists():
            continue
        names = set(pq.read_schema(path).names)
        if "model_digest" not in names:
            continue
        table = pq.read_table(path, columns=["provider", "model", "model_digest"]).to_pandas()
        for row in table[~table["provider"].isin(["offline", "external"])].drop_duplicates().itertuples():
            found.setdefault(str(row.model), set()).add(str(row.model_digest))
    return found


def media_ignored(frames) -> list[str]:
    """One line per model and medium its server ignored on some clips of ``frames`` (responses)."""
    lines = []
    for frame in frames:
        for medium in ("audio", "video"):
            column = f"{medium}_ignored"
            if column not in frame:
                continue
            hit = frame[frame[column].fillna(False).astype(bool)]
            for (model, clip) in hit[["model", "clip_key"]].drop_duplicates().itertuples(index=False):
                lines.append(f"model {model} ignored the {medium} it was sent on {clip} (the same prompt tokens with "
                             f"and without it); its rows are marked {column}")
    return lines


def _responses_metadata(clips: ClipBatch, out: pd.DataFrame, call_stats: dict) -> dict:
    meta = clips.metadata(out, ["item_id", "condition", "responder", "model", "status", "reply"], 6)
    if clips.batch and not call_stats:  # a batch's shared metadata keeps the counts (batch_metadata)
        return meta
    status = out.groupby(["responder", "model", "condition", "status"]).size().rename("rows").reset_index()
    spent = out[~out["cached"].astype(bool)]  # cached replies cost nothing this run
    tokens = spent.groupby(["responder", "model"])[["prompt_tokens", "output_tokens"]].sum().reset_index()
    skipped = out[out["status"] == "skipped"]
    meta.update({
        "by_status": dg.MetadataValue.md(markdown_table(status, 60)),
        "tokens": dg.MetadataValue.md(markdown_table(tokens)),
        "skipped_reasons": dg.MetadataValue.md(counts_markdown(skipped["error"].value_counts().to_dict())),
        "model_calls": dg.MetadataValue.md(markdown_table(pd.DataFrame(
            [{"model": m, "requests": s.requests, "cache_hits": s.cache_hits, "calls_made": s.calls_made,
              "retries": s.retries, "errors": s.errors, "seconds": round(s.elapsed_s, 2)} for m, s in call_stats.items()]))),
    })
    batches = [{"model": m, **job} for m, s in call_stats.items() for job in getattr(s, "jobs", [])]
    if batches:
        meta["batch_jobs"] = dg.MetadataValue.md(markdown_table(pd.DataFrame(batches)))
        meta["batch_progress"] = dg.MetadataValue.text(
            "; ".join(f"{m}: {s.progress_line()}" for m, s in call_stats.items() if hasattr(s, "progress_line")))
    return meta


ALL_CLIPS = dg.AllPartitionMapping()


@dg.asset(
    group_name="responses", kinds={"sqlite", "parquet"}, code_version="1", automation_condition=CROSS_CLIP,
    deps=[dg.AssetDep(name, partition_mapping=ALL_CLIPS) for name in ("responses", "caption_responses", "verdicts",
                                                                        "caption_alignments")]
    + [dg.AssetDep("judge_audit")],
    description="What model calls spent, per run × purpose × model, and summed over every run (run_id '*'): "
                "requests, served from the call cache, calls sent, attempts, failed; input, output and cached tokens; "
                "wall time; cost at the pricing table (empty: unknown, as for local servers). Read from the call "
                "cache's ledger, which every step that calls a model appends to.",
)
def spend(project: ProjectResource) -> dg.Output[pd.DataFrame]:
    with CallCache(project.paths.cache / "calls.sqlite") as cache:
        table = spend_table(cache.spend_rows())
    total = table[table["run_id"] == "*"]
    shown = total[["purpose", "model", "calls", "cached", "failed", "prompt_tokens", "output_tokens", "cost_usd"]]
    return dg.Output(table, metadata={
        "rows": dg.MetadataValue.int(len(table)),
        "runs": dg.MetadataValue.int(int(table["run_id"].nunique()) - (1 if len(table) else 0)),
        "calls_sent": dg.MetadataValue.int(int(total["calls"].sum())),
        "cost_usd_known": dg.MetadataValue.float(float(total["cost_usd"].fillna(0).sum())),
        "every_run": dg.MetadataValue.md(markdown_table(shown, 40)),
    })


@dg.asset(
    group_name="responses", kinds={"duckdb", "parquet"}, code_version="1", automation_condition=CROSS_CLIP,
    deps=[dg.AssetDep(name, partition_mapping=ALL_CLIPS) for name in ("responses", "verdicts")],
    description="Per model × clip, whether its server used the audio and the video it was sent: the prompt tokens it "
                "reported for an item with and without the audio (one extra request), and under clip and no_clip. "
                "Equal counts mark the model's rows audio_ignored / video_ignored; the report shows them first, and "
                "`epic-levels run --strict-media` fails such a run.",
)
def media_integrity(project: ProjectResource) -> dg.Output[pd.DataFrame]:
    table = integrity_table(project.tables.partition_files("responses"))
    flagged = table[table["audio_ignored"].fillna(False).astype(bool) | table["video_ignored"].fillna(False).astype(bool)]
    return dg.Output(table, metadata={
        "pairs_checked": dg.MetadataValue.int(int(table["audio_ignored"].notna().sum())),
        "audio_ignored": dg.MetadataValue.int(int(table["audio_ignored"].fillna(False).astype(bool).sum())),
        "video_ignored": dg.MetadataValue.int(int(table["video_ignored"].fillna(False).astype(bool).sum())),
        "flagged": dg.MetadataValue.md(markdown_table(flagged.head(40)) if len(flagged) else "none"),
    })
