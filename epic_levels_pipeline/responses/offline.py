"""The offline reference responders (``oracle``, ``chance``, ``presence``, ``blind``): they perceive a clip through
its annotations (``clip``: every stream, ``silenced``: all but sound, ``no_clip``: none), need no video, and reply
as text in the item's stated form, so parsing and scoring are the same as a model's. What each answers in a
format is the format's entry's (docs/design/formats-and-replies.md)."""

from __future__ import annotations

import json
import random

from ..formats.answers import Context, Prior, catalogue_prior
from ..formats.parsing import reply_form, render_reply
from ..formats.registry import entry_of, reply_format
from ..seeding import seeded

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
    """A responder's generator for one item × condition, drawn from the project seed."""
    return random.Random(seeded(ctx.seed, name, ctx.item.item_id, ctx.condition))


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
