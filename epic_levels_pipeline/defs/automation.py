"""Automation conditions: per-clip assets follow their clip's upstream but not the shared annotation tables (which
change with any file; the sensor decides which clips changed); scored tables follow the verdicts."""

import dagster as dg

SHARED_INPUTS = dg.AssetSelection.assets("sounds", "narrations", "activities", "recipe_steps", "object_tracks",
                                         "vocabulary", "videos", "entity_catalogue")
PER_CLIP = dg.AutomationCondition.eager().ignore(SHARED_INPUTS)
# Cross-clip tables read every clip; one clip without verdicts (a failed run, a clip just added) must not
# hold them back: they re-run on any update and read the clips that have verdicts (listed in metadata).
CROSS_CLIP = dg.AutomationCondition.eager().without(~dg.AutomationCondition.any_deps_missing())
