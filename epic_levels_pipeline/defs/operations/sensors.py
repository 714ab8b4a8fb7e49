"""``annotation_change_sensor``: keeps clip partitions in step with the manifest and re-runs exactly the
clips whose annotation rows changed.

Each tick (every 30 s; on by default):

1. Manifest clips not yet partitions are added; partitions no longer in the manifest are retired: the
   partition is deleted, its materialized Parquet files are moved under ``<table>/retired/`` so the
   warehouse views stop showing them, and a re-score of the cross-clip tables is requested at once.
2. A content fingerprint of the annotation files (and the manifest) is compared with the cursor. If it
   changed, the annotation tables are re-materialized first (one run, keyed by the fingerprint) and the
   clips wait: clip runs are requested only once the tables' latest materialization carries the new
   fingerprint, so no clip reads stale tables.
3. The content hash of every clip's overlapping rows is compared with the cursor; a run of
   ``clip_annotations`` is requested for each clip whose hash changed (run key = clip + hash). Downstream
   per-clip assets follow through their automation conditions; unchanged clips are untouched.
"""

import json

import dagster as dg

from ...annotations.readers import files_fingerprint, load_annotations
from ...annotations.clips import clip_hashes, read_manifest
from ...errors import AnnotationError, ManifestError
from ..annotations.assets import ANNOTATION_TABLES
from ..partitions import clip_partitions
from ..resources import ProjectResource
from .schedules import RESCORE_JOB

TABLES_JOB = dg.define_asset_job("annotation_tables_job", selection=dg.AssetSelection.assets(*ANNOTATION_TABLES, "entity_catalogue"))
CLIP_JOB = dg.define_asset_job("clip_annotations_job", selection=dg.AssetSelection.assets("clip_annotations"),
                               partitions_def=clip_partitions)
PER_CLIP_TABLES = ("clip_annotations", "questions", "distractor_pools", "items", "clip_media", "responses", "verdicts")


def _tables_fingerprint(instance: dg.DagsterInstance) -> str | None:
    event = instance.get_latest_materialization_event(dg.AssetKey("sounds"))
    if event is None or event.asset_materialization is None:
        return None
    value = event.asset_materialization.metadata.get("source_fingerprint")
    return getattr(value, "value", value)


def retire(project: ProjectResource, clip_key: str) -> list[str]:
    moved = []
    for table in PER_CLIP_TABLES:
        target = project.tables.retire(table, clip_key)
        if target is not None:
            moved.append(str(target))
    return moved


@dg.sensor(
    name="annotation_change_sensor", jobs=[TABLES_JOB, CLIP_JOB, RESCORE_JOB], minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Adds manifest clips as partitions, retires removed ones, and re-runs only clips whose "
                "annotation rows changed (content hash per clip in the cursor).",
)
def annotation_change_sensor(context: dg.SensorEvaluationContext, project: ProjectResource):
    paths = project.paths
    cursor = json.loads(context.cursor) if context.cursor else {}
    cursor = {"fingerprint": None, "clips": {}, "seq": 0, "pending": None, **cursor}
    try:
        manifest = read_manifest(paths.manifest)
    except ManifestError as exc:
        return dg.SkipReason(f"manifest is not valid: {exc}")
    keys = [c.key for c in manifest]
    existing = set(context.instance.get_dynamic_partitions(clip_partitions.name))
    new = [k for k in keys if k not in existing]
    removed = sorted(existing - set(keys))
    requests: list = []
    dynamic = []
    if new:
        dynamic.append(clip_partitions.build_add_request(new))
    if removed:
        dynamic.append(clip_partitions.build_delete_request(removed))
        for key in removed:
            moved = retire(project, key)
            cursor["clips"].pop(key, None)
            context.log.info(f"retired clip {key}: partition deleted, {len(moved)} files moved under retired/")
        # the cross-clip tables must stop counting the retired clips now, not at the nightly re-score
        cursor["seq"] += 1
        requests.append(dg.RunRequest(run_key=f"rescore:{cursor['seq']}", job_name=RESCORE_JOB.name))

    fingerprint = files_fingerprint(paths.annotations, [paths.manifest])
    files_only = files_fingerprint(paths.annotations)
    if fingerprint == cursor.get("fingerprint") and not new:
        return dg.SensorResult(run_requests=requests, dynamic_partitions_requests=dynamic, cursor=json.dumps(cursor))
    # Run keys carry a sequence number that grows with every change seen: Dagster never reuses a run key,
    # and files may return to an earlier content (A -> B -> A), which must run again.
    if cursor.get("pending") != fingerprint:
        cursor["seq"] += 1
        cursor["pending"] = fingerprint
    seq = cursor["seq"]

    if _tables_fingerprint(context.instance) != files_only:
        requests.append(dg.RunRequest(run_key=f"tables:{files_only}:{seq}", job_name=TABLES_JOB.name))
        return dg.SensorResult(run_requests=requests, dynamic_partitions_requests=dynamic, cursor=json.dumps(cursor))
    try:
        ann = load_annotations(paths.annotations)
    except AnnotationError as exc:
        return dg.SensorResult(run_requests=[], dynamic_partitions_requests=dynamic, cursor=json.dumps(cursor),
                               skip_reason=dg.SkipReason(f"annotation files are not valid: {exc}"))
    hashes = clip_hashes(ann, manifest)
    for key, digest in hashes.items():
        if cursor["clips"].get(key) != digest:
            requests.append(dg.RunRequest(run_key=f"{key}:{digest}:{seq}", job_name=CLIP_JOB.name, partition_key=key))
    cursor = {"fingerprint": fingerprint, "clips": hashes, "seq": seq, "pending": None}
    return dg.SensorResult(run_requests=requests, dynamic_partitions_requests=dynamic, cursor=json.dumps(cursor))


automation_sensor = dg.AutomationConditionSensorDefinition(
    "epic_levels_automation", target=dg.AssetSelection.all(), default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=30,
    description="Brings per-clip assets and the scored tables up to date after a clip's annotations change.",
)
