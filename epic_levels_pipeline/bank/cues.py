"""Time cues: "about N seconds into the clip", one rule for every subtype that asks about a moment by its time.

N is a whole second at least :data:`CUE_MARGIN_S` from either edge that the key's row covers within
±:data:`CUE_COVER_S`; whatever the subtype calls active (``crowding``) within ±:data:`CUE_CLEAR_S` of N is left
out of the options, so no wrong option could also be heard or seen then."""

from __future__ import annotations

import math
from typing import Callable, Iterable

CUE_COVER_S = 0.5  # "about N seconds in": the key's row comes within this of N
CUE_CLEAR_S = 1.5  # ... and no other option is active within this of N
CUE_MARGIN_S = 3  # cued seconds lie at least this far from either edge of the window


def covers(start_s: float, stop_s: float, instant: float, width: float = CUE_COVER_S) -> bool:
    """Does the span ``start_s``–``stop_s`` come within ``width`` seconds of ``instant`` (ends included)?"""
    return start_s - width <= instant <= stop_s + width


def cue_seconds(clip, start_s: float, stop_s: float, crowding: Callable[[float], int]) -> list[int]:
    """The whole seconds N (offsets into ``clip``) at which "about N seconds into the clip" may ask about a
    row spanning ``start_s``–``stop_s``: the row covers N within ±:data:`CUE_COVER_S`, N at least
    :data:`CUE_MARGIN_S` from either edge. Best first: the least ``crowding(instant)`` (how many other
    things are active near N: each would be left out of the options), then the nearest to the middle of
    the row's part in the window, then the earliest."""
    low = max(CUE_MARGIN_S, math.ceil(start_s - CUE_COVER_S - clip.start_s))
    high = min(int(clip.duration_s) - CUE_MARGIN_S, math.floor(stop_s + CUE_COVER_S - clip.start_s))
    mid = (max(start_s, clip.start_s) + min(stop_s, clip.end_s)) / 2 - clip.start_s
    return sorted(range(low, high + 1), key=lambda n: (crowding(clip.start_s + n), abs(n - mid), n))


def first_free(seconds: Iterable[int], used: set[int]) -> int | None:
    """The first of ``seconds`` no other draft of the clip cues (marked used), or None: distinct N per clip."""
    for n in seconds:
        if n not in used:
            used.add(n)
            return n
    return None
