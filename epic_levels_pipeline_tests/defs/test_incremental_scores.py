"""One changed annotation row: only its clip's steps (with its partial results) and the combine re-run, and
the cross-clip tables combined from the partials are the tables of every clip's verdicts."""

import dagster as dg
import pytest

from epic_levels_pipeline.defs.scoring.assets import CLIP_PARTIALS
from epic_levels_pipeline.orchestration.local import run_pipeline
from epic_levels_pipeline.scoring.metrics import tables
from epic_levels_pipeline.seeding import DEFAULT_SEED
from epic_levels_pipeline.storage.parquet import read_parquet
from epic_levels_pipeline.storage.table_store import TableStore

from ..scoring.test_partials import assert_same
from .conftest import OFFLINE_CLIPS, QUIET

pytestmark = pytest.mark.slow

EDITED = "epic_sounds__P09_08__45-75"
CROSS_CLIP = ("scores", "paired_comparisons", "over_marking", "shortcut_audit", "judge_audit")
PER_CLIP = ("questions", "items", "responses", "verdicts") + CLIP_PARTIALS


def materializations(instance, name: str) -> list[tuple[str | None, str]]:
    records = instance.fetch_materializations(dg.AssetKey(name), limit=1000).records
    return [(r.partition_key, r.run_id) for r in records]


def test_one_changed_row_reruns_its_clip_and_the_combine(project, instance):
    assert run_pipeline(project, instance=instance, run_config=QUIET, log=lambda *_: None).failed == []
    store = TableStore(project.assets)
    before = {name: materializations(instance, name) for name in PER_CLIP + CROSS_CLIP}
    stamps = {(name, clip): store.path(name, clip).stat().st_mtime_ns for name in CLIP_PARTIALS for clip in OFFLINE_CLIPS}

    path = project.annotations / "epic-sounds" / "EPIC_Sounds_validation.csv"  # a sound of the edited clip only
    text = path.read_text()
    assert "P09_08_13,P09,P09_08,00:00:47.662" in text
    path.write_text(text.replace("P09_08_13,P09,P09_08,00:00:47.662", "P09_08_13,P09,P09_08,00:00:47.700"))
    report = run_pipeline(project, clip_keys=[EDITED], instance=instance, run_config=QUIET, log=lambda *_: None)
    assert report.failed == [] and report.runs == 3  # tables, the clip's steps, the combine

    for name in PER_CLIP:  # the clip's own steps, and no other clip's
        new = [m for m in materializations(instance, name) if m not in before[name]]
        assert [partition for partition, _ in new] == [EDITED], name
    for name in CROSS_CLIP:  # the combine
        assert len(materializations(instance, name)) == len(before[name]) + 1, name
    for (name, clip), stamp in stamps.items():
        assert (store.path(name, clip).stat().st_mtime_ns == stamp) == (clip != EDITED), (name, clip)

    # the tables combined from the partials are the tables of the verdicts of every clip, after the edit too
    verdicts = read_parquet(store.partition_files("verdicts"))
    assert set(verdicts["clip_key"]) == set(OFFLINE_CLIPS)
    seed = DEFAULT_SEED  # the project's seed, which the combine's bootstraps draw from
    assert_same("scores", tables.scores(verdicts, seed=seed), read_parquet([store.path("scores")]))
    assert_same("paired_comparisons", tables.paired_comparisons(verdicts, seed=seed),
                read_parquet([store.path("paired_comparisons")]))
    assert_same("over_marking", tables.over_marking(verdicts), read_parquet([store.path("over_marking")]))
