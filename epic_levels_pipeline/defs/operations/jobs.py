"""The jobs of the code location: what each run materializes (the sensor, the schedule and ``epic-levels run``
request them by name)."""

import dagster as dg

from ..annotations.assets import ANNOTATION_TABLES
from ..partitions import clip_partitions
from ..resources import ProjectResource
from ..scoring.assets import CLIP_PARTIALS

RESCORE_JOB = dg.define_asset_job(
    "rescore_job", selection=dg.AssetSelection.groups("scoring") - dg.AssetSelection.assets("verdicts", *CLIP_PARTIALS))
TABLES_JOB = dg.define_asset_job("annotation_tables_job", selection=dg.AssetSelection.assets(*ANNOTATION_TABLES, "entity_catalogue"))
CLIP_JOB = dg.define_asset_job("clip_annotations_job", selection=dg.AssetSelection.assets("clip_annotations"),
                               partitions_def=clip_partitions)
# What follows the verdicts and their per-clip partial results: the cross-clip tables.
AFTER_VERDICTS = (dg.AssetSelection.assets("verdicts").downstream(include_self=False)
                  - dg.AssetSelection.assets(*CLIP_PARTIALS))
# Every per-clip asset (those fed by a clip's rows or its media), without the cross-clip tables after verdicts.
PER_CLIP_CHAIN = dg.AssetSelection.assets("clip_annotations", "clip_media").downstream() - AFTER_VERDICTS
# The scored tables after the verdicts; the report (plots, a document) follows them by its automation condition.
CROSS_CLIP_TABLES = AFTER_VERDICTS - dg.AssetSelection.assets("report")
CHAIN_JOB = dg.define_asset_job("clip_chain_job", selection=PER_CLIP_CHAIN, partitions_def=clip_partitions,
                                description="Every per-clip asset of a clip or a batch of consecutive clips.")
# The per-clip caption results and what the cross-clip caption tables make of them.
CAPTION_PER_CLIP = ("caption_response_scores", "caption_threshold_partials")
# The per-video official-protocol counts of the imported VQA questions, and the table made of them.
VQA_PER_VIDEO = ("hd_epic_vqa_official_partials",)
CROSS_CLIP_ALL = (AFTER_VERDICTS | dg.AssetSelection.assets(*CAPTION_PER_CLIP).downstream(include_self=False)
                  | dg.AssetSelection.assets(*VQA_PER_VIDEO).downstream(include_self=False))
# Every cross-clip table (the unpartitioned assets fed by the per-clip chain, the report and the warehouse among them),
# each step in its own process: at thousands of clips ``epic-levels run`` materializes them through this job so
# that no process holds more than one table's combine (orchestration/local.py). Two steps at once by default
# (``max_concurrent`` in the launchpad's run config changes it).
CROSS_CLIP_EXECUTION = {"execution": {"config": {"max_concurrent": 2}}}
CROSS_CLIP_JOB = dg.define_asset_job(
    "cross_clip_tables_job", selection=CROSS_CLIP_ALL, executor_def=dg.multiprocess_executor, config=CROSS_CLIP_EXECUTION,
    description="The cross-clip tables, each step in its own process (bounded memory per process at scale).")
UPDATE_JOB = dg.define_asset_job(
    "clip_update_job", partitions_def=clip_partitions,
    selection=dg.AssetSelection.assets(*ANNOTATION_TABLES, "entity_catalogue") | PER_CLIP_CHAIN | CROSS_CLIP_TABLES,
    description="One run for an edit that changes a few consecutive clips: the annotation tables, those clips' "
                "per-clip assets and the cross-clip tables.")


def retire(project: ProjectResource, clip_key: str) -> list[str]:
    """Move a retired clip's Parquet file of every per-clip table (the store's table folders: the question
    bank's, the responses', the caption track's, the partial results') under ``<table>/retired/``; returns the
    new paths."""
    moved = []
    store = project.tables
    for table, where in store.tables().items():
        if not where.is_dir():
            continue
        target = store.retire(table, clip_key)
        if target is not None:
            moved.append(str(target))
    return moved


class RetireConfig(dg.Config):
    clip_keys: list[str]


def removed_clips(instance: dg.DagsterInstance, keys: list[str]) -> list[str]:
    """The clip partitions that are no longer among ``keys`` (the manifest's clips): the clips to retire."""
    return sorted(set(instance.get_dynamic_partitions(clip_partitions.name)) - set(keys))


def retire_run_config(clip_keys: list[str]) -> dict:
    """The run configuration of a ``retire_clips_job`` run that retires ``clip_keys``."""
    return {"ops": {"retire_clip_files": {"config": {"clip_keys": list(clip_keys)}}}}


@dg.op(description="Moves the per-clip files of clips removed from the manifest under <table>/retired/.")
def retire_clip_files(context: dg.OpExecutionContext, config: RetireConfig, project: ProjectResource) -> dg.Nothing:
    for key in config.clip_keys:
        moved = retire(project, key)
        context.log.info(f"retired clip {key}: {len(moved)} files moved under retired/")


@dg.job(name="retire_clips_job", description="Retires clips removed from the manifest (files moved, not deleted).")
def retire_clips_job():
    retire_clip_files()
