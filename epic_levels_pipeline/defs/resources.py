"""Resources: where the project's files are, and how tables are stored (Parquet + DuckDB views)."""


import os
from pathlib import Path

import dagster as dg
import pandas as pd
import pyarrow as pa
from pydantic import PrivateAttr

from ..annotations.catalogue import Catalogue
from ..seeding import DEFAULT_SEED
from ..settings import Paths, project_root
from ..storage.consolidated import read_partitions
from ..storage.frames import to_frames
from ..storage.parquet import file_stamp, read_parquet, write_parquet, write_parquets
from ..storage.table_store import TableStore
from .partitions import BY_CLIP


def _paths(root: str, annotations: str = "", media: str = "") -> Paths:
    """The project's folders under ``root`` (the default project root when empty), with the roots a run was given."""
    return (Paths(Path(root).resolve()) if root else Paths.default()).with_roots(annotations, media)


class ProjectResource(dg.ConfigurableResource):
    """The project's folders and the run's one seed.

    ``root`` defaults to ``$EPIC_LEVELS_HOME`` or the folder holding data/clips.csv. ``seed`` is the single
    seed every seeded stage draws from (question bank sampling, format choices); set it here, in the UI's
    resource config, and it reaches them all.
    """

    root: str = ""
    seed: int = DEFAULT_SEED
    annotations: str = ""  # the annotations root a run was given (``--annotations``); "": the usual lookup
    media: str = ""        # the media root a run was given (``--media``)

    @property
    def paths(self) -> Paths:
        return _paths(self.root, self.annotations, self.media)

    @property
    def tables(self) -> TableStore:
        """Where the IO manager stores tables (read clip files through this, never by path)."""
        return TableStore(_paths(self.root).assets)


class TableIOManager(dg.ConfigurableIOManager):
    """DataFrames (or Arrow tables) to ``data/assets/<asset>[/<clip>].parquet`` (atomic), each cast to and checked
    against its table's declared schema (:mod:`..schemas`); the ``warehouse`` asset makes their views.

    Outputs are written only when the step yields them (blocking checks run before), so a failed run leaves the last
    good materialization in place. A per-clip output or ``by_clip`` input is a ``{clip_key: frame}`` mapping, written
    clip by clip (:func:`..storage.parquet.write_parquets`). A partitioned asset loaded into an unpartitioned one is
    every materialized clip concatenated, read through the table's consolidated copy
    (:func:`..storage.consolidated.read_partitions`: only files written since are read). Every file is read once per
    run while unchanged, and a table the run wrote is converted, never read back (:func:`..storage.frames.to_frames`);
    what is kept is bounded by one run's outputs."""

    root: str = ""
    _loaded: dict = PrivateAttr(default_factory=dict)
    _stores: dict = PrivateAttr(default_factory=dict)  # TableStore by what its root depends on (resolved once)

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        self._loaded.clear()
        self._stores.clear()

    @property
    def paths(self) -> Paths:
        return _paths(self.root)

    @property
    def store(self) -> TableStore:
        depends_on = (self.root, os.environ.get("EPIC_LEVELS_HOME"), os.getcwd())
        if depends_on not in self._stores:
            self._stores[depends_on] = TableStore(_paths(self.root).assets)
        return self._stores[depends_on]

    def _path(self, name: str, partition: str | None) -> Path:
        return self.store.path(name, partition)

    def handle_output(self, context: dg.OutputContext, obj) -> None:
        name = context.asset_key.path[-1]
        if context.has_asset_partitions:
            keys = list(context.asset_partition_keys)
            frames = obj if isinstance(obj, dict) else {keys[0]: obj}
            if len(keys) > 1 or isinstance(obj, dict):
                missing = sorted(set(keys) - set(frames))
                if missing or not isinstance(obj, dict):
                    raise dg.Failure(f"{name}: the step returned no value for clips {missing or keys}")
            paths = [self._path(name, key) for key in keys]
            for path, table in zip(paths, write_parquets([(frames[k], p) for k, p in zip(keys, paths)], name)):
                self._written(path, table)  # views: the `warehouse` asset's
            return
        path = self._path(name, None)
        if isinstance(obj, (pd.DataFrame, pa.Table)):
            self._written(path, write_parquet(obj, path, name))  # the warehouse view is the `warehouse` asset's
        elif isinstance(obj, Catalogue):
            path = self.store.document_path(name)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(obj.to_json())
            tmp.replace(path)
        else:
            raise dg.Failure(f"{name}: the step returned a {type(obj).__name__}; the store holds tables and the "
                             "entity catalogue only")

    def _written(self, path: Path, table) -> None:
        """Remember the Arrow table just written to ``path``: a later step of the run that reads the file
        while it is unchanged converts that table (what reading the file gives) instead of reading it."""
        self._loaded[str(path)] = ((file_stamp(path),), _Written(table))

    def _convert_written(self, paths: list[Path]) -> None:
        """Convert the tables this run wrote to ``paths`` (and that are unchanged since) in one go
        (:func:`..storage.frames.to_frames`: the frames converting each gives), before a step reads them clip by clip."""
        written = []
        for path in paths:
            entry = self._loaded.get(str(path))
            if entry is not None and isinstance(entry[1], _Written) and entry[0] == (file_stamp(path),):
                written.append((str(path), entry[0], entry[1].table))
        if len(written) < 2:
            return
        for (key, version, _table), frame in zip(written, to_frames([t for _, _, t in written])):
            self._loaded[key] = (version, frame)

    def _cached(self, key: str, paths: list[Path], read):
        """``read()`` of the stored files ``paths``, once per run while none of them changes (several steps of
        a run read the same clip files and tables); one entry per ``key``. A frame is handed out as a
        copy-on-write copy, so a step that changes its input never changes what the next step reads."""
        version = tuple(file_stamp(p) for p in paths)
        entry = self._loaded.get(key)
        if entry is None or entry[0] != version:
            entry = self._loaded[key] = (version, read())
        elif isinstance(entry[1], _Written):
            entry = self._loaded[key] = (version, entry[1].table.to_pandas())
        value = entry[1]
        return value.copy(deep=False) if isinstance(value, pd.DataFrame) else value

    def load_input(self, context: dg.InputContext):
        name = context.asset_key.path[-1]
        if context.has_asset_partitions:
            keys = context.asset_partition_keys
            paths = [self._path(name, k) for k in keys]
            missing = [k for k, p in zip(keys, paths) if not p.exists()]
            if missing and (len(keys) == 1 or context.definition_metadata.get(BY_CLIP)):
                raise dg.Failure(f"{name} has no materialization for clips {', '.join(missing[:20])} "
                                 f"({self._path(name, missing[0])}): materialize them first")
            if context.definition_metadata.get(BY_CLIP):
                self._convert_written(paths)
                return {k: self._cached(str(p), [p], lambda p=p: read_parquet([p])) for k, p in zip(keys, paths)}
            if missing:  # cross-clip tables read the clips that have this table, and say which do not
                context.log.warning(f"{name}: {len(missing)} of {len(keys)} clips not materialized, left out: "
                                    + ", ".join(missing[:20]) + (" …" if len(missing) > 20 else ""))
            consolidated = self.store.consolidated_path(name)
            return self._cached(f"{name} (all clips)", paths, lambda: read_partitions(paths, consolidated))
        path, document = self._path(name, None), self.store.document_path(name)
        if document.exists() and not path.exists():
            return self._cached(str(document), [document], lambda: Catalogue.from_json(document.read_text()))
        if not path.exists() and path.with_suffix(".pickle").exists():
            raise dg.Failure(f"{name} was stored by an earlier version ({path.with_suffix('.pickle')}): "
                             f"materialize {name} again")
        return self._cached(str(path), [path], lambda: read_parquet([path]))


class _Written:
    """An Arrow table the IO manager wrote in this run, converted to a frame when a step first reads it."""

    __slots__ = ("table",)

    def __init__(self, table):
        self.table = table


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
