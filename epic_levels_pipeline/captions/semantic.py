"""The caption track's semantic layer (after OmniCapBench App. A.2 and F): on structurally aligned pairs only, a
bounded judge scores each description against the reference's, recall and precision on a 1–5 scale, seeing only
the two descriptions. Identical descriptions score 5 by rule; unscored pairs are counted (docs/design/captions.md)."""

from __future__ import annotations

import math
from typing import Callable

from .labels import normalise
from .structure import Unit

SCALE = (1, 2, 3, 4, 5)
DIRECTIONS = ("recall", "precision")
KINDS = ("event", "action", "reference")
SEMANTIC_METRICS = [f"semantic_{k}_{m}" for k in KINDS for m in ("p", "r")]
SEMANTIC_COUNTS = [f"n_semantic_{k}" for k in KINDS] + ["n_semantic_unscored"]
NO_JUDGE_NOTE = "no judge is configured: the semantic scores are empty (rules score identical descriptions only)"

# A semantic judge: requests (kind, reference text, reply text, direction) -> one (score 1..5 | None, failed) each.
SemanticJudge = Callable[[list[tuple[str, str, str, str]]], "list[tuple[int | None, bool]]"]

_WHAT = {"event": "sound", "action": "action", "reference": "object or entity"}
_QUESTION = {
    "recall": "How much of what the FIRST description states does the SECOND also state?",
    "precision": "How much of what the SECOND description states does the FIRST support?",
}
SCALE_MARK = "Scale: A = 1"  # how a semantic prompt is told from the other judges' (its scale line)
_SCALE_TEXT = ("A = 1: none of it; B = 2: a little; C = 3: about half; D = 4: most of it; E = 5: all of it. "
               "A contradicted fact counts as not stated and not supported; wording and synonyms do not matter.")


def semantic_prompt(kind: str, reference: str, reply: str, direction: str) -> str:
    """The judge's whole view of one direction of a pair: the unit kind, the two descriptions and the 1–5 scale."""
    return "\n".join([
        f"You compare two short descriptions of the same {_WHAT.get(kind, kind)} in a kitchen video.",
        f"First: {reference}", f"Second: {reply}", _QUESTION[direction],
        f"Scale: {_SCALE_TEXT}",
        'Reply {"choice": "<letter A-E>"}, or {"choice": "none"} when you cannot tell.',
    ])


def description(unit: Unit) -> str:
    """What a unit says, as a reply states it: its label (the sound, the action's description, the entity's name);
    the reference's free-text description only where it has no label. Both sides are compared on the same field."""
    return str(unit.label or "").strip() or str(unit.description or "").strip()


def rule_score(reference: str, reply: str) -> int | None:
    """5 when the two descriptions are the same after normalisation (case, articles, punctuation), else None."""
    a, b = normalise(reference), normalise(reply)
    return 5 if a and a == b else None


def score_pairs(pairs: list[tuple[str, Unit, Unit]], judge: SemanticJudge | None) -> tuple[dict, list]:
    """The semantic metrics of one response's aligned ``(kind, reference unit, reply unit)`` pairs (module
    docstring) and each pair's ``(precision, recall)`` (None when unscored). With no judge nothing is scored (every
    value NaN). The judge gets every request of the response in one call."""
    texts = [(kind, description(ref), description(resp)) for kind, ref, resp in pairs]
    asked = [(kind, a, b, d) for kind, a, b in texts if rule_score(a, b) is None for d in DIRECTIONS]
    answers = dict(zip(asked, judge(asked))) if asked and judge is not None else {}
    sums = {k: {"recall": 0.0, "precision": 0.0, "n": 0} for k in KINDS}
    unscored, each = 0, []
    for kind, a, b in texts:
        scores = {}
        for direction in DIRECTIONS if judge is not None else ():
            value, bad = (rule_score(a, b), False) if rule_score(a, b) is not None \
                else answers.get((kind, a, b, direction), (None, False))
            if bad or value is None:
                break
            scores[direction] = value
        if len(scores) < len(DIRECTIONS):
            unscored += judge is not None
            each.append(None)
            continue
        each.append((scores["precision"], scores["recall"]))
        sums[kind]["recall"] += scores["recall"]
        sums[kind]["precision"] += scores["precision"]
        sums[kind]["n"] += 1
    out: dict = {}
    for kind in KINDS:
        n = sums[kind]["n"]
        out[f"semantic_{kind}_p"] = sums[kind]["precision"] / n if n else math.nan
        out[f"semantic_{kind}_r"] = sums[kind]["recall"] / n if n else math.nan
        out[f"n_semantic_{kind}"] = n
    out["n_semantic_unscored"] = unscored
    return out, each
