"""Reading an annotations folder into :class:`Annotations` (typed tables, times in seconds), every problem reported
with file, row and column. Zero-length rows are dropped and counted, inverted rows are errors unless a known
erratum; unlabelled moments are kept, flagged. The rules: docs/design/annotations.md."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..errors import AnnotationError, Problem
from .canonical import TABLE_COLUMNS, Loaded, empty_table
from .csv_readers import _read_activities
from .file_kinds import FILE_KINDS, file_kind
from .layout import locate
from .validation import _display


def discover(paths: list[Path]) -> tuple[list[Path], list[Path]]:
    """Expand folders (each an annotations root: :func:`.layout.locate` decides which of its files are read);
    return (annotation files, files skipped: test split, shadowed copies, files no kind reads)."""
    found: list[Path] = []
    skipped: list[Path] = []
    for path in paths:
        if path.is_dir():
            layout = locate(path)
            found += layout.files
            skipped += layout.skipped
        else:
            found.append(path)  # named explicitly: an unknown file is itself a problem
    return found, skipped


def read_file(path: Path, durations: dict[str, float] | None = None) -> Loaded:
    if not path.exists():
        return Loaded("missing", "-", pd.DataFrame(), [Problem(_display(path), 0, "-", "no such file or folder")])
    kind = file_kind(path)
    if kind is None:
        patterns = "; ".join(k.pattern for k in FILE_KINDS)
        return Loaded("unknown", "-", pd.DataFrame(),
                      [Problem(_display(path), 0, "-", f"not an annotation file epic-levels reads (names: {patterns})")])
    if kind.name == "hd_epic_activities":
        return _read_activities(path, durations)
    return kind.reader(path)


# ----------------------------------------------------------------------------------------------------
# All annotations of a data folder
# ----------------------------------------------------------------------------------------------------


@dataclass
class Annotations:
    """The typed tables of one annotation folder, plus what was dropped on the way and why."""

    sounds: pd.DataFrame
    narrations: pd.DataFrame
    activities: pd.DataFrame
    recipe_steps: pd.DataFrame
    object_tracks: pd.DataFrame
    vocabulary: pd.DataFrame
    videos: pd.DataFrame
    files: list[str] = field(default_factory=list)
    dropped: list[Problem] = field(default_factory=list)

    def table(self, name: str) -> pd.DataFrame:
        return getattr(self, name)

    def dropped_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for p in self.dropped:
            reason = p.message.split(";")[0].split(" (")[0]
            counts[reason] = counts.get(reason, 0) + 1
        return counts


def read_tables(files: list[Path]) -> tuple[dict[str, pd.DataFrame], list[Problem]]:
    """Read files (videos first, so HD-EPIC ``end`` can resolve) into canonical tables."""
    problems: list[Problem] = []
    loaded: dict[str, list[pd.DataFrame]] = {name: [] for name in TABLE_COLUMNS}
    video_files = [f for f in files if (k := file_kind(f)) and k.table == "videos"]
    durations: dict[str, float] = {}
    for f in video_files:
        result = read_file(f)
        problems += result.problems
        loaded["videos"].append(result.frame)
        durations.update(dict(zip(result.frame["video_id"], result.frame["duration_s"])))
    for f in files:
        if f in video_files:
            continue
        result = read_file(f, durations)
        problems += result.problems
        if result.table in loaded:
            loaded[result.table].append(result.frame)
    tables = {}
    for name, frames in loaded.items():
        frames = [f for f in frames if len(f)]
        tables[name] = pd.concat(frames, ignore_index=True) if frames else empty_table(name)
    # Ids must be unique across files of one kind too (a sound id in two files would be ambiguous).
    for name, id_col in (("sounds", "annotation_id"), ("narrations", "narration_id")):
        t = tables[name]
        dup = t[id_col].duplicated(keep="first")
        for _, r in t.loc[dup].iterrows():
            problems.append(Problem(r["source_file"], int(r["source_row"]), id_col, f"duplicate id {r[id_col]!r} (also in another file)"))
    return tables, problems


def load_annotations(root: Path) -> Annotations:
    """Read every annotation file under ``root``; raise :class:`AnnotationError` on any error."""
    files, _ = discover([root])
    if not files:
        raise AnnotationError([Problem(str(root), 0, "-", "no annotation files found")])
    tables, problems = read_tables(files)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise AnnotationError(errors)
    return Annotations(**tables, files=[str(f) for f in files], dropped=[p for p in problems if p.severity == "dropped"])


def files_fingerprint(root: Path, extra: list[Path] | None = None) -> str:
    """A content hash of every annotation file under ``root`` (plus ``extra`` files such as the manifest):
    changes exactly when a byte of a file read by epic-levels changes, or a file appears or goes."""
    import hashlib

    files, _ = discover([root]) if root.exists() else ([], [])
    digest = hashlib.sha256()
    for path in sorted(files) + sorted(p for p in (extra or []) if p.exists()):
        digest.update(str(path.relative_to(root) if path.is_relative_to(root) else path.name).encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def validate_paths(paths: list[Path]) -> tuple[list[Problem], list[Path], list[Path]]:
    """Every problem in the given files/folders; also the files read and the files skipped."""
    files, skipped = discover(paths)
    _, problems = read_tables(files)
    return problems, files, skipped
