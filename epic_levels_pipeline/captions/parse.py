"""Reading a reply into a :class:`~.structure.Structure`: tolerant JSON extraction, canonicalisation, and the
structural predicates counted per response (OmniCapBench App. A.2.4–A.2.5). Every unit or link dropped is counted
in :attr:`Parsed.checks`, none silently (the order of the rules: docs/design/captions.md)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

from .structure import KINDS, LINK_KINDS, Structure, Unit, overlap_s

CHECKS = ("missing_fields", "duplicate_ids", "times_out_of_range", "empty_spans", "dangling_links",
          "invalid_reference_use", "links_without_overlap")
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.S)
_LISTS = {"event": "events", "action": "actions", "reference": "references"}


@dataclass
class Parsed:
    structure: Structure | None
    error: str | None = None
    checks: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CHECKS, 0))
    n_units_raw: int = 0
    n_links_raw: int = 0

    @property
    def parsed(self) -> bool:
        return self.structure is not None


def extract_json(text: str):
    """The JSON object in ``text`` (fenced block first, else first ``{`` to last ``}``); raises ValueError."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("empty reply")
    candidates = [m.group(1) for m in _FENCE.finditer(text)]
    i, j = text.find("{"), text.rfind("}")
    if i >= 0 and j > i:
        candidates.append(text[i:j + 1])
    last = "no JSON object in the reply"
    for c in candidates:
        try:
            data = json.loads(c)
        except json.JSONDecodeError as exc:
            last = f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
            continue
        if isinstance(data, dict):
            return data
        last = f"the JSON is a {type(data).__name__}, not an object"
    raise ValueError(last)


def _number(value) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _text(value) -> str:
    return " ".join(str(value).split()) if value is not None else ""


def parse_caption(reply: str, dataset: str, duration_s: float) -> Parsed:
    """Parse and canonicalise a caption reply for a clip of ``duration_s`` seconds."""
    try:
        data = extract_json(reply)
    except ValueError as exc:
        return Parsed(None, error=str(exc))
    out = Parsed(Structure(dataset, duration_s))
    s, checks = out.structure, out.checks
    seen: set[str] = set()
    for kind in KINDS:
        items = data.get(_LISTS[kind])
        if items is None:
            checks["missing_fields"] += 1
            continue
        if not isinstance(items, list):
            checks["missing_fields"] += 1
            continue
        for item in items:
            out.n_units_raw += 1
            unit = _unit(kind, item, duration_s, checks)
            if unit is None:
                continue
            if unit.id in seen:
                checks["duplicate_ids"] += 1
                continue
            seen.add(unit.id)
            s.units(kind).append(unit)
    links = data.get("links")
    if not isinstance(links, list):
        checks["missing_fields"] += 1
        links = []
    index = s.by_id()
    kept: set[tuple[str, str]] = set()
    for link in links:
        out.n_links_raw += 1
        if not isinstance(link, dict) or "source" not in link or "target" not in link:
            checks["missing_fields"] += 1
            continue
        a, b = _text(link["source"]), _text(link["target"])
        if a not in index or b not in index:
            checks["dangling_links"] += 1
        elif (index[a].kind, index[b].kind) not in LINK_KINDS:
            checks["invalid_reference_use"] += 1
        elif index[a].kind == "event" and overlap_s(index[a], index[b]) <= 0:
            checks["links_without_overlap"] += 1
        elif (a, b) not in kept:
            kept.add((a, b))
            s.links.append((a, b))
    return out


def _unit(kind: str, item, duration_s: float, checks: dict[str, int]) -> Unit | None:
    if not isinstance(item, dict) or not _text(item.get("id")):
        checks["missing_fields"] += 1
        return None
    uid = _text(item["id"])
    if kind == "reference":
        name = _text(item.get("name"))
        return Unit("reference", uid, label=name, noun=name)
    start, stop = _number(item.get("start_s")), _number(item.get("stop_s"))
    if start is None or stop is None:
        checks["missing_fields"] += 1
        return None
    clamped = min(max(start, 0.0), duration_s), min(max(stop, 0.0), duration_s)
    if clamped != (start, stop):
        checks["times_out_of_range"] += 1
    start, stop = clamped
    if stop <= start:
        checks["empty_spans"] += 1
        return None
    if kind == "event":
        sound = _text(item.get("sound"))
        return Unit("event", uid, start, stop, label=sound, description=sound)
    verb, noun, desc = _text(item.get("verb")), _text(item.get("noun")), _text(item.get("description"))
    return Unit("action", uid, start, stop, label=desc or f"{verb} {noun}".strip(), description=desc,
                verb=verb or None, noun=noun or None)


def render_caption(s: Structure) -> str:
    """A structure as the JSON a reply would hold (what the offline responders send)."""
    return json.dumps({
        "references": [{"id": u.id, "name": u.label} for u in s.references],
        "events": [{"id": u.id, "start_s": u.start_s, "stop_s": u.stop_s, "sound": u.label} for u in s.events],
        "actions": [{"id": u.id, "start_s": u.start_s, "stop_s": u.stop_s, "verb": u.verb or "", "noun": u.noun or "",
                     "description": u.label} for u in s.actions],
        "links": [{"source": a, "target": b} for a, b in s.links],
    })
