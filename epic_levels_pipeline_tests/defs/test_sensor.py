"""annotation_change_sensor: new manifest rows become partitions; only clips whose rows changed re-run."""

import json

import dagster as dg
import pytest

from epic_levels_pipeline.defs.operations.jobs import retire_clips_job
from epic_levels_pipeline.defs.operations.sensors import annotation_change_sensor, rescore_after_retire
from epic_levels_pipeline.defs.resources import ProjectResource

from .conftest import QUIET, TABLES, definitions, materialize

CLIP_JOBS = ("clip_annotations_job", "clip_chain_job", "clip_update_job")



def evaluate(instance, project, cursor):
    context = dg.build_sensor_context(instance=instance, cursor=cursor,
                                      resources={"project": ProjectResource(root=str(project.root))})
    result = annotation_change_sensor(context)
    return result


def apply(instance, result):
    for request in result.dynamic_partitions_requests or []:
        if isinstance(request, dg.AddDynamicPartitionsRequest):
            instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
        else:
            for key in request.partition_keys:
                instance.delete_dynamic_partition(request.partitions_def_name, key)


def clips_of(instance, request) -> list[str]:
    """The clip partitions a run request targets: its partition, or the range its tags name."""
    if request.partition_key:
        return [request.partition_key]
    tags = request.tags or {}
    if "dagster/asset_partition_range_start" not in tags:
        return []
    order = instance.get_dynamic_partitions("clips")
    a, b = order.index(tags["dagster/asset_partition_range_start"]), order.index(tags["dagster/asset_partition_range_end"])
    return order[a:b + 1]


def requested(instance, result) -> list[tuple[str, list[str]]]:
    return [(r.job_name, clips_of(instance, r)) for r in result.run_requests]


def run_requested(instance, result):
    """Execute each requested clip run (one clip or a batch), as the daemon would launch it."""
    defs = definitions()
    for request in result.run_requests:
        if request.job_name in CLIP_JOBS:
            job = defs.resolve_job_def(request.job_name)
            assert job.execute_in_process(instance=instance, partition_key=request.partition_key, tags=request.tags,
                                          run_config=QUIET, raise_on_error=False).success


def test_sensor_requests_exactly_the_changed_clip(project, instance):
    # an empty instance (not a graph_copy): the first tick must register the partitions and ask for the tables
    # first tick: partitions registered, tables requested (none materialized yet)
    first = evaluate(instance, project, None)
    apply(instance, first)
    assert set(instance.get_dynamic_partitions("clips")) == {
        "epic_sounds__P09_08__45-75", "epic_sounds__P02_133__15-45", "hd_epic__P09-20240623-120359__1440-1470"}
    assert [r.job_name for r in first.run_requests] == ["annotation_tables_job"]
    # tables materialized -> every clip requested once (all new to the cursor)
    assert materialize(instance, TABLES).success
    second = evaluate(instance, project, first.cursor)
    # every clip is new to the record: one batch of consecutive partitions, each clip's whole chain
    assert requested(instance, second) == [("clip_chain_job", instance.get_dynamic_partitions("clips"))]
    run_requested(instance, second)
    # nothing changed -> nothing requested
    third = evaluate(instance, project, second.cursor)
    assert third.run_requests == []

    # edit one row of P09_08's window (P09_08_13 "tap running") in the copy of the annotations
    path = project.annotations / "epic-sounds" / "EPIC_Sounds_validation.csv"
    path.write_text(path.read_text().replace("P09_08_13,P09,P09_08,00:00:47.662", "P09_08_13,P09,P09_08,00:00:47.700"))
    fourth = evaluate(instance, project, third.cursor)
    # one run: the tables, exactly that clip's chain, and the cross-clip tables
    assert requested(instance, fourth) == [("clip_update_job", ["epic_sounds__P09_08__45-75"])]
    # until that run has recorded the new hash, the request stands (same run key: Dagster launches it once)
    again = evaluate(instance, project, third.cursor)
    assert [r.run_key for r in again.run_requests] == [r.run_key for r in fourth.run_requests]
    run_requested(instance, fourth)
    fifth = evaluate(instance, project, fourth.cursor)
    assert fifth.run_requests == []


def test_materializations_made_elsewhere_count_as_current(graph_copy):
    """The CLI, the UI and the sensor share one record: the hash each clip_annotations materialization
    recorded. A clip materialized outside the sensor (here by ``epic-levels run``'s driver, in the session's
    graph) is current for it from its first tick."""
    project, instance = graph_copy.project, graph_copy.instance
    assert set(instance.get_dynamic_partitions("clips")) == {
        "epic_sounds__P09_08__45-75", "epic_sounds__P02_133__15-45", "hd_epic__P09-20240623-120359__1440-1470"}
    first = evaluate(instance, project, None)
    assert first.run_requests == [] and not first.dynamic_partitions_requests
    cursor = json.loads(first.cursor)
    assert set(cursor["clips"]) == set(instance.get_dynamic_partitions("clips")) and cursor["storage_id"]


def test_annotation_error_keeps_the_queued_rescore(graph_copy):
    project, instance = graph_copy.project, graph_copy.instance  # everything materialized there
    first = evaluate(instance, project, None)
    apply(instance, first)
    run_requested(instance, first)
    # one clip leaves the manifest and, in the same edit, an annotation file gets a bad row
    manifest = project.manifest
    manifest.write_text(manifest.read_text().replace("epic_sounds,P02_133,15,45\n", ""))
    path = project.annotations / "epic-sounds" / "EPIC_Sounds_validation.csv"
    path.write_text(path.read_text().replace("P09_08_13,P09,P09_08,00:00:47.662", "P09_08_13,P09,P09_08,not-a-time"))
    second = evaluate(instance, project, first.cursor)
    assert "retire_clips_job" in [r.job_name for r in second.run_requests]


def test_sensor_adds_and_retires_partitions(graph_copy):
    project, instance = graph_copy.project, graph_copy.instance  # everything materialized there
    first = evaluate(instance, project, None)
    apply(instance, first)
    manifest = project.manifest
    manifest.write_text(manifest.read_text() + "epic_sounds,P18_05,360,390\n")
    second = evaluate(instance, project, first.cursor)
    apply(instance, second)
    assert "epic_sounds__P18_05__360-390" in instance.get_dynamic_partitions("clips")
    assert any(job == "clip_chain_job" and "epic_sounds__P18_05__360-390" in clips for job, clips in requested(instance, second))
    # removing it retires the partition and moves its files out of the warehouse views
    for table in ("questions", "caption_responses"):  # the question bank's tables and the caption track's alike
        (project.assets / table).mkdir(parents=True, exist_ok=True)
        (project.assets / table / "epic_sounds__P18_05__360-390.parquet").write_bytes(b"x")
    manifest.write_text(manifest.read_text().replace("epic_sounds,P18_05,360,390\n", ""))
    third = evaluate(instance, project, second.cursor)
    apply(instance, third)
    assert "epic_sounds__P18_05__360-390" not in instance.get_dynamic_partitions("clips")
    # the tick moved nothing: the retire run does, and its success triggers the re-score
    assert (project.assets / "questions" / "epic_sounds__P18_05__360-390.parquet").exists()
    assert "epic_sounds__P18_05__360-390" not in json.loads(third.cursor)["clips"]
    retire = [r for r in third.run_requests if r.job_name == "retire_clips_job"]
    assert len(retire) == 1
    result = retire_clips_job.execute_in_process(
        instance=instance, run_config=retire[0].run_config,
        resources={"project": ProjectResource(root=str(project.root))})
    assert result.success
    for table in ("questions", "caption_responses"):
        assert (project.assets / table / "retired" / "epic_sounds__P18_05__360-390.parquet").exists()
        assert not (project.assets / table / "epic_sounds__P18_05__360-390.parquet").exists()
    run = instance.get_run_by_id(result.run_id)
    rescore = rescore_after_retire(dg.build_run_status_sensor_context(
        sensor_name="rescore_after_retire", dagster_instance=instance, dagster_run=run,
        dagster_event=result.get_run_success_event()))
    assert rescore.run_key == f"rescore-after:{result.run_id}"  # scores stop counting it now


def test_sensor_reruns_when_files_return_to_an_earlier_content(graph_copy):
    """A -> B -> A: Dagster never reuses a run key, so keys carry a sequence number."""
    project, instance = graph_copy.project, graph_copy.instance  # everything materialized there
    first = evaluate(instance, project, None)
    apply(instance, first)
    run_requested(instance, first)
    path = project.annotations / "epic-sounds" / "EPIC_Sounds_validation.csv"
    original = path.read_text()
    keys = set()
    cursor = first.cursor
    for text in (original.replace("00:00:47.662", "00:00:47.700", 1), original):
        path.write_text(text)
        update = evaluate(instance, project, cursor)
        assert requested(instance, update) == [("clip_update_job", ["epic_sounds__P09_08__45-75"])]
        run_requested(instance, update)
        after = evaluate(instance, project, update.cursor)
        assert after.run_requests == []
        keys |= {r.run_key for r in update.run_requests}
        cursor = after.cursor
    assert len(keys) == 2
