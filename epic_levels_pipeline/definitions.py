"""The code location ``epic_levels_pipeline``: loads everything under ``defs/``, and gives every asset its
declared column schema and a description the UI renders as written (:func:`.defs.metadata.described`)."""

import warnings
from pathlib import Path

import dagster as dg

from .defs.metadata import described


@dg.definitions
def defs() -> dg.Definitions:
    loaded = dg.load_from_defs_folder(path_within_project=Path(__file__).parent)
    return dg.Definitions(assets=dg.map_asset_specs(described, loaded.assets or []), asset_checks=loaded.asset_checks,
                          schedules=loaded.schedules, sensors=loaded.sensors, jobs=loaded.jobs,
                          resources=loaded.resources, executor=loaded.executor, loggers=loaded.loggers,
                          metadata=loaded.metadata, component_tree=loaded.component_tree)


# Resolving the definitions, Dagster copies every sensor that targets a job with its (beta) `owners` parameter set
# to an empty list, and warns about it each time: nothing a user can act on.
warnings.filterwarnings("ignore", message="Parameter `owners` of initializer `SensorDefinition.__init__`",
                        category=dg.BetaWarning)
