"""Resources: where the project's files are, and how tables are stored (Parquet + DuckDB views)."""


import pickle
from pathlib import Path

import dagster as dg
import pandas as pd

from ..settings import Paths, project_root
from ..warehouse import ensure_view, read_parquet, write_parquet


class ProjectResource(dg.ConfigurableResource):
    """The project's folders. ``root`` defaults to ``$EPIC_LEVELS_HOME`` or the folder holding data/clips.csv."""

    root: str = ""

    @property
    def paths(self) -> Paths:
        return Paths(Path(self.root).resolve()) if self.root else Paths.default()


class TableIOManager(dg.ConfigurableIOManager):
    """DataFrames to ``data/assets/<asset>[/<clip>].parquet`` (atomic), exposed as warehouse views.

    Outputs are written atomically and only when the step yields them (blocking checks run before), so a
    failed run leaves the last good materialization in place. Loading a partitioned asset into an
    unpartitioned one concatenates every materialized clip and logs the clips that have none.
    """

    root: str = ""

    @property
    def paths(self) -> Paths:
        return Paths(Path(self.root).resolve()) if self.root else Paths.default()

    def _path(self, name: str, partition: str | None) -> Path:
        base = self.paths.assets / name
        return base / f"{partition}.parquet" if partition else base.with_suffix(".parquet")

    def handle_output(self, context: dg.OutputContext, obj) -> None:
        name = context.asset_key.path[-1]
        partition = context.partition_key if context.has_asset_partitions else None
        path = self._path(name, partition)
        if isinstance(obj, pd.DataFrame):
            write_parquet(obj, path)
            ensure_view(self.paths.warehouse, name, path.parent if partition else path)
        else:
            path = path.with_suffix(".pickle")
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(pickle.dumps(obj))
            tmp.replace(path)

    def load_input(self, context: dg.InputContext):
        name = context.asset_key.path[-1]
        if context.has_asset_partitions:
            keys = context.asset_partition_keys
            paths = [self._path(name, k) for k in keys]
            missing = [k for k, p in zip(keys, paths) if not p.exists()]
            if missing and len(keys) == 1:
                raise dg.Failure(f"{name} has no materialization for clip {keys[0]} ({paths[0]}): materialize it first")
            if missing:  # cross-clip tables read the clips that have this table, and say which do not
                context.log.warning(f"{name}: {len(missing)} of {len(keys)} clips not materialized, left out: "
                                    + ", ".join(missing[:20]) + (" …" if len(missing) > 20 else ""))
            return read_parquet(paths)
        path = self._path(name, None)
        if path.with_suffix(".pickle").exists() and not path.exists():
            return pickle.loads(path.with_suffix(".pickle").read_bytes())
        return read_parquet([path])


def default_resources(root: str = "") -> dict:
    from .evaluation import EvaluationResource

    return {"project": ProjectResource(root=root), "io_manager": TableIOManager(root=root),
            "evaluation": EvaluationResource()}


@dg.definitions
def resources() -> dg.Definitions:
    # Steps run in the run's own process: a per-clip run is a chain of small steps, and a subprocess per
    # step cost more than the work on 2 cores. Concurrency comes from runs (dagster.yaml caps them) and pools.
    return dg.Definitions(resources=default_resources(), executor=dg.in_process_executor)


__all__ = ["ProjectResource", "TableIOManager", "default_resources", "project_root"]
