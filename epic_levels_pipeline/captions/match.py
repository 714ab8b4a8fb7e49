"""One-to-one temporal matching of reference units to response units by tIoU: :func:`greedy_match` (the protocol's,
with fixed tie rules, independent of listing order) and :func:`hungarian_match` (the optimum, for sensitivity).
Defaults (OmniCapBench App. A.2.2): events at tIoU ≥ 0.20, actions at ≥ 0.30."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from .structure import Unit, id_order

EVENT_TIOU = 0.20
ACTION_TIOU = 0.30


def tiou(a_start: float, a_stop: float, b_start: float, b_stop: float) -> float:
    inter = min(a_stop, b_stop) - max(a_start, b_start)
    if inter <= 0:
        return 0.0
    union = max(a_stop, b_stop) - min(a_start, b_start)
    return inter / union if union > 0 else 0.0


def tiou_matrix(refs: list[Unit], resps: list[Unit]) -> np.ndarray:
    if not refs or not resps:
        return np.zeros((len(refs), len(resps)))
    a0 = np.array([u.start_s for u in refs])[:, None]
    a1 = np.array([u.stop_s for u in refs])[:, None]
    b0 = np.array([u.start_s for u in resps])[None, :]
    b1 = np.array([u.stop_s for u in resps])[None, :]
    inter = np.clip(np.minimum(a1, b1) - np.maximum(a0, b0), 0, None)
    union = np.maximum(a1, b1) - np.minimum(a0, b0)
    return np.where((inter > 0) & (union > 0), inter / np.where(union > 0, union, 1), 0.0)


def greedy_match(refs: list[Unit], resps: list[Unit], threshold: float,
                 scores: np.ndarray | None = None) -> list[tuple[int, int, float]]:
    """Pairs ``(ref index, response index, tIoU)`` of the greedy one-to-one matching."""
    m = tiou_matrix(refs, resps) if scores is None else scores
    i_idx, j_idx = np.nonzero(m >= threshold) if m.size else ((), ())
    candidates = sorted(zip(i_idx.tolist() if len(i_idx) else [], j_idx.tolist() if len(j_idx) else []),
                        key=lambda p: (-m[p], refs[p[0]].start_s, resps[p[1]].start_s,
                                       id_order(refs[p[0]].id), id_order(resps[p[1]].id)))
    used_i, used_j, out = set(), set(), []
    for i, j in candidates:
        if i in used_i or j in used_j:
            continue
        used_i.add(i)
        used_j.add(j)
        out.append((i, j, float(m[i, j])))
    return sorted(out)


def hungarian_match(refs: list[Unit], resps: list[Unit], threshold: float,
                    scores: np.ndarray | None = None) -> list[tuple[int, int, float]]:
    """Pairs of the maximum matching (most pairs, then largest total tIoU) among pairs ≥ ``threshold``."""
    m = tiou_matrix(refs, resps) if scores is None else scores
    if not m.size:
        return []
    weight = np.where(m >= threshold, 1.0 + m, 0.0)
    rows, cols = linear_sum_assignment(weight, maximize=True)
    return sorted((int(i), int(j), float(m[i, j])) for i, j in zip(rows, cols) if weight[i, j] > 0)


MATCHERS = {"greedy": greedy_match, "hungarian": hungarian_match}
