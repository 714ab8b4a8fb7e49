"""HD-EPIC's ``<TIME …>`` and ``<BBOX …>`` tags written out as the authors' evaluation writes them into a prompt."""

from __future__ import annotations

import re

FORMAT = "official_mcq"  # the format of a question asked as its authors ask it

_TIME = re.compile(r"<TIME\s+([\d:.]+)\s+(.+?)>")
_BBOX = re.compile(r"<BBOX\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*>")
FRAME_SIZE = 1408  # the recordings' frame size in pixels; boxes are written on a 1000 × 1000 grid


def _seconds(text: str) -> float | None:
    parts = str(text).strip().split(":")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        return None
    total = 0.0
    for v in values:
        total = total * 60 + v
    return total


def render_tags(text: str, inputs: dict) -> str:
    """``<TIME hh:mm:ss input>`` as ``MM:SS`` (``HH:MM:SS`` from an hour) counted from that input's
    ``start_time``, and ``<BBOX y1 x1 y2 x2>`` (pixels of a 1408-pixel frame) as ``(y1, x1, y2, x2)`` on a
    1000 × 1000 grid, as the authors' evaluation writes them; a tag it cannot read is left as it is."""
    def time(m: re.Match) -> str:
        at = _seconds(m.group(1))
        if at is None:
            return m.group(0)
        start = _seconds((inputs.get(m.group(2).strip()) or {}).get("start_time", "0")) or 0.0
        s = int(max(at - start, 0.0))
        h, rest = divmod(s, 3600)
        return f"{h:02d}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60:02d}:{rest % 60:02d}"

    def box(m: re.Match) -> str:
        return "(" + ", ".join(str(int(float(v) / FRAME_SIZE * 1000)) for v in m.groups()) + ")"

    return _BBOX.sub(box, _TIME.sub(time, str(text)))
