"""Where a project's files live. One place decides it; everything else asks.

The project root is ``$EPIC_LEVELS_HOME``, else the nearest folder upwards holding ``data/clips.csv``, else the
working directory; every output is under its ``data/``. The annotations root and the media root may live
elsewhere: the command line's flag, else the environment (``EPIC_LEVELS_ANNOTATIONS``, ``EPIC_LEVELS_MEDIA_ROOT``),
else ``[data]`` in ``epic-levels.toml``, else the bundled default (docs/design/storage.md)."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .terminal import printable

#: The project file (at the project root) and its table of data locations.
CONFIG_FILE = "epic-levels.toml"
CONFIG_TABLE = "data"
#: Environment variables of the two locations (the command line's flags set them for one command).
ANNOTATIONS_ENV = "EPIC_LEVELS_ANNOTATIONS"
MEDIA_ENV = "EPIC_LEVELS_MEDIA_ROOT"


class ConfigError(ValueError):
    """The project file cannot be read; the message names it (FILE: [data].key or FILE:LINE)."""


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

    annotations_root: Path | None = None  # a command's --annotations (wins over everything else)
    media_root: Path | None = None        # a command's --media

    @classmethod
    def default(cls, annotations: str | Path | None = None, media: str | Path | None = None) -> "Paths":
        """The project's paths; ``annotations`` / ``media``: the roots a command was given (else the environment, the
        project file, the default)."""
        return cls(project_root()).with_roots(annotations, media)

    def with_roots(self, annotations: str | Path | None = None, media: str | Path | None = None) -> "Paths":
        """These paths with the annotations and media roots given (left as they are where None or empty)."""
        from dataclasses import replace

        changes = {}
        if annotations:
            changes["annotations_root"] = Path(annotations).expanduser().resolve()
        if media:
            changes["media_root"] = Path(media).expanduser().resolve()
        return replace(self, **changes) if changes else self

    @property
    def data(self) -> Path:
        return self.root / "data"

    def config(self) -> dict:
        """The ``[data]`` table of ``epic-levels.toml`` (empty when the file does not exist)."""
        return read_config(self.root)

    def _located(self, env: str, key: str, default: Path, given: Path | None = None) -> Path:
        if given is not None:
            return given
        value = os.environ.get(env, "").strip()
        if value:
            return Path(value).expanduser().resolve()
        value = self.config().get(key)
        if value:
            path = Path(value).expanduser()
            return path if path.is_absolute() else (self.root / path).resolve()
        return default

    @property
    def annotations(self) -> Path:
        """The annotations root (flag / ``EPIC_LEVELS_ANNOTATIONS`` / ``[data].annotations`` / data/annotations)."""
        return self._located(ANNOTATIONS_ENV, "annotations", self.data / "annotations", self.annotations_root)

    @property
    def source_media(self) -> Path:
        """Where source videos are looked for (flag / ``EPIC_LEVELS_MEDIA_ROOT`` / ``[data].media`` / data/media)."""
        return self._located(MEDIA_ENV, "media", self.media, self.media_root)

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
        """``data/media``: the default media root, and where cut clips go (``clips/``)."""
        return self.data / "media"

    @property
    def reports(self) -> Path:
        return self.data / "reports"

    @property
    def dagster_home(self) -> Path:
        return self.root


#: The tables of ``epic-levels.toml`` and the keys each may hold; anything else in the file is an error.
CONFIG_KEYS = {CONFIG_TABLE: ("annotations", "media")}


def config_problems(root: Path) -> list[str]:
    """Every problem of ``<root>/epic-levels.toml``, one line each (``FILE: [table].key: message``); none when the
    file is absent. Unknown tables, keys outside a table, unknown keys and values that are not strings are
    errors that list what is known."""
    return _read_config(root)[1]


def read_config(root: Path) -> dict:
    """The ``[data]`` table of ``<root>/epic-levels.toml`` (empty when the file does not exist); raises
    :class:`ConfigError` listing every problem of :func:`config_problems`."""
    table, problems = _read_config(root)
    if problems:
        raise ConfigError("\n".join(problems))
    return table


def _read_config(root: Path) -> tuple[dict, list[str]]:
    path = Path(root) / CONFIG_FILE
    if not path.exists():
        return {}, []
    try:
        raw = tomllib.loads(path.read_text("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        return {}, [f"{path}: {printable(exc)}"]
    except (OSError, UnicodeDecodeError) as exc:
        return {}, [f"{path}: cannot read: {printable(exc)}"]
    tables = ", ".join(f"[{name}]" for name in CONFIG_KEYS)
    problems = []
    for name, value in raw.items():
        if name not in CONFIG_KEYS:
            what = "unknown table" if isinstance(value, dict) else "unknown key outside any table"
            problems.append(f"{path}: {_shown(name, isinstance(value, dict))}: {what} (known tables: {tables})")
        elif not isinstance(value, dict):
            problems.append(f"{path}: [{name}] must be a table")
    table = raw.get(CONFIG_TABLE, {})
    table = table if isinstance(table, dict) else {}
    known = CONFIG_KEYS[CONFIG_TABLE]
    for key, value in table.items():
        if key not in known:
            problems.append(f"{path}: [{CONFIG_TABLE}].{printable(key)}: unknown key (known: {', '.join(known)})")
        elif not isinstance(value, str):
            problems.append(f"{path}: [{CONFIG_TABLE}].{key}: must be a string (a folder path)")
    return table, problems


def _shown(name: str, table: bool) -> str:
    return f"[{printable(name)}]" if table else printable(name)
