"""After more than one batch of clips, `epic-levels run` materializes the cross-clip tables in a process of its
own (the batches' heap is not carried into the combine), with the same tables as in its own process."""

import dagster as dg
import pandas as pd

from epic_levels_pipeline.orchestration import local
from epic_levels_pipeline.warehouse import TableStore, read_parquet

from ..conftest import make_project
from .conftest import QUIET, UNSET

CLIPS = ["epic_sounds__P09_08__45-75", "hd_epic__P09-20240623-120359__1440-1470"]
CROSS_CLIP = ("scores", "paired_comparisons", "over_marking", "shortcut_audit")


def _run(root, monkeypatch, batch: int):
    paths = make_project(root, CLIPS)
    monkeypatch.setenv("EPIC_LEVELS_HOME", str(paths.root))
    for name in UNSET:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(local, "MAX_CLIPS_PER_RUN", batch)  # the clips count as more than one batch when 1
    pools = []

    class Recorded(local.ProcessPoolExecutor):
        def submit(self, fn, *args, **kwargs):
            pools.append(fn.__name__)
            return super().submit(fn, *args, **kwargs)

    monkeypatch.setattr(local, "ProcessPoolExecutor", Recorded)
    report = local.run_pipeline(paths, run_config=QUIET, log=lambda *_: None)
    assert report.failed == [] and report.runs == 3  # tables, the clips' batch, the cross-clip tables
    store = TableStore(paths.assets)
    with local.project_instance(paths) as instance:
        runs = {instance.get_latest_materialization_event(dg.AssetKey(name)).run_id for name in CROSS_CLIP}
        assert len(runs) == 1 and instance.get_run_by_id(runs.pop()).is_success
    return pools, {name: read_parquet([store.path(name)]) for name in CROSS_CLIP}


def test_cross_clip_tables_in_their_own_process_equal_those_made_in_the_run_process(tmp_path, monkeypatch):
    spawned, tables = _run(tmp_path / "spawned", monkeypatch, batch=1)
    assert spawned == ["_cross_clip_run"]
    alone, reference = _run(tmp_path / "alone", monkeypatch, batch=150)
    assert alone == []
    for name in CROSS_CLIP:
        assert len(tables[name]) > 0, name
        pd.testing.assert_frame_equal(tables[name], reference[name], check_exact=True, obj=name)
