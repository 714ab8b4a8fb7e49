"""Where a project's files live. One place decides it; everything else asks.

The project root is ``$EPIC_LEVELS_HOME`` if set, else the nearest folder upwards from the working
directory that holds ``data/clips.csv``, else the working directory. Under it:

- ``data/annotations/``  annotation files (bundled copies; SOURCE.md beside each)
- ``data/clips.csv``     the clip manifest
- ``data/assets/``       materialized tables (Parquet, one file per clip partition)
- ``data/warehouse.duckdb`` views and tables over them
- ``data/cache/``        model-call cache (responses, judge)
- ``data/media/``        source videos (``<dataset>/<video_id>.<ext>``) and cut clips
- ``data/reports/``      human reports
- ``data/dagster/``      Dagster instance storage (see ``dagster.yaml``)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


def project_root() -> Path:
    env = os.environ.get("EPIC_LEVELS_HOME")
    if env:
        return Path(env).resolve()
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "data" / "clips.csv").exists():
            return folder
    return here


@dataclass(frozen=True)
class Paths:
    root: Path

    @classmethod
    def default(cls) -> "Paths":
        return cls(project_root())

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def annotations(self) -> Path:
        return self.data / "annotations"

    @property
    def manifest(self) -> Path:
        return self.data / "clips.csv"

    @property
    def assets(self) -> Path:
        return self.data / "assets"

    @property
    def warehouse(self) -> Path:
        return self.data / "warehouse.duckdb"

    @property
    def cache(self) -> Path:
        return self.data / "cache"

    @property
    def media(self) -> Path:
        return self.data / "media"

    @property
    def reports(self) -> Path:
        return self.data / "reports"

    @property
    def dagster_home(self) -> Path:
        return self.root
