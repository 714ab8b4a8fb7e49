"""The offline reference responders. Every responder replies in the item's stated output format, as text, so
parsing and scoring are the same for all of them.

The offline reference responders perceive a clip through its annotations, so they need no video file:
under ``clip`` they see every stream of the clip, under ``silenced`` every stream but ``sound``, under
``no_clip`` none.

- ``oracle``   answers from the annotations it perceives, through the same solvers that computed the keys.
               When a question's evidence (its provenance) lies in a stream it cannot perceive, it abstains
               (``Answer: cannot tell``), which scores as wrong: so under ``silenced`` it loses exactly the
               questions whose provenance includes sound rows — a self-test of the provenance. Its open
               replies use a synonym that the rules resolve to the key (not always the option text).
- ``chance``   seeded random valid replies, independent per item and condition; open replies name a random
               entity of the right kind from the whole catalogue (so open chance is ≈ 0, as the format's
               chance says); option-judgement replies mark one option true, uniformly (the best reply
               without the clip, whose rate 1/k is the format's chance).
- ``presence`` knows which entities occur anywhere in what it perceives, not when: picks the only present
               option (else the only absent one, else guesses), says "yes" to statements about present
               entities, names a present entity in open replies.
- ``blind``    answer priors only, no clip knowledge: prefers the entity most frequent in the dataset.

What each replies in a format is that format's entry's (:data:`..formats.registry.FORMATS`, ``answers``).
"""

from __future__ import annotations

import json
import random

from ..formats.answers import Context, Prior, catalogue_prior
from ..formats.parsing import reply_form, render_reply
from ..formats.registry import entry_of, reply_format
from ..seeding import stable_seed

OFFLINE_RESPONDERS = ("oracle", "chance", "presence", "blind")
OFFLINE_MODEL = "offline"


def _reason(question) -> str:
    labels = [f"{e['label']} ({e['stream']})" for e in json.loads(question.provenance)[:3] if e.get("label")]
    return "I noticed " + "; ".join(labels) if labels else "that is what the clip shows"


def _reply(ctx: Context, value) -> str:
    """``value`` in the item's reply form (None: the responder cannot tell and abstains)."""
    form = reply_form(reply_format(ctx.item))
    reason = _reason(ctx.question) if form.needs_reason else None
    if value is None:
        return form.abstain + ("\nBecause: I could not perceive what the question needs" if reason else "")
    return render_reply(form.name, value, reason=reason)


def _rng(name: str, ctx: Context) -> random.Random:
    return random.Random(stable_seed(name, ctx.item.item_id, ctx.condition))


def oracle(ctx: Context) -> str:
    return _reply(ctx, entry_of(ctx.item).answers.oracle(ctx, _rng("oracle", ctx)))


def chance(ctx: Context) -> str:
    return _reply(ctx, entry_of(ctx.item).answers.chance(ctx, _rng("chance", ctx)))


def presence(ctx: Context) -> str:
    return _reply(ctx, entry_of(ctx.item).answers.presence(ctx, _rng("presence", ctx)))


def blind(ctx: Context, prior: Prior | None = None) -> str:
    return _reply(ctx, entry_of(ctx.item).answers.blind(ctx, prior or catalogue_prior(ctx.catalogue)))


OFFLINE = {"oracle": oracle, "chance": chance, "presence": presence, "blind": blind}


def offline_reply(name: str, ctx: Context) -> str:
    try:
        fn = OFFLINE[name]
    except KeyError:
        raise ValueError(f"unknown offline responder {name!r} (known: {', '.join(OFFLINE)})") from None
    return fn(ctx)
