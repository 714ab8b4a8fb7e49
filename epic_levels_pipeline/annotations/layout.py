"""Which files of an annotations root are read: the upstream repositories as cloned, the bundled
``data/annotations/`` layout, or the files in the root. :data:`UPSTREAM_FILES` says where each logical file may
sit, in order of preference; a matching second copy is shadowed (listed, not read), test-split files are skipped
with a count. The rules: docs/design/annotations.md."""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .file_kinds import file_kind

#: Where each upstream repository may sit under an annotations root, in order of preference: the clone's own
#: name, this repository's bundled folder name, the root itself.
REPOSITORY_FOLDERS: dict[str, tuple[str, ...]] = {
    "epic-sounds-annotations": ("epic-sounds-annotations", "epic-sounds", ""),
    "epic-kitchens-100-annotations": ("epic-kitchens-100-annotations", "epic-kitchens-100", ""),
    "hd-epic-annotations": ("hd-epic-annotations", "hd-epic", ""),
}

#: Dataset of the clips each repository's files annotate (EPIC-KITCHENS-100 narrations go with EPIC-SOUNDS).
REPOSITORY_DATASET = {"epic-sounds-annotations": "epic_sounds", "epic-kitchens-100-annotations": "epic_sounds",
                      "hd-epic-annotations": "hd_epic"}


@dataclass(frozen=True)
class LogicalFile:
    """One upstream file: its repository, its paths inside the repository (preferred first), its split
    (``train``, ``validation``, ``test`` or ``None`` for files of every split) and role (``read`` or ``test``:
    the test split's unlabelled timestamps, skipped with a count)."""

    name: str
    repository: str
    paths: tuple[str, ...]
    split: str | None = None
    role: str = "read"

    @property
    def dataset(self) -> str:
        return REPOSITORY_DATASET[self.repository]

    def candidates(self) -> list[str]:
        """Relative paths (globs allowed) under an annotations root, in the order they are tried."""
        out = []
        for folder in REPOSITORY_FOLDERS[self.repository]:
            for path in self.paths:
                out.append(f"{folder}/{path}" if folder else path)
        return out

    def file_names(self) -> list[str]:
        """The file-name patterns of this logical file (to find shadowed copies anywhere under the root)."""
        return sorted({p.rsplit("/", 1)[-1] for p in self.paths})


_S, _K, _H = "epic-sounds-annotations", "epic-kitchens-100-annotations", "hd-epic-annotations"

#: Every upstream file epic-levels knows, with its candidate paths (see :meth:`LogicalFile.candidates`).
UPSTREAM_FILES: list[LogicalFile] = [
    # EPIC-SOUNDS (github.com/epic-kitchens/epic-sounds-annotations)
    LogicalFile("epic_sounds_train", _S, ("EPIC_Sounds_train.csv",), "train"),
    LogicalFile("epic_sounds_validation", _S, ("EPIC_Sounds_validation.csv",), "validation"),
    LogicalFile("epic_sounds_not_categorised", _S, ("sound_events_not_categorised.csv",)),
    LogicalFile("epic_sounds_recognition_test", _S, ("EPIC_Sounds_recognition_test_timestamps.csv",
                                                     "EPIC_Sounds_recognition_test_timestamps.pkl"), "test", "test"),
    LogicalFile("epic_sounds_detection_test", _S, ("EPIC_Sounds_detection_test_videos.csv",), "test", "test"),
    # EPIC-KITCHENS-100 (github.com/epic-kitchens/epic-kitchens-100-annotations)
    LogicalFile("epic_100_train", _K, ("EPIC_100_train.csv", "EPIC_100_train.pkl"), "train"),
    LogicalFile("epic_100_validation", _K, ("EPIC_100_validation.csv", "EPIC_100_validation.pkl"), "validation"),
    LogicalFile("epic_100_test", _K, ("EPIC_100_test_timestamps.csv", "EPIC_100_test_timestamps.pkl"), "test", "test"),
    LogicalFile("epic_100_video_info", _K, ("EPIC_100_video_info.csv",)),
    LogicalFile("epic_100_noun_classes", _K, ("EPIC_100_noun_classes.csv",)),
    LogicalFile("epic_100_verb_classes", _K, ("EPIC_100_verb_classes.csv",)),
    # HD-EPIC (github.com/hd-epic/hd-epic-annotations); it has no train/validation split
    LogicalFile("hd_epic_activities", _H, ("high-level/activities/P*_recipe_timestamps.csv",)),
    LogicalFile("hd_epic_recipes", _H, ("high-level/complete_recipes.json",)),
    LogicalFile("hd_epic_object_tracks", _H, ("scene-and-object-movements/assoc_info.json",)),
    LogicalFile("hd_epic_noun_classes", _H, ("narrations-and-action-segments/HD_EPIC_noun_classes.csv",)),
    LogicalFile("hd_epic_verb_classes", _H, ("narrations-and-action-segments/HD_EPIC_verb_classes.csv",)),
    LogicalFile("hd_epic_video_info", _H, ("youtube-links/HD_EPIC_YouTube_URLs.csv",)),
    LogicalFile("hd_epic_sounds", _H, ("audio-annotations/HD_EPIC_Sounds.csv", "audio-annotations/HD_EPIC_Sounds.pkl")),
    LogicalFile("hd_epic_narrations", _H, ("narrations-and-action-segments/HD_EPIC_Narrations.pkl",)),
]


def logical_file(name: str) -> LogicalFile:
    for entry in UPSTREAM_FILES:
        if entry.name == name:
            return entry
    raise KeyError(f"no logical annotation file {name!r}; known: {', '.join(e.name for e in UPSTREAM_FILES)}")


@dataclass
class Layout:
    """What :func:`locate` found under an annotations root."""

    root: Path
    found: dict[str, list[Path]] = field(default_factory=dict)   # logical file -> files read for it
    extra: list[Path] = field(default_factory=list)              # read by name, not in the table
    shadowed: dict[Path, Path] = field(default_factory=dict)     # file not read -> the file read instead
    test: dict[Path, int] = field(default_factory=dict)          # test-split file -> its rows (skipped)
    no_reader: list[Path] = field(default_factory=list)          # in the table, but no reader accepts it yet
    other: list[Path] = field(default_factory=list)              # files no reader accepts

    @property
    def files(self) -> list[Path]:
        """Every file to read, in a stable order."""
        return sorted({p for paths in self.found.values() for p in paths} | set(self.extra))

    @property
    def skipped(self) -> list[Path]:
        return sorted(set(self.shadowed) | set(self.test) | set(self.no_reader) | set(self.other))

    def describe(self) -> list[str]:
        """Plain lines: which repository folder each logical file came from, and what was skipped."""
        lines = []
        for name, paths in sorted(self.found.items()):
            shown = ", ".join(str(p.relative_to(self.root)) for p in paths[:3]) + (f" (+{len(paths) - 3})" if len(paths) > 3 else "")
            lines.append(f"{name}: {shown}")
        for path in self.extra:
            lines.append(f"(by name): {path.relative_to(self.root)}")
        for path, rows in sorted(self.test.items()):
            lines.append(f"skipped, test split without labels: {path.relative_to(self.root)} ({rows:,} rows)")
        for path, instead in sorted(self.shadowed.items()):
            lines.append(f"skipped, another copy is read: {path.relative_to(self.root)} (read: {instead.relative_to(self.root)})")
        for path in self.no_reader:
            lines.append(f"skipped, no reader for this file yet: {path.relative_to(self.root)}")
        return lines


_SPLIT = re.compile(r"(?:^|_)(train|validation|test)(?:_|\.|$)")


def split_from_name(file_name: str) -> str | None:
    """``train`` / ``validation`` / ``test`` when the file name says so (``EPIC_100_train_P02_133_partial.csv``)."""
    m = _SPLIT.search(file_name)
    return m.group(1) if m else None


def _walk(root: Path) -> list[Path]:
    """Every regular file under ``root``, hidden folders (``.git``) left out, sorted."""
    out = []
    for folder, dirs, files in os.walk(root, followlinks=True):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        out += [Path(folder) / f for f in files if (Path(folder) / f).is_file()]
    return sorted(out)


def _count_rows(path: Path) -> int:
    if path.suffix != ".csv":
        return 0
    with open(path, "rb") as f:
        return max(sum(1 for line in f if line.strip()) - 1, 0)


def locate(root: Path) -> Layout:
    """The files to read under ``root`` (see the module's notes), and every file skipped with its reason."""
    root = Path(root)
    layout = Layout(root)
    every = _walk(root)
    claimed: dict[Path, str] = {}
    for entry in UPSTREAM_FILES:
        for candidate in entry.candidates():
            matches = sorted(p for p in root.glob(candidate) if p.is_file())
            if matches:
                for p in matches:
                    claimed.setdefault(p, entry.name)
                break
    by_entry: dict[str, list[Path]] = {}
    for path, name in claimed.items():
        by_entry.setdefault(name, []).append(path)
    for name, paths in by_entry.items():
        entry = logical_file(name)
        paths = sorted(paths)
        if entry.role == "test":
            for p in paths:
                layout.test[p] = _count_rows(p)
            continue
        readable = [p for p in paths if file_kind(p) is not None]
        layout.no_reader += [p for p in paths if file_kind(p) is None]
        if readable:
            layout.found[name] = readable
    for path in every:
        if path in claimed:
            continue
        owner = next((e for e in UPSTREAM_FILES if e.name in by_entry
                      and any(fnmatch.fnmatchcase(path.name, n) for n in e.file_names())), None)
        if owner is not None:
            if owner.role == "test":
                layout.test[path] = _count_rows(path)
            else:
                layout.shadowed[path] = sorted(by_entry[owner.name])[0]
        elif file_kind(path) is not None:
            layout.extra.append(path)
        else:
            layout.other.append(path)
    layout.no_reader.sort()
    return layout
