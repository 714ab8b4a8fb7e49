"""Old module paths keep working: the core modules before the stage packages, and what became of them.

Users' scripts and stored artefacts name modules by path (``data/assets/entity_catalogue.pickle`` names
``epic_levels_pipeline.catalogue.Catalogue``). :data:`MOVED` maps each former top-level module to the module
that now holds its code; importing a former name gives a thin module that forwards attribute access there, so
``from epic_levels_pipeline.catalogue import Catalogue`` and unpickling old files both find the same class.
Four former modules share their name with the stage package that replaced them (``annotations``,
``formats``, ``responses``, ``scoring``); those packages forward their former module's names with
:func:`forward_to`.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import pkgutil
import sys
import types

PACKAGE = __name__.rpartition(".")[0]
MOVED = {
    "clips": "annotations.clips", "catalogue": "annotations.catalogue", "language": "annotations.language",
    "levels": "bank.levels", "clip_view": "bank.clip_view", "subtypes": "bank.subtypes",
    "solvers": "bank.solvers", "distractors": "bank.distractors", "questions": "bank.build",
    "audits": "bank.checks", "parsing": "formats.parsing", "responders": "responses.offline",
    "calls": "responses.calls", "call_cache": "responses.cache", "media": "responses.media",
    "gemini": "responses.providers.gemini", "judge_audit": "scoring.judge_audit",
    "stats": "scoring.metrics.stats", "tables": "scoring.metrics.tables", "report": "reporting.report",
    "mcq_import": "imports.hd_epic_vqa", "orchestrate": "orchestration.local",
    "distributed": "orchestration.distributed",
}
SAME_NAME = {"annotations": "annotations.readers", "formats": "formats.items", "responses": "responses.runner",
             "scoring": "scoring.verdicts"}


def forward_to(package: str, module: str):
    """A module ``__getattr__`` for ``package`` that finds the names of ``module`` (its former contents).

    Submodule names are left to the import system, so ``package.sub`` still imports ``sub``.
    """
    submodules = {m.name for m in pkgutil.iter_modules(sys.modules[package].__path__)}

    def __getattr__(name: str):
        if name.startswith("__") or name in submodules:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        target = importlib.import_module(f"{PACKAGE}.{module}")
        try:
            return getattr(target, name)
        except AttributeError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None

    return __getattr__


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports a former module path as a module forwarding to its new home."""

    def find_spec(self, fullname, path=None, target=None):
        parent, _, name = fullname.rpartition(".")
        if parent == PACKAGE and name in MOVED:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        new = f"{PACKAGE}.{MOVED[module.__name__.rpartition('.')[2]]}"
        module.__doc__ = f"Moved to :mod:`{new}`; this name forwards there."
        module.__getattr__ = lambda name: getattr(importlib.import_module(new), name)


def install() -> None:
    """Register the finder for former module paths (once)."""
    if not any(isinstance(f, _MovedModules) for f in sys.meta_path):
        sys.meta_path.append(_MovedModules())
