"""``annotation_change_sensor``: keeps clip partitions in step with the manifest (retiring removed clips) and re-runs
exactly the clips whose annotation rows changed, read from the instance's own record (each ``clip_annotations``
materialization's content hash), never a private list. The tick's steps: docs/design/orchestration.md."""

import hashlib
import json

import dagster as dg

from ...annotations.readers import files_fingerprint, load_annotations
from ...annotations.clip_hash import clip_hashes
from ...annotations.clip_keys import read_manifest
from ...errors import AnnotationError, ManifestError
from ...settings import config_problems
from ..partitions import batches, clip_partitions, range_tags
from ..resources import ProjectResource
from .jobs import (CHAIN_JOB, CLIP_JOB, RESCORE_JOB, TABLES_JOB, UPDATE_JOB, removed_clips, retire_clips_job,
                   retire_run_config)

CLIP_ANNOTATIONS = dg.AssetKey("clip_annotations")
DATA_VERSION_TAG = "dagster/data_version"
UPDATE_TAG = "epic_levels/update"


def _tables_fingerprint(instance: dg.DagsterInstance) -> str | None:
    event = instance.get_latest_materialization_event(dg.AssetKey("sounds"))
    if event is None or event.asset_materialization is None:
        return None
    value = event.asset_materialization.metadata.get("source_fingerprint")
    return getattr(value, "value", value)


@dg.run_status_sensor(
    name="rescore_after_retire", run_status=dg.DagsterRunStatus.SUCCESS, monitored_jobs=[retire_clips_job],
    request_job=RESCORE_JOB, default_status=dg.DefaultSensorStatus.RUNNING,
    description="Re-scores the cross-clip tables once retired clips' files have been moved away.",
)
def rescore_after_retire(context: dg.RunStatusSensorContext):
    return dg.RunRequest(run_key=f"rescore-after:{context.dagster_run.run_id}")


def recorded_hashes(instance: dg.DagsterInstance, known: dict[str, str], after_storage_id: int | None
                    ) -> tuple[dict[str, str], int | None]:
    """The content hash each clip's newest ``clip_annotations`` materialization recorded (its data version),
    updated from the materializations stored after ``after_storage_id``; returns it with the newest storage
    id read."""
    hashes = dict(known)
    cursor = None
    while True:
        result = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=CLIP_ANNOTATIONS, after_storage_id=after_storage_id),
            limit=1000, cursor=cursor, ascending=True)
        for record in result.records:
            version = _content_hash(record.asset_materialization, record.partition_key)
            if record.partition_key and version:
                hashes[record.partition_key] = version
            after_storage_id = max(after_storage_id or 0, record.storage_id)
        if not result.has_more:
            return hashes, after_storage_id
        cursor = result.cursor


def _content_hash(materialization, partition_key: str | None) -> str | None:
    """A clip's content hash from its materialization: its ``content_hash`` (``content_hashes`` by clip in a
    batch's materializations stored before each clip had its own), else its data version."""
    if materialization is None:
        return None
    own = materialization.metadata.get("content_hash")
    own = getattr(own, "value", own)
    if isinstance(own, str) and own:
        return own
    batch = materialization.metadata.get("content_hashes")
    batch = getattr(batch, "value", batch)
    if isinstance(batch, dict) and partition_key in batch:
        return batch[partition_key]
    return (materialization.tags or {}).get(DATA_VERSION_TAG)


@dg.sensor(
    name="annotation_change_sensor", jobs=[TABLES_JOB, CLIP_JOB, CHAIN_JOB, UPDATE_JOB, RESCORE_JOB, retire_clips_job], minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Adds manifest clips as partitions, retires removed ones, and re-runs only clips whose "
                "annotation rows changed (content hash per clip in the cursor), in batches of their whole chain.",
)
def annotation_change_sensor(context: dg.SensorEvaluationContext, project: ProjectResource):
    paths = project.paths
    cursor = json.loads(context.cursor) if context.cursor else {}
    cursor = {"fingerprint": None, "clips": {}, "seq": 0, "pending": None, "storage_id": None, **cursor}
    problems = config_problems(paths.root)
    if problems:  # the roots are unknown until the project file reads
        return dg.SkipReason("; ".join(problems))
    try:
        manifest = read_manifest(paths.manifest)
    except ManifestError as exc:
        return dg.SkipReason(f"manifest is not valid: {exc}")
    keys = [c.key for c in manifest]
    existing = set(context.instance.get_dynamic_partitions(clip_partitions.name))
    new = [k for k in keys if k not in existing]
    removed = removed_clips(context.instance, keys)
    requests: list = []
    dynamic = []
    if new:
        dynamic.append(clip_partitions.build_add_request(new))
    if removed:
        dynamic.append(clip_partitions.build_delete_request(removed))
        for key in removed:
            cursor["clips"].pop(key, None)
        # the cross-clip tables must stop counting the retired clips now, not at the nightly re-score: the
        # retire run moves their files, and its success triggers the re-score (rescore_after_retire)
        cursor["seq"] += 1
        requests.append(dg.RunRequest(
            run_key=f"retire:{cursor['seq']}", job_name=retire_clips_job.name, run_config=retire_run_config(removed)))
        context.log.info(f"retiring {len(removed)} clips: " + ", ".join(removed[:20]))

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

    order = context.instance.get_dynamic_partitions(clip_partitions.name)
    if _tables_fingerprint(context.instance) != files_only:
        # An edit that changes a few consecutive known clips runs as one: tables, those clips, the scores.
        update = _single_batch_update(context, paths, manifest, cursor, order, new)
        if update is not None:
            batch, digest = update
            run_key = f"update:{files_only}:{digest}:{seq}"
            requests.append(dg.RunRequest(run_key=run_key, job_name=UPDATE_JOB.name,
                                          partition_key=batch[0] if len(batch) == 1 else None,
                                          tags={**range_tags(batch), UPDATE_TAG: run_key}))
            cursor["update"] = run_key
        else:
            requests.append(dg.RunRequest(run_key=f"tables:{files_only}:{seq}", job_name=TABLES_JOB.name))
        return dg.SensorResult(run_requests=requests, dynamic_partitions_requests=dynamic, cursor=json.dumps(cursor))
    if cursor.get("update") and _unfinished(context.instance, cursor["update"]):
        # the update run has written the tables but not yet its clips: they are not stale, only in flight
        return dg.SensorResult(run_requests=requests, dynamic_partitions_requests=dynamic, cursor=json.dumps(cursor))
    cursor.pop("update", None)
    try:
        ann = load_annotations(paths.annotations)
    except AnnotationError as exc:
        context.log.warning(f"annotation files are not valid; clip runs wait until they are: {exc}")
        # keep what this tick already decided (partitions, a retire + re-score); only the clip runs wait
        return dg.SensorResult(run_requests=requests, dynamic_partitions_requests=dynamic, cursor=json.dumps(cursor),
                               skip_reason=None if requests else dg.SkipReason(f"annotation files are not valid: {exc}"))
    recorded, storage_id = recorded_hashes(context.instance, cursor["clips"], cursor["storage_id"])
    hashes = clip_hashes(ann, manifest)
    changed = {key for key, digest in hashes.items() if recorded.get(key) != digest}
    # New clips are partitions only once this tick's request is applied: they follow the known order.
    for batch in batches(order + [k for k in keys if k not in set(order)], changed):
        requests.append(dg.RunRequest(run_key=f"{batch[0]}:{_batch_digest(batch, hashes)}:{seq}", job_name=CHAIN_JOB.name,
                                      partition_key=batch[0] if len(batch) == 1 else None, tags=range_tags(batch)))
    current = {key: recorded[key] for key in hashes if key in recorded}
    cursor = {"fingerprint": fingerprint, "clips": current, "seq": seq, "pending": None, "storage_id": storage_id}
    return dg.SensorResult(run_requests=requests, dynamic_partitions_requests=dynamic, cursor=json.dumps(cursor))


def _unfinished(instance: dg.DagsterInstance, run_key: str) -> bool:
    """Whether the update run requested under ``run_key`` is queued or running (the daemon launches a
    tick's requests right after it; a run never launched does not hold the clips back)."""
    records = instance.get_run_records(filters=dg.RunsFilter(tags={UPDATE_TAG: run_key}), limit=1)
    return bool(records) and not records[0].dagster_run.is_finished


def _batch_digest(batch: list[str], hashes: dict[str, str]) -> str:
    return hashes[batch[0]] if len(batch) == 1 else hashlib.sha256(
        "".join(f"{k}={hashes[k]};" for k in batch).encode()).hexdigest()[:16]


def _single_batch_update(context, paths, manifest, cursor, order, new) -> tuple[list[str], str] | None:
    """When the files changed the rows of known clips that form one batch of consecutive partitions (and
    no clip is new), that batch and its digest: one run then refreshes the tables, the clips and the
    cross-clip tables. None otherwise (invalid files, new clips, nothing or too much changed): the tables
    run first and the clips follow on the next tick."""
    if new:
        return None
    try:
        ann = load_annotations(paths.annotations)
    except AnnotationError:
        return None
    recorded, _ = recorded_hashes(context.instance, cursor["clips"], cursor["storage_id"])
    hashes = clip_hashes(ann, manifest)
    changed = {key for key, digest in hashes.items() if recorded.get(key) != digest}
    found = batches(order, changed)
    if len(found) != 1 or len(found[0]) != len(changed):
        return None
    return found[0], _batch_digest(found[0], hashes)


automation_sensor = dg.AutomationConditionSensorDefinition(
    "epic_levels_automation", target=dg.AssetSelection.all(), default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=30,
    description="Brings per-clip assets and the scored tables up to date after a clip's annotations change.",
)
