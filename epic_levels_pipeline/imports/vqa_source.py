"""HD-EPIC's VQA benchmark as a source of the pipeline (dataset ``hd_epic_vqa``): its files under the annotations root
(none: empty tables, saying why), one partition per video (also the bootstrap cluster), level
``imported:<category>``, and what the offline responders may know (docs/design/hd-epic-vqa-import.md)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..annotations.layout import REPOSITORY_FOLDERS
from .vqa_conversion import ITEM_COLUMNS, QUESTION_COLUMNS, REPORT_COLUMNS, SKIPPED_COLUMNS, _expand, import_files
from .vqa_reading import DATASET

VQA_FOLDER = "vqa-benchmark"
#: HD-EPIC's question categories, as the prototype file names start (``ingredient_ingredient_weight``).
CATEGORIES = ("3d_perception", "fine_grained", "object_motion", "ingredient", "recipe", "nutrition", "gaze")
IMPORTED_LEVEL = "imported:"  # a level of this form is a source's category, never an evidence level (L1-L4)
LEVELLED_BY = "imported"
SOURCE_ITEM_COLUMNS = ITEM_COLUMNS + ["levelled_by"]


def find_vqa_folder(annotations_root: Path) -> Path | None:
    """The first ``vqa-benchmark`` folder of the HD-EPIC repository under ``annotations_root`` (None: none)."""
    for folder in REPOSITORY_FOLDERS["hd-epic-annotations"]:
        candidate = Path(annotations_root) / folder / VQA_FOLDER if folder else Path(annotations_root) / VQA_FOLDER
        if candidate.is_dir():
            return candidate
    return None


def category_of(prototype: str) -> str:
    """The HD-EPIC category a prototype belongs to (its known prefix, else its first word)."""
    for category in CATEGORIES:
        if prototype == category or prototype.startswith(category + "_"):
            return category
    return prototype.split("_", 1)[0]


def level_of(prototype: str) -> str:
    """``imported:<category>``: the level column of an imported question."""
    return IMPORTED_LEVEL + category_of(prototype)


def is_imported_level(level) -> bool:
    return isinstance(level, str) and level.startswith(IMPORTED_LEVEL)


def partition_key(video_id: str) -> str:
    """The partition (and bootstrap cluster) of a question: ``hd_epic_vqa__<first input's video>``."""
    return f"{DATASET}__{video_id}"


@dataclass
class VqaSource:
    """What :func:`load_source` found: the converted tables, the report, and why there is nothing if so."""

    questions: pd.DataFrame
    items: pd.DataFrame
    report: pd.DataFrame
    skipped: pd.DataFrame
    folder: Path | None = None
    note: str = ""
    files: list[Path] = field(default_factory=list)

    @property
    def partitions(self) -> list[str]:
        return sorted(set(self.items["clip_key"])) if len(self.items) else []

    def skipped_by_reason(self) -> dict[str, int]:
        return dict(sorted(Counter(self.skipped["reason"]).items())) if len(self.skipped) else {}


def empty_source(note: str, folder: Path | None = None) -> VqaSource:
    return VqaSource(pd.DataFrame(columns=QUESTION_COLUMNS + ["clip_key", "level"]),
                     pd.DataFrame(columns=SOURCE_ITEM_COLUMNS), pd.DataFrame(columns=REPORT_COLUMNS),
                     pd.DataFrame(columns=SKIPPED_COLUMNS), folder, note)


def load_source(annotations_root: Path, *, strict: bool = False, seed: int | None = None) -> VqaSource:
    """Import every VQA file under ``annotations_root`` (:func:`find_vqa_folder`) as pipeline tables:
    items and questions with ``clip_key`` = :func:`partition_key` and ``level`` = :func:`level_of`.

    Raises :class:`.vqa_reading.VqaFileError` for an unusable file (every problem ``FILE:QID:FIELD``), and
    with ``strict`` for an unconvertible question too; otherwise those are skipped and counted.
    """
    folder = find_vqa_folder(annotations_root)
    if folder is None:
        return empty_source(f"no {VQA_FOLDER}/ folder of HD-EPIC under {annotations_root}: no imported questions")
    files = _expand([folder])
    if not files:
        return empty_source(f"no *.json files in {folder}: no imported questions", folder)
    skipped: list[dict] = []
    kwargs = {} if seed is None else {"seed": seed}
    questions, items, report = import_files([folder], strict=strict, skipped=skipped, **kwargs)
    if len(items):
        items["clip_key"] = [partition_key(v) for v in items["video_id"]]
        items["level"] = [level_of(p) for p in items["prototype"]]
    items["levelled_by"] = LEVELLED_BY
    questions["clip_key"] = [partition_key(v) for v in questions["video_id"]]
    questions["level"] = [level_of(p) for p in questions["prototype"]]
    return VqaSource(questions.reset_index(drop=True), items[SOURCE_ITEM_COLUMNS].reset_index(drop=True), report,
                     pd.DataFrame(skipped, columns=SKIPPED_COLUMNS), folder, "", files)


def answer_pools(questions: pd.DataFrame) -> dict[tuple[str, str], list[str]]:
    """Every choice of the imported questions per (prototype, answer type), as often as it occurs: the corpus a
    text-only responder sees (the chance responder's open replies, the blind responder's frequency prior)."""
    pools: dict[tuple[str, str], list[str]] = {}
    for q in questions[["prototype", "answer_type", "options"]].itertuples(index=False):
        pools.setdefault((q.prototype, q.answer_type), []).extend(str(o) for o in q.options)
    return pools


def source_scores(partials: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """The ``scores`` rows of imported questions, from their ``score_partials`` (the same combine as the
    clips'), without the roll-ups over datasets: an imported category is not a level, so its questions are
    never pooled with the levelled ones; every row keeps dataset ``hd_epic_vqa``."""
    from ..scoring.metrics.partials import scores_from_partials

    frame = scores_from_partials(partials, n_boot=n_boot, seed=seed)
    return frame[frame["dataset"] != "*"].reset_index(drop=True)
