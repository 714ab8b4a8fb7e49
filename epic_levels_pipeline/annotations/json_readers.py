"""The readers of HD-EPIC's JSON annotation files, checked against their shapes (pydantic): the recipes
(``complete_recipes.json``: steps and their spans) and the object associations (``assoc_info.json``: tracks)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from ..errors import Problem
from .canonical import OBJECT_TRACK_COLUMNS, RECIPE_STEP_COLUMNS, Loaded, empty_table
from .validation import _display, _read_text, normalise_object_name


# --- JSON shapes (pydantic) ---------------------------------------------------------------------------


class _Span(BaseModel):
    model_config = ConfigDict(extra="allow")
    video: str
    start: float
    end: float


class _Capture(BaseModel):
    model_config = ConfigDict(extra="allow")
    videos: list[str]
    step_times: dict[str, list[_Span]]


class _Recipe(BaseModel):
    model_config = ConfigDict(extra="allow")
    participant: str
    name: str
    steps: dict[str, str]
    captures: list[_Capture]


class _Track(BaseModel):
    model_config = ConfigDict(extra="allow")
    track_id: str
    time_segment: tuple[float, float]
    masks: list[str] = []


class _Association(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    tracks: list[_Track]


_RECIPES = TypeAdapter(dict[str, _Recipe])
_ASSOC = TypeAdapter(dict[str, dict[str, _Association]])


def _read_json(path: Path, adapter: TypeAdapter, problems: list[Problem]):
    name = _display(path)
    text = _read_text(path, problems)
    if text is None:
        return None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(Problem(name, exc.lineno, f"char {exc.colno}", f"invalid JSON: {exc.msg}"))
        return None
    try:
        return adapter.validate_python(raw)
    except ValidationError as exc:
        for err in exc.errors():
            loc = [str(x) for x in err["loc"]]
            row = "/".join(loc[:-1]) or "(top level)"
            column = loc[-1] if loc else "-"
            problems.append(Problem(name, row, column, f"wrong JSON shape: {err['msg']}"))
        return None


def _read_recipes(path: Path) -> Loaded:
    problems: list[Problem] = []
    name = _display(path)
    recipes = _read_json(path, _RECIPES, problems)
    if recipes is None:
        return Loaded("hd_epic_recipes", "recipe_steps", empty_table("recipe_steps"), problems)
    rows = []
    for key, recipe in recipes.items():
        step_numbers = {sid: i + 1 for i, sid in enumerate(sorted(recipe.steps))}
        for c, capture in enumerate(recipe.captures):
            for step_id, spans in capture.step_times.items():
                where = f"{key}/captures/{c}/step_times/{step_id}"
                if step_id not in recipe.steps:
                    problems.append(Problem(name, where, "step_id", f"step {step_id!r} has times but no text in 'steps'"))
                    continue
                for i, span in enumerate(spans):
                    loc = f"{where}/{i}"
                    if span.start < 0 or span.end < 0:
                        problems.append(Problem(name, loc, "start" if span.start < 0 else "end", "negative time"))
                        continue
                    if span.end < span.start:
                        problems.append(Problem(name, loc, "end", f"end {span.end} is before start {span.start}"))
                        continue
                    if span.end == span.start:
                        problems.append(Problem(name, loc, "end", "zero-length span; left out", "dropped"))
                        continue
                    rows.append((key, recipe.name, step_id, recipe.steps[step_id], step_numbers[step_id],
                                 span.video, span.start, span.end, i, path.name, loc))
    frame = pd.DataFrame(rows, columns=RECIPE_STEP_COLUMNS) if rows else empty_table("recipe_steps")
    return Loaded("hd_epic_recipes", "recipe_steps", frame, problems)


def _read_assoc(path: Path) -> Loaded:
    problems: list[Problem] = []
    name = _display(path)
    data = _read_json(path, _ASSOC, problems)
    if data is None:
        return Loaded("hd_epic_object_tracks", "object_tracks", empty_table("object_tracks"), problems)
    rows = []
    seen: dict[str, str] = {}
    for video_id, associations in data.items():
        for association_id, assoc in associations.items():
            for i, track in enumerate(assoc.tracks):
                loc = f"{video_id}/{association_id}/tracks/{i}"
                start, stop = track.time_segment
                if start < 0 or stop < 0:
                    problems.append(Problem(name, loc, "time_segment", "negative time"))
                    continue
                if stop < start:
                    problems.append(Problem(name, loc, "time_segment", f"end {stop} is before start {start}"))
                    continue
                if track.track_id in seen:
                    problems.append(Problem(name, loc, "track_id", f"duplicate id {track.track_id!r} (first at {seen[track.track_id]})"))
                    continue
                seen[track.track_id] = loc
                if stop == start:
                    problems.append(Problem(name, loc, "time_segment", "zero-length span; left out", "dropped"))
                    continue
                rows.append((track.track_id, association_id, video_id, assoc.name, normalise_object_name(assoc.name),
                             start, stop, len(track.masks), path.name, loc))
    frame = pd.DataFrame(rows, columns=OBJECT_TRACK_COLUMNS) if rows else empty_table("object_tracks")
    return Loaded("hd_epic_object_tracks", "object_tracks", frame, problems)
