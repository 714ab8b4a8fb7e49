"""The warehouse: one view per stored table, (re)created by this asset alone, in a pool of size 1, so no two
processes open ``data/warehouse.duckdb`` for writing. A new table is written through the table store and listed in
``WAREHOUSE_TABLES`` (``test_warehouse_writer`` fails for one left out)."""

import dagster as dg
import pandas as pd

from ...storage.views import refresh
from ..automation import CROSS_CLIP
from ..metadata import markdown_table
from ..resources import ProjectResource
from ..hd_epic_vqa.assets import CROSS_VIDEO_TABLES, IMPORT_TABLES, PER_VIDEO_TABLES
from ..scoring.assets import CLIP_PARTIALS

# Unpartitioned tables (annotation tables, cross-clip scored tables) and per-clip tables (every clip).
SHARED_TABLES = ["sounds", "narrations", "activities", "recipe_steps", "object_tracks", "vocabulary", "videos",
                 "entity_catalogue", "scores", "paired_comparisons", "over_marking", "shortcut_audit", "judge_audit",
                 "judge_agreement", "judge_swap", "spend", "media_integrity", "caption_scores", "caption_threshold_sensitivity", *IMPORT_TABLES, *CROSS_VIDEO_TABLES]
PER_CLIP_TABLES = ["clip_annotations", "questions", "distractor_pools", "items", "clip_media", "responses", "verdicts",
                   "caption_references", "caption_responses", "caption_alignments", "caption_response_scores",
                   "caption_judge_partials", "caption_judge_votes",
                   "caption_threshold_partials",
                   *CLIP_PARTIALS, *PER_VIDEO_TABLES]
WAREHOUSE_TABLES = SHARED_TABLES + PER_CLIP_TABLES
# The pool the writer runs in; the deployment gives it one slot (README, "Running on several machines").
WAREHOUSE_POOL = "warehouse_writer"

ALL_CLIPS = dg.AllPartitionMapping()


@dg.asset(
    group_name="warehouse", kinds={"duckdb"}, code_version="1", automation_condition=CROSS_CLIP,
    pool=WAREHOUSE_POOL,
    deps=[dg.AssetDep(name) for name in SHARED_TABLES]
    + [dg.AssetDep(name, partition_mapping=ALL_CLIPS) for name in PER_CLIP_TABLES],
    description="data/warehouse.duckdb: one view per stored table (a per-clip table's view globs its folder), "
                "created by this asset alone (pool warehouse_writer, one slot), so runs never contend for the file.",
)
def warehouse(project: ProjectResource) -> dg.MaterializeResult:
    store = project.tables
    views, made = refresh(project.paths.warehouse, store)
    rows = pd.DataFrame([{"view": name, "over": "per-clip files" if target.is_dir() else "one file",
                          "files": len(store.partition_files(name)) if target.is_dir() else 1}
                         for name, target in views.items()])
    # tables the graph declares but the store does not hold yet get no view: listed, never silently absent
    missing = sorted(set(WAREHOUSE_TABLES) - set(views) - {"entity_catalogue"})
    return dg.MaterializeResult(metadata={
        "path": dg.MetadataValue.path(str(project.paths.warehouse)),
        "views": dg.MetadataValue.int(len(views)),
        # a view is made again only when its files' columns changed (making one reads every file's footer)
        "views_made_again": dg.MetadataValue.md(", ".join(made) or "none: every view still reads what a new one would"),
        "tables": dg.MetadataValue.md(markdown_table(rows, 60)),
        "not_materialized": dg.MetadataValue.md(", ".join(missing) or "none"),
    })
