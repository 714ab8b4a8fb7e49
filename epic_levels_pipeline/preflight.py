"""The pre-flight: every input a run reads, checked before any step of it runs (pure core: no Dagster).

``epic-levels run`` runs it before it starts anything (one line per problem, exit 2); the project's run
launcher (``orchestration/launcher.py``) runs the same checks when the UI, a sensor or the schedule starts a run,
and fails that run with the lines as its message, before any step. A check is a function of the run's
:class:`RunInputs` returning its problems, one line each (``FILE: where: what``); :data:`CHECKS` lists them in the
order they run. Adding a check is one function and one entry in :data:`CHECKS`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from .annotations.clip_keys import ManifestRow, read_manifest_rows
from .annotations.clips import Clip, manifest_against_annotations
from .annotations.readers import Annotations, load_annotations
from .errors import AnnotationError, ClipKeyError, ManifestError
from .plan import PlanError, flags_from_config, model_problems, resolve_plan
from .settings import ConfigError, Paths, config_problems
from .terminal import printable

#: How the annotations root is chosen, said when it cannot be read.
ROOT_SOURCES = "--annotations, $EPIC_LEVELS_ANNOTATIONS, [data].annotations of epic-levels.toml, else data/annotations"


@dataclass
class RunInputs:
    """What a run reads: the project's files (``paths``), the clips asked for (``clip_keys``; None: the
    manifest's) and the run's ``evaluation`` resource configuration (models, judge, models file). Each input is
    read once, whichever checks ask for it; ``notes`` collects what is kept and reported rather than refused."""

    paths: Paths
    evaluation: Mapping[str, Any] = field(default_factory=dict)
    clip_keys: list[str] | None = None
    notes: list[str] = field(default_factory=list)

    @cached_property
    def annotations_root(self) -> Path | None:
        """The annotations root, None when epic-levels.toml cannot say it (:func:`check_project_file` tells why)."""
        try:
            return self.paths.annotations
        except ConfigError:
            return None

    @cached_property
    def manifest(self) -> list[ManifestRow] | ManifestError:
        try:
            return read_manifest_rows(self.paths.manifest)
        except ManifestError as exc:
            return exc

    @cached_property
    def annotations(self) -> Annotations | AnnotationError | None:
        root = self.annotations_root
        if root is None or not root.is_dir():
            return None
        try:
            return load_annotations(root)
        except AnnotationError as exc:
            return exc


Check = Callable[[RunInputs], list[str]]


def check_project_file(inputs: RunInputs) -> list[str]:
    """``epic-levels.toml``: unknown tables and keys, values of the wrong type, TOML syntax."""
    return config_problems(inputs.paths.root)


def check_models(inputs: RunInputs) -> list[str]:
    """The models: the models file (the run's ``model_config_file``, else ``$EPIC_LEVELS_MODEL_CONFIG``, else
    ``models.toml`` at the project root when there is one) read by its own loader; the run's plan (the declared
    models, ``--models`` within them, the judge not a judged model unless allowed); every model the run calls has
    its key (none at a loopback endpoint) and an endpoint that answers."""
    try:
        plan = resolve_plan(inputs.paths.root, flags_from_config(inputs.evaluation), os.environ)
    except PlanError as exc:
        return list(exc.problems)
    return model_problems(plan, os.environ)


def check_annotations_root(inputs: RunInputs) -> list[str]:
    """The annotations root exists and its files load (``epic-levels validate`` lists every problem)."""
    root = inputs.annotations_root
    if root is None:
        return []
    if not root.is_dir():
        return [f"{root}: the annotations root is not a folder ({'no such folder' if not root.exists() else 'a file'}; "
                f"chosen by {ROOT_SOURCES})"]
    loaded = inputs.annotations
    if isinstance(loaded, AnnotationError):
        first = loaded.problems[0] if loaded.problems else "?"
        more = f"; {len(loaded.problems) - 1} more" if len(loaded.problems) > 1 else ""
        return [f"{root}: annotation files not valid: {first}{more} (`epic-levels validate` lists every problem)"]
    return []


def check_manifest(inputs: RunInputs) -> list[str]:
    """The clip manifest (``data/clips.csv``) reads: columns, numbers, windows, no clip twice."""
    found = inputs.manifest
    return [str(found)] if isinstance(found, ManifestError) else []


def check_clips_against_annotations(inputs: RunInputs) -> list[str]:
    """Every clip of the run is backed by the annotations: its video has rows in its dataset's tables and its
    window ends inside the video (rows marked ``deliberate`` are kept and go to ``notes``)."""
    rows, ann = inputs.manifest, inputs.annotations
    if isinstance(rows, ManifestError) or not isinstance(ann, Annotations):
        return []
    listed, given = rows, []
    if inputs.clip_keys:  # the clips asked for: a manifest row each, or (not listed) their place on the command line
        by_key = {row.clip.key: row for row in rows}
        listed = []
        for n, key in enumerate(inputs.clip_keys, start=1):
            try:
                clip = Clip.from_key(key)
            except ClipKeyError as exc:
                return [f"--clips: {printable(exc)}"]
            (listed.append(by_key[clip.key]) if clip.key in by_key else given.append(ManifestRow(clip, n)))
    refused, kept = manifest_against_annotations(ann, listed, str(inputs.paths.manifest))
    more_refused, more_kept = manifest_against_annotations(ann, given, "--clips")
    inputs.notes.extend(str(p) for p in kept + more_kept)
    return [str(p) for p in refused + more_refused]


#: The checks every run passes before it starts, in order.
CHECKS: list[Check] = [
    check_project_file,
    check_models,
    check_annotations_root,
    check_manifest,
    check_clips_against_annotations,
]


@dataclass(frozen=True)
class Preflight:
    """The pre-flight's findings: ``problems`` refuse the run (one line each), ``notes`` are reported."""

    problems: list[str]
    notes: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def preflight(inputs: RunInputs, checks: list[Check] | None = None) -> Preflight:
    """Run every check (:data:`CHECKS` unless given) on the run's inputs."""
    problems: list[str] = []
    inputs.notes.clear()
    for check in CHECKS if checks is None else checks:
        problems += check(inputs)
    return Preflight(problems, list(inputs.notes))


__all__ = ["CHECKS", "Check", "Preflight", "RunInputs", "check_annotations_root", "check_clips_against_annotations",
           "check_manifest", "check_models", "check_project_file", "preflight"]
