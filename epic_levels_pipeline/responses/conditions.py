"""The conditions an item is asked under: ``clip`` (video with audio), ``no_clip`` (text only; every format),
``silenced`` (same video, audio replaced by silence) where the clip's audio is annotated — every ``epic_sounds``
clip, and an ``hd_epic`` clip whose window holds HD-EPIC Sounds rows (the items' ``audio_annotated``, decided once
per clip by :func:`..annotations.clip_rows.audio_annotated` when the items are built)."""

from __future__ import annotations

import numpy as np

from ..bank.levels import STREAMS

CONDITIONS = ("clip", "no_clip", "silenced")
ALL_STREAMS = set(STREAMS)


def conditions_for(audio_annotated: bool) -> tuple[str, ...]:
    """The conditions an item is asked under, in :data:`CONDITIONS` order: ``silenced`` only where its clip's audio
    is annotated (the ``audio_annotated`` of its row of ``items``), since only there can silencing take away
    evidence a reply may rest on."""
    if not isinstance(audio_annotated, (bool, np.bool_)):  # a missing value (NaN counts as true) is no answer
        raise ValueError(f"audio_annotated is {audio_annotated!r}, not true or false: items written before items "
                         "said their conditions lack it (materialize the items again)")
    return CONDITIONS if audio_annotated else ("clip", "no_clip")


def items_by_condition(items: list) -> list[tuple[str, list]]:
    """``(condition, the items asked under it)`` in :data:`CONDITIONS` order, for rows of ``items`` (each item's
    own :func:`conditions_for`); a condition no item is asked under is left out."""
    out = []
    for condition in CONDITIONS:
        asked = [item for item in items if condition in conditions_for(item.audio_annotated)]
        if asked:
            out.append((condition, asked))
    return out


def perceived_streams(condition: str) -> set[str]:
    if condition == "clip":
        return set(ALL_STREAMS)
    if condition == "silenced":
        return ALL_STREAMS - {"sound"}
    if condition == "no_clip":
        return set()
    raise ValueError(f"unknown condition {condition!r} (known: {', '.join(CONDITIONS)})")
