"""A batch run gives each clip partition its own materialization metadata; the batch summary is on its last clip."""

import dagster as dg
import pytest

from epic_levels_pipeline.defs.operations.sensors import _content_hash
from epic_levels_pipeline.defs.partitions import range_tags
from epic_levels_pipeline.orchestration.local import load_definitions

from .test_dagster_pipeline import QUIET, TABLES, materialize

pytestmark = pytest.mark.slow


def test_each_clip_of_a_batch_has_its_own_metadata(project, instance):
    keys = ["epic_sounds__P09_08__45-75", "epic_sounds__P02_133__15-45", "hd_epic__P09-20240623-120359__1440-1470"]
    instance.add_dynamic_partitions("clips", keys)
    assert materialize(instance, TABLES).success
    job = load_definitions().resolve_implicit_global_asset_job_def()
    order = instance.get_dynamic_partitions("clips")
    result = job.execute_in_process(instance=instance, run_config=QUIET, tags=range_tags(order),
                                    asset_selection=[dg.AssetKey(k) for k in ("clip_annotations", "questions",
                                                                              "distractor_pools", "verdicts",
                                                                              "items", "responses", "clip_media")])
    assert result.success
    for asset in ("clip_annotations", "questions", "items", "verdicts"):
        events = {e.partition: e.step_materialization_data.materialization for e in result.get_asset_materialization_events()
                  if e.asset_key == dg.AssetKey(asset)}
        assert sorted(events) == sorted(order), asset
        summary = list(events)[-1]  # the event stored last: the asset's latest materialization
        assert instance.get_latest_materialization_event(dg.AssetKey(asset)).asset_materialization.partition == summary
        last = events[summary].metadata
        table = last["rows_by_clip"].value
        for key, meta in events.items():
            own = meta.metadata
            assert own["clips_in_batch"].value == len(order)
            assert f"| {key} | {own['dagster/row_count'].value} |" in table, (asset, key)
            if key != summary:
                assert own["batch_summary"].value == f"on partition {summary}"
                assert "rows_by_clip" not in own and "dagster/column_schema" not in own
        assert last["batch_row_count"].value == sum(m.metadata["dagster/row_count"].value for m in events.values())
        assert last["dagster/column_schema"].value.columns
    hashes = {e.partition: _content_hash(e.step_materialization_data.materialization, e.partition)
              for e in result.get_asset_materialization_events() if e.asset_key == dg.AssetKey("clip_annotations")}
    assert len(set(hashes.values())) == len(order) and all(len(h) >= 16 for h in hashes.values())
    questions = {e.partition: e.step_materialization_data.materialization.metadata for e in result.get_asset_materialization_events()
                 if e.asset_key == dg.AssetKey("questions")}
    assert all("dropped" in m for m in questions.values())
    assert questions[list(questions)[-1]]["batch_dropped"].value == sum(m["dropped"].value for m in questions.values())
