"""An Inspect AI task over an export (``epic-levels export --out DIR``)::

    inspect eval epic_levels_pipeline/sharing/inspect_task.py@epic_levels --model google/gemini-2.5-flash \\
        -T export=DIR -T condition=clip

One sample per item × condition, the prompt after the clip's cut window (``clip``, ``silenced``) or alone
(``no_clip``). No scorer: the log is scored here by the same rules (``epic-levels import-replies --inspect-log``)."""

from __future__ import annotations

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, ContentText, ContentVideo
from inspect_ai.solver import generate

from epic_levels_pipeline.settings import Paths
from epic_levels_pipeline.sharing.export import load_export

CONDITIONS = ("clip", "no_clip", "silenced")


def sample_id(item_id: str, condition: str) -> str:
    """The Inspect sample id of an item under a condition (read back by the log import)."""
    return f"{item_id}|{condition}"


def media_file(media: Path, clip_id: str, condition: str) -> Path:
    return Path(media) / (f"{clip_id}.silenced.mp4" if condition == "silenced" else f"{clip_id}.mp4")


def samples(export: Path, condition: str, media: Path, formats: list[str] | None = None,
            limit_per_format: int | None = None) -> tuple[list[Sample], int]:
    """(the samples of ``condition``, items left out for want of their clip's video)."""
    if condition not in CONDITIONS:
        raise ValueError(f"condition {condition!r}: one of {', '.join(CONDITIONS)}")
    rows = load_export(export)
    rows = rows[rows["conditions"].map(lambda c: condition in list(c))]
    if formats:
        rows = rows[rows["format"].isin(formats)]
    if limit_per_format:
        rows = rows.groupby("format", sort=True).head(limit_per_format)
    out, missing = [], 0
    for r in rows.itertuples(index=False):
        if condition == "no_clip":
            content = r.prompt
        else:
            video = media_file(media, r.clip_id, condition)
            if not video.exists():
                missing += 1
                continue
            content = [ContentVideo(video=str(video), format="mp4"), ContentText(text=r.prompt)]
        out.append(Sample(id=sample_id(r.item_id, condition), input=[ChatMessageUser(content=content)],
                          target=r.answer, metadata={"item_id": r.item_id, "condition": condition,
                                                     "level": r.level, "subtype": r.subtype, "format": r.format,
                                                     "dataset": r.dataset, "clip_id": r.clip_id}))
    return out, missing


@task
def epic_levels(export: str, condition: str = "no_clip", media: str = "", formats: str = "",
                limit_per_format: int = 0) -> Task:
    """The export's items under one condition (``formats``: comma-separated, default all)."""
    folder = Path(media) if media else Paths.default().media / "clips"
    chosen, missing = samples(Path(export), condition, folder, [f for f in formats.split(",") if f] or None,
                              limit_per_format or None)
    return Task(dataset=MemoryDataset(chosen, name=f"epic-levels/{condition}", location=str(export)),
                solver=generate(), metadata={"condition": condition, "items_without_video": missing})
