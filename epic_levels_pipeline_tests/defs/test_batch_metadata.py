"""A batch run gives each clip partition its own materialization metadata; the batch summary is on its last clip."""

import dagster as dg
import pytest

from epic_levels_pipeline.defs.operations.sensors import _content_hash
from epic_levels_pipeline.defs.partitions import range_tags
from .conftest import QUIET, definitions



def test_each_clip_of_a_batch_has_its_own_metadata(graph_copy):
    instance = graph_copy.instance  # the annotation tables and the three clips' partitions are there
    job = definitions().resolve_implicit_global_asset_job_def()
    order = instance.get_dynamic_partitions("clips")
    assert len(order) == 3
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


def test_above_the_partition_limit_only_hashes_and_media_status_are_on_every_clip(graph_copy, monkeypatch):
    """With more clip partitions in the instance than ``OWN_ENTRIES_MAX_PARTITIONS``, a batch makes one
    ``add_asset_metadata`` call per asset (the summary clip) instead of one per clip, except for
    ``clip_annotations`` (every clip keeps its ``content_hash`` for the sensor) and ``clip_media`` (its status).
    The other clips carry ``batch_summary`` and ``clips_in_batch`` (the output metadata); their row counts are
    in ``rows_by_clip``."""
    from epic_levels_pipeline.defs import metadata
    from epic_levels_pipeline.storage.parquet import read_parquet
    from epic_levels_pipeline.storage.table_store import TableStore

    instance, store = graph_copy.instance, TableStore(graph_copy.project.assets)
    order = instance.get_dynamic_partitions("clips")
    monkeypatch.setattr(metadata, "OWN_ENTRIES_MAX_PARTITIONS", len(order) - 1)
    calls = []
    real = dg.AssetExecutionContext.add_asset_metadata
    monkeypatch.setattr(dg.AssetExecutionContext, "add_asset_metadata",
                        lambda self, *a, **k: calls.append(k.get("asset_key")) or real(self, *a, **k))
    job = definitions().resolve_implicit_global_asset_job_def()
    result = job.execute_in_process(instance=instance, run_config=QUIET, tags=range_tags(order),
                                    asset_selection=[dg.AssetKey(k) for k in ("clip_annotations", "questions",
                                                                              "distractor_pools", "verdicts",
                                                                              "items", "responses", "clip_media")])
    assert result.success
    assert calls.count(None) == 2 * len(order) + 3 and calls.count("questions") == calls.count("distractor_pools") == 1
    by_asset = {}
    for e in result.get_asset_materialization_events():
        by_asset.setdefault(e.asset_key.to_user_string(), {})[e.partition] = e.step_materialization_data.materialization
    assert {k: _content_hash(m, k) for k, m in by_asset["clip_annotations"].items()} == {
        k: m.metadata["content_hash"].value for k, m in by_asset["clip_annotations"].items()}
    assert len({m.metadata["content_hash"].value for m in by_asset["clip_annotations"].values()}) == len(order)
    assert all("status" in m.metadata for m in by_asset["clip_media"].values())
    for asset in ("questions", "items", "verdicts", "responses"):
        events = by_asset[asset]
        summary = list(events)[-1]
        table = events[summary].metadata["rows_by_clip"].value
        assert all(f"| {key} |" in table for key in order), asset
        for key, m in events.items():
            assert m.metadata["clips_in_batch"].value == len(order)
            if key != summary:
                assert m.metadata["batch_summary"].value == f"on partition {summary}"
                assert "dagster/row_count" not in m.metadata and "rows_by_clip" not in m.metadata, (asset, key)
        written = sum(len(read_parquet([store.path(asset, key)])) for key in order)
        assert events[summary].metadata["batch_row_count"].value == written, asset
