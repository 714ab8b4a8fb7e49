"""Integration: the annotation tables read an annotations root set in epic-levels.toml, laid out as the upstream
repositories are cloned, and list the files they skip with the reason."""

import shutil

import dagster as dg
import pytest

from epic_levels_pipeline.orchestration.local import load_definitions

from ..conftest import ROOT
from .conftest import QUIET

pytestmark = pytest.mark.slow

CLONES = {"epic-sounds": "epic-sounds-annotations", "epic-kitchens-100": "epic-kitchens-100-annotations",
          "hd-epic": "hd-epic-annotations"}
TABLES = ["sounds", "narrations", "activities", "recipe_steps", "object_tracks", "vocabulary", "videos"]


def test_tables_read_the_configured_upstream_root(project, instance, tmp_path, monkeypatch):
    monkeypatch.delenv("EPIC_LEVELS_ANNOTATIONS", raising=False)
    upstream = tmp_path / "upstream"
    for bundled, clone in CLONES.items():
        shutil.copytree(ROOT / "data" / "annotations" / bundled, upstream / clone)
    (upstream / "epic-sounds-annotations" / "EPIC_Sounds_recognition_test_timestamps.csv").write_text(
        "annotation_id,participant_id,video_id\nP01_101_0,P01,P01_101\n")
    shutil.rmtree(project.annotations)  # nothing left at data/annotations: only the configured root can be read
    (project.root / "epic-levels.toml").write_text(f'[data]\nannotations = "{upstream}"\n')
    job = load_definitions().resolve_implicit_global_asset_job_def()
    result = job.execute_in_process(instance=instance, asset_selection=[dg.AssetKey(k) for k in TABLES],
                                    raise_on_error=False, run_config=QUIET)
    assert result.success
    event = instance.get_latest_materialization_event(dg.AssetKey("sounds"))
    meta = event.asset_materialization.metadata
    assert "epic-sounds-annotations/EPIC_Sounds_validation.csv" in meta["files"].value
    assert ("skipped, test split without labels: epic-sounds-annotations/EPIC_Sounds_recognition_test_timestamps.csv "
            "(1 rows)") in meta["skipped_files"].value
