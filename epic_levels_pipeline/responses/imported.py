"""The offline reference responders on imported questions (HD-EPIC's VQA benchmark): a key and choices but no
annotations, so ``oracle`` replies the key under ``clip``, ``chance`` and ``blind`` draw from the prototype's
choices, and ``presence`` is ``skipped`` on every row, counted (docs/design/formats-and-replies.md)."""

from __future__ import annotations

import random
import time
from collections import Counter
from types import SimpleNamespace

import pandas as pd

from ..formats.answers import Context, Prior
from ..formats.parsing import reply_form, render_reply
from ..formats.registry import entry_of, reply_format
from ..records import records
from ..seeding import DEFAULT_SEED, seeded
from .conditions import items_by_condition
from .runner import RESPONSE_COLUMNS, offline_row

NO_ANNOTATIONS = "imported question: the presence responder needs the clip's annotations, which it has none of"
KEY_REASON = "that is the benchmark's key"
NO_EVIDENCE_REASON = "that is what the clip shows"  # the clips' reason where a question cites no rows
# Stands in for a question row where the clips' responders read the evidence (none for imported questions).
_NO_EVIDENCE = SimpleNamespace(provenance="[]")


def _pool(item, pools: dict) -> list[str]:
    return pools.get((item.prototype, item.answer_type)) or [str(o) for o in item.options]


def _context(item, condition: str, pools: dict) -> Context:
    return Context(item, _NO_EVIDENCE, None, None, condition, {}, pool=_pool(item, pools))


def oracle(item, condition: str, pools: dict, seed: int = DEFAULT_SEED) -> str:
    form = reply_form(reply_format(item))
    reason = KEY_REASON if form.needs_reason else None
    if condition == "no_clip":  # perceives nothing: abstains, as the clips' oracle does (scored wrong)
        return form.abstain + ("\nBecause: I could not perceive the clip" if reason else "")
    return render_reply(form.name, entry_of(item).answer_value(item), reason=reason)


def chance_reply(item, condition: str, pools: dict, seed: int = DEFAULT_SEED) -> str:
    entry, form = entry_of(item), reply_form(reply_format(item))
    value = entry.answers.chance(_context(item, condition, pools),
                                 random.Random(seeded(seed, "chance", item.item_id, condition)))
    reason = (KEY_REASON if entry.free_text else NO_EVIDENCE_REASON) if form.needs_reason else None
    return render_reply(form.name, value, reason=reason)


def blind(item, condition: str, pools: dict, seed: int = DEFAULT_SEED) -> str:
    form = reply_form(reply_format(item))
    freq = Counter(_pool(item, pools))
    prior = Prior(lambda value, text: freq.get(text, 0), lambda item: max(sorted(freq), key=lambda o: freq[o]))
    value = entry_of(item).answers.blind(_context(item, condition, pools), prior)
    return render_reply(form.name, value, reason=KEY_REASON if form.needs_reason else None)


IMPORTED = {"oracle": oracle, "chance": chance_reply, "blind": blind}


def imported_responses(items: pd.DataFrame, responders: list[str], pools: dict, seed: int = DEFAULT_SEED
                       ) -> pd.DataFrame:
    """``responses`` rows of the offline responders on imported items (every condition each is asked under);
    a responder that needs annotations gets ``skipped`` rows with the reason."""
    out: list[dict] = []
    if not len(items) or not responders:
        return pd.DataFrame(out, columns=RESPONSE_COLUMNS)
    for condition, asked in items_by_condition(records(items)):
        for item in asked:
            for name in responders:
                if name not in IMPORTED:
                    out.append(offline_row(item, condition, name, "", skipped=NO_ANNOTATIONS))
                    continue
                started = time.perf_counter()
                reply = IMPORTED[name](item, condition, pools, seed)
                out.append(offline_row(item, condition, name, reply, time.perf_counter() - started))
    return pd.DataFrame(out, columns=RESPONSE_COLUMNS)
