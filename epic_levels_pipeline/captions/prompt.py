"""The caption prompt: one per clip × condition (``clip``, ``silenced`` where the clip's audio is annotated,
``no_clip``), asking for the JSON of :mod:`.schema`."""

from __future__ import annotations

import json

from ..responses.conditions import conditions_for as _asked_under
from .schema import caption_json_schema
from .sources import Clip

CONDITIONS = ("clip", "silenced", "no_clip")


def conditions_for(audio_annotated: bool) -> tuple[str, ...]:
    """The QA track's conditions of a clip (:func:`..responses.conditions.conditions_for`: ``silenced`` needs its
    audio annotated to mean anything), in the caption track's order (:data:`CONDITIONS`)."""
    asked = _asked_under(audio_annotated)
    return tuple(c for c in CONDITIONS if c in asked)


_ACTIONS = {
    "epic_sounds": "each thing the camera wearer does with their hands, one action per verb and object "
                   "(e.g. verb 'wash', noun 'blueberries', 'wash the blueberries')",
    "hd_epic": "each time an object is moved (picked up, carried, put down), one action per movement of one "
               "object (verb 'move', noun the object, e.g. 'move the knife')",
}

_SEEN = {
    "clip": "You are given a {d:g}-second egocentric kitchen video clip with its audio.",
    "silenced": "You are given a {d:g}-second egocentric kitchen video clip; its audio track may be silent.",
    "no_clip": "Imagine a {d:g}-second egocentric kitchen video clip (no video is attached).",
}


def caption_prompt(clip: Clip, condition: str) -> str:
    """The prompt text for ``clip`` under ``condition``; the reply must be one JSON object."""
    if condition not in CONDITIONS:
        raise ValueError(f"unknown condition {condition!r}; expected one of {CONDITIONS}")
    d = clip.duration_s
    return "\n".join([
        _SEEN[condition].format(d=d),
        "Describe it as a structured caption, a single JSON object with four lists:",
        "- references: the persistent objects involved, each once, with an id (R1, R2, ...) and a name;",
        "- events: every distinct sound heard, with an id (E1, ...), start_s and stop_s, and what the sound is;",
        f"- actions: {_ACTIONS[clip.dataset]}, with an id (A1, ...), start_s, stop_s, verb, noun, description;",
        "- links: {source, target} pairs: event id -> action id when the sound comes from that action "
        "(their times must overlap), action id -> reference id for the objects the action involves.",
        f"Times are seconds from the start of the clip, between 0 and {d:g}. Report only what you perceive; "
        "an empty list is a valid answer. Reply with the JSON only.",
        "JSON schema: " + json.dumps(caption_json_schema(), separators=(",", ":")),
    ])
