"""The table IO manager reads each stored file once per run while it is unchanged, and hands out copies."""

import dagster as dg
import pandas as pd

from epic_levels_pipeline.defs import resources
from epic_levels_pipeline.defs.partitions import BY_CLIP, clip_partitions
from epic_levels_pipeline.warehouse import TableStore, write_parquet

CLIPS = ["epic_sounds__P01_01__0-30", "epic_sounds__P01_01__30-60"]


def _counting_reads(monkeypatch) -> list:
    reads = []
    real = resources.read_parquet

    def counted(paths):
        reads.append([p.name for p in paths])
        return real(paths)

    monkeypatch.setattr(resources, "read_parquet", counted)
    return reads


def test_a_table_is_read_once_and_a_changed_copy_stays_private(tmp_path, monkeypatch):
    reads = _counting_reads(monkeypatch)
    manager = resources.TableIOManager(root=str(tmp_path))
    store = TableStore(tmp_path / "data" / "assets")
    write_parquet(pd.DataFrame({"x": [1, 2]}), store.path("sounds"))
    context = dg.build_input_context(asset_key=dg.AssetKey("sounds"))
    first = manager.load_input(context)
    first["x"] = [9, 9]
    first["extra"] = 1
    second = manager.load_input(context)
    assert second["x"].tolist() == [1, 2] and "extra" not in second.columns
    assert len(reads) == 1
    write_parquet(pd.DataFrame({"x": [3, 4, 5]}), store.path("sounds"))  # a changed file is read again
    assert manager.load_input(context)["x"].tolist() == [3, 4, 5]
    assert len(reads) == 2
    manager.teardown_after_execution(None)
    assert not manager._loaded


def test_clip_files_are_read_once_per_run(tmp_path, monkeypatch):
    reads = _counting_reads(monkeypatch)
    manager = resources.TableIOManager(root=str(tmp_path))
    store = TableStore(tmp_path / "data" / "assets")
    for i, key in enumerate(CLIPS):
        write_parquet(pd.DataFrame({"clip": [key], "i": [i]}), store.path("questions", key))
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(clip_partitions.name, CLIPS)

    def context(by_clip: bool):
        return dg.build_input_context(asset_key=dg.AssetKey("questions"), partition_key=None,
                                      asset_partitions_def=clip_partitions, instance=instance,
                                      asset_partition_key_range=dg.PartitionKeyRange(CLIPS[0], CLIPS[-1]),
                                      definition_metadata={BY_CLIP: True} if by_clip else {})

    by_clip = [manager.load_input(context(True)) for _ in range(2)][-1]
    assert {k: f["i"].tolist() for k, f in by_clip.items()} == {CLIPS[0]: [0], CLIPS[1]: [1]}
    assert len(reads) == len(CLIPS)  # the second load read nothing
    together = [manager.load_input(context(False)) for _ in range(2)][-1]
    assert sorted(together["i"].tolist()) == [0, 1]
    assert len(reads) == len(CLIPS) + 1
