"""Automation conditions: per-clip assets follow their clip's upstream; scored tables follow the verdicts.

Per-clip assets ignore updates of the shared annotation tables and catalogue: those are re-materialized
whenever any file changes, and reacting to them would re-run every clip. Which clips changed is decided
by ``annotation_change_sensor`` (content hash per clip), which re-runs their whole per-clip chain; these
conditions bring along anything else upstream of a clip that changes (a clip materialized by hand in the UI).
"""

import dagster as dg

SHARED_INPUTS = dg.AssetSelection.assets("sounds", "narrations", "activities", "recipe_steps", "object_tracks",
                                         "vocabulary", "videos", "entity_catalogue")
PER_CLIP = dg.AutomationCondition.eager().ignore(SHARED_INPUTS)
# Cross-clip tables read every clip; one clip without verdicts (a failed run, a clip just added) must not
# hold them back: they re-run on any update and read the clips that have verdicts (listed in metadata).
CROSS_CLIP = dg.AutomationCondition.eager().without(~dg.AutomationCondition.any_deps_missing())
