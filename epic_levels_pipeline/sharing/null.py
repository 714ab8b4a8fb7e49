"""The shuffled null of imported replies: every right reply moved to another item of the same format, stated reply
form and condition, so it says nothing about its question, and scored by the same rules. Why the stated form
matters, and why open answers keep an excess over chance: docs/design/sharing.md."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd

from ..records import records
from ..formats.registry import reply_format, rule_verdict
from ..responses.conditions import conditions_for
from ..scoring.metrics.stats import chance_corrected
from ..scoring.metrics.tables import COUNTED, primary_mask
from .export import answer_reply

NULL_FORMS = ("form", "format")  # group by stated reply form (the null), or by format alone (the old, biased one)


def perfect_replies(items: pd.DataFrame) -> list[dict]:
    """One right reply (:func:`.export.answer_reply`) per item × condition it is asked under."""
    return [{"item_id": i.item_id, "condition": c, "reply": answer_reply(i)}
            for i in records(items) for c in conditions_for(i.audio_annotated)]


def stated_form(item) -> str:
    """The output form an item's prompt states: its reply format, and for open answers the answer type."""
    form = reply_format(item)
    return f"{form}:{item.answer_type}" if item.base_format == "open" else form


def shuffled_replies(lines: list[dict], items: pd.DataFrame, seed: int, *, within: str = "form") -> list[dict]:
    """``lines`` with their replies permuted (seeded) among the lines of the same format, :func:`stated_form` and
    condition (``within="format"``: format and condition only, the old null whose moved replies break the
    ``open_with_reason`` items' form). Groups are shuffled in sorted order, so the result depends on the seed and
    the lines, not on their order."""
    if within not in NULL_FORMS:
        raise ValueError(f"within must be one of {NULL_FORMS}, got {within!r}")
    by_id = {i.item_id: i for i in records(items)}
    groups: dict[tuple, list[int]] = {}
    for n, line in enumerate(lines):
        item = by_id[line["item_id"]]
        form = stated_form(item) if within == "form" else ""
        groups.setdefault((item.format, form, line["condition"]), []).append(n)
    rng, moved = random.Random(seed), [dict(line) for line in lines]
    for key in sorted(groups):
        positions = sorted(groups[key], key=lambda n: lines[n]["item_id"])
        replies = [lines[n]["reply"] for n in positions]
        rng.shuffle(replies)
        for n, reply in zip(positions, replies):
            moved[n]["reply"] = reply
    return moved


class RuleScorer:
    """The format's rule verdict of a reply to an item (what :func:`..scoring.verdicts.verdicts` records with no
    judge), remembered per (item, reply): many shuffles of one bank ask the same pairs again."""

    def __init__(self, items: pd.DataFrame):
        self.items = {i.item_id: i for i in records(items)}
        self.memo: dict[tuple[str, str], tuple[str, bool]] = {}

    def __call__(self, item_id: str, reply: str) -> tuple[str, bool]:
        key = (item_id, reply)
        if key not in self.memo:
            _, correct, scored_by, _, _ = rule_verdict(self.items[item_id], reply)
            self.memo[key] = (scored_by, bool(correct))
        return self.memo[key]


SCOPES = ("all", "closed")  # every format; every item but the open-answer ones


def null_score(items: pd.DataFrame, lines: list[dict], scorer: RuleScorer | None = None) -> pd.DataFrame:
    """Pooled scores of reply ``lines`` per scope (:data:`SCOPES`) × condition (``'*'``: every condition): ``n``
    counted, ``accuracy``, ``chance``, ``chance_corrected`` (undecided left out), ``chance_corrected_strict``
    (undecided counted wrong), ``n_undecided``, ``n_unparsed``. Pooled as ``scores``'s ``'*'`` rows (primary
    distractor strategies only)."""
    scorer = scorer or RuleScorer(items)
    frame = pd.DataFrame(lines, columns=["item_id", "condition", "reply"])
    meta = items.drop_duplicates("item_id").set_index("item_id").loc[
        frame["item_id"], ["subtype", "distractor_strategy", "chance", "base_format"]]
    keep = primary_mask(meta)
    judged = [scorer(i, r) for i, r in zip(frame["item_id"], frame["reply"])]
    scored_by = np.array([s for s, _ in judged], dtype=object)
    ok = np.array([c for _, c in judged], dtype=bool)
    chance = meta["chance"].to_numpy(dtype=float)
    closed = meta["base_format"].to_numpy() != "open"
    condition = frame["condition"].to_numpy()
    rows = []
    for scope in SCOPES:
        for name in [*sorted(set(condition)), "*"]:
            here = keep & ((condition == name) | (name == "*")) & (closed if scope == "closed" else True)
            counted = here & np.isin(scored_by, COUNTED)
            strict = counted | (here & (scored_by == "undecided"))
            acc, ch = (ok[counted].mean(), chance[counted].mean()) if counted.any() else (np.nan, np.nan)
            s_acc, s_ch = (ok[strict].mean(), chance[strict].mean()) if strict.any() else (np.nan, np.nan)
            rows.append({"scope": scope, "condition": name, "n": int(counted.sum()), "accuracy": acc, "chance": ch,
                         "chance_corrected": chance_corrected(acc, ch),
                         "chance_corrected_strict": chance_corrected(s_acc, s_ch),
                         "n_undecided": int((strict & ~counted).sum()),
                         "n_unparsed": int((counted & (scored_by == "unparsed")).sum())})
    return pd.DataFrame(rows)
