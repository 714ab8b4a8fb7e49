"""The offline reference responders on imported questions (HD-EPIC's VQA benchmark): items that come with
a key and their choices but no annotations, so nothing can be perceived or solved.

Conditions are the items' (:func:`.conditions.conditions_for`: ``clip`` and ``no_clip``, as an imported question
comes with no annotations, so its clip's audio is not annotated: ``audio_annotated`` False). What each responder
can do without annotations:

- ``oracle``   under ``clip`` replies the benchmark's key in the item's format (its self-test: chance-corrected
               1.0 in every format); under ``no_clip`` it perceives nothing and abstains, as on clips (to an
               ``official_mcq`` item with the bare ``cannot tell``: no capital letter, unreadable by the authors'
               rule, though lmms-eval's upper-casing reads it as C).
- ``chance``   the clips' chance responder (:func:`.offline.chance`) for every format with options (a seeded
               uniform letter for ``official_mcq``); an open
               reply names a seeded random choice of any imported question of the same prototype and answer
               type (``pool``), so open chance stays near 0 as the format's chance says.
- ``blind``    a text-only prior: prefers the option that occurs most often among the choices of the
               prototype's questions (``pool``); an open reply names the most frequent one.
- ``presence`` needs the clip's annotations (which entities occur): every row is ``skipped`` with that
               reason, counted in the scores' ``n_skipped`` (never dropped).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from types import SimpleNamespace

import pandas as pd

from ..records import records
from ..formats.parsing import render_reply
from ..formats.registry import reply_format
from ..seeding import stable_seed
from .conditions import items_by_condition
from .offline import ABSTAIN, Context, chance
from .runner import RESPONSE_COLUMNS, offline_row

NO_ANNOTATIONS = "imported question: the presence responder needs the clip's annotations, which it has none of"
KEY_REASON = "that is the benchmark's key"
# Stands in for a question row where the clips' responders read the evidence (none for imported questions).
_NO_EVIDENCE = SimpleNamespace(provenance="[]")


def _reason(fmt: str) -> str | None:
    return KEY_REASON if fmt.startswith("open_with_reason") else None


def _is_open(item) -> bool:
    return item.base_format == "open"


def _pool(item, pools: dict) -> list[str]:
    return pools.get((item.prototype, item.answer_type)) or [str(o) for o in item.options]


def _official(item) -> bool:
    return item.format == "official_mcq"


def oracle(item, condition: str, pools: dict) -> str:
    fmt = reply_format(item)
    if condition == "no_clip":  # perceives nothing: abstains, as the clips' oracle does (scored wrong)
        if _official(item):  # the abstention alone: no capital letter the authors' rule could read as an option
            return ABSTAIN
        return f"Answer: {ABSTAIN}" + ("\nBecause: I could not perceive the clip" if _reason(fmt) else "")
    truth = [bool(t) for t in item.option_truth]
    if item.format == "yes_no":
        return render_reply(fmt, bool(item.statement_true))
    if item.format in ("multiple_choice", "official_mcq"):
        return render_reply(fmt, truth.index(True))
    if _is_open(item):
        return render_reply(fmt, str(item.expected), reason=_reason(fmt))
    return render_reply(fmt, truth, reason=_reason(fmt))


def chance_reply(item, condition: str, pools: dict) -> str:
    fmt = reply_format(item)
    if _official(item):
        return render_reply(fmt, random.Random(stable_seed("chance", item.item_id, condition)).randrange(len(item.options)))
    if not _is_open(item):
        return chance(Context(item, _NO_EVIDENCE, None, None, condition, {}))
    rng = random.Random(stable_seed("chance", item.item_id, condition))
    return render_reply(fmt, rng.choice(_pool(item, pools)), reason=_reason(fmt))


def blind(item, condition: str, pools: dict) -> str:
    fmt = reply_format(item)
    freq = Counter(_pool(item, pools))
    if _is_open(item):
        common = max(sorted(freq), key=lambda o: freq[o])
        return render_reply(fmt, common, reason=_reason(fmt))
    scores = [freq.get(str(o), 0) for o in item.options]
    best = max(range(len(scores)), key=lambda i: (scores[i], -i))
    if item.format == "yes_no":
        return render_reply(fmt, item.statement_value == item.option_values[best])
    if item.format in ("multiple_choice", "official_mcq"):
        return render_reply(fmt, best)
    return render_reply(fmt, [i == best for i in range(len(scores))], reason=_reason(fmt))


IMPORTED = {"oracle": oracle, "chance": chance_reply, "blind": blind}


def imported_responses(items: pd.DataFrame, responders: list[str], pools: dict) -> pd.DataFrame:
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
                reply = IMPORTED[name](item, condition, pools)
                out.append(offline_row(item, condition, name, reply, time.perf_counter() - started))
    return pd.DataFrame(out, columns=RESPONSE_COLUMNS)
