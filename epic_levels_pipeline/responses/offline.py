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
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

from ..annotations.catalogue import Catalogue
from ..annotations.values import CandidateValue
from ..bank.clip_view import ClipView
from ..bank.kinds import names_in_clip, present as present_in, random_name
from ..formats.parsing import render_reply
from ..formats.registry import reply_format
from ..annotations.language import LETTERS
from ..bank.build import presence_choice
from ..seeding import stable_seed
from ..formats.parsing import resolve_open
from ..bank.solvers import solve

OFFLINE_RESPONDERS = ("oracle", "chance", "presence", "blind")
OFFLINE_MODEL = "offline"
ABSTAIN = "cannot tell"


@dataclass
class Context:
    item: object          # a row of the items table
    question: object      # its row of the questions table
    view: ClipView        # the clip as this condition lets the responder perceive it
    catalogue: Catalogue
    condition: str
    questions_by_id: dict  # question_id -> question row (format-3 statements cite other questions)


def _streams_of(question) -> set[str]:
    return {e["stream"] for e in json.loads(question.provenance)}


def _reason(question) -> str:
    labels = [f"{e['label']} ({e['stream']})" for e in json.loads(question.provenance)[:3] if e.get("label")]
    return "I noticed " + "; ".join(labels) if labels else "that is what the clip shows"


def _reply(ctx: Context, fmt: str, value, abstain: bool = False) -> str:
    reason = _reason(ctx.question) if fmt.startswith("open_with_reason") else None
    if abstain:
        return f"Answer: {ABSTAIN}" + (f"\nBecause: I could not perceive what the question needs" if reason else "")
    return render_reply(fmt, value, reason=reason)


def _rng(name: str, ctx: Context) -> random.Random:
    return random.Random(stable_seed(name, ctx.item.item_id, ctx.condition))


def _statements(ctx: Context) -> list[dict]:
    return json.loads(ctx.item.statements)


def _statement_knowable(ctx: Context, s: dict) -> bool:
    perceived = ctx.view.streams
    if s["source"].startswith("question:"):
        q = ctx.questions_by_id[s["source"].split(":", 1)[1]]
        return _streams_of(q) <= perceived
    return ("sound" if s["source"] == "sound presence" else "object_track") in perceived


def _statement_truth(ctx: Context, s: dict) -> bool:
    if s["source"].startswith("question:"):
        q = ctx.questions_by_id[s["source"].split(":", 1)[1]]
        return solve(q.subtype, ctx.view, json.loads(q.params), [s["value"]])[0]
    subtype = "easy_sound_presence" if s["source"] == "sound presence" else "easy_object"
    return solve(subtype, ctx.view, {}, [s["value"]])[0]


def _open_text(ctx: Context, index: int, rng: random.Random) -> str:
    """A natural name for option ``index`` that the rules resolve to that option (varies by seed)."""
    synonyms = json.loads(ctx.item.candidate_synonyms)
    names = list(synonyms[index])
    rng.shuffle(names)
    for name in names:
        if resolve_open(name, synonyms).value == index:
            return name
    return ctx.item.options[index]


# --- the four offline responders ------------------------------------------------------------------------


def oracle(ctx: Context) -> str:
    item, q, fmt = ctx.item, ctx.question, reply_format(ctx.item)
    rng = _rng("oracle", ctx)
    if item.format == "statements":
        statements = _statements(ctx)
        if not all(_statement_knowable(ctx, s) for s in statements):
            return _reply(ctx, fmt, None, abstain=True)
        letters = [LETTERS[i] for i, s in enumerate(statements) if _statement_truth(ctx, s)]
        return _reply(ctx, fmt, letters) if letters else _reply(ctx, fmt, None, abstain=True)
    if not _streams_of(q) <= ctx.view.streams:
        return _reply(ctx, fmt, None, abstain=True)
    truth = solve(q.subtype, ctx.view, json.loads(q.params), list(item.option_values))
    if item.format == "yes_no":
        return _reply(ctx, fmt, solve(q.subtype, ctx.view, json.loads(q.params), [item.statement_value])[0])
    if fmt in ("option_judgement", "open_with_reason_judgement"):
        return _reply(ctx, fmt, truth)
    if sum(truth) != 1:
        return _reply(ctx, fmt, None, abstain=True)
    index = truth.index(True)
    if item.format == "multiple_choice":
        return _reply(ctx, fmt, index)
    return _reply(ctx, fmt, _open_text(ctx, index, rng))


def chance(ctx: Context) -> str:
    item, fmt = ctx.item, reply_format(ctx.item)
    rng = _rng("chance", ctx)
    n = len(item.options)
    if item.format == "yes_no":
        return _reply(ctx, fmt, rng.choice(["yes", "no"]))
    if item.format == "multiple_choice":
        return _reply(ctx, fmt, rng.randrange(n))
    if item.format == "statements":
        k = len(_statements(ctx))
        mask = rng.randrange(1, 2 ** k)  # uniform over the non-empty subsets
        return _reply(ctx, fmt, [LETTERS[i] for i in range(k) if mask >> i & 1])
    if fmt in ("option_judgement", "open_with_reason_judgement"):
        true = rng.randrange(n)  # one option marked true, uniformly: 4b questions have exactly one true option
        return _reply(ctx, fmt, [i == true for i in range(n)])
    return _reply(ctx, fmt, random_entity(ctx.catalogue, item.option_values[0], rng))


def random_entity(cat: Catalogue, like_value: str, rng: random.Random) -> str:
    """A random name of the same kind as ``like_value`` from the whole catalogue (chance's open reply)."""
    return random_name(cat, CandidateValue.parse(like_value).kind, rng)


def presence(ctx: Context) -> str:
    item, fmt, view = ctx.item, reply_format(ctx.item), ctx.view
    rng = _rng("presence", ctx)
    present = [present_in(view, v) for v in item.option_values]
    if item.format == "yes_no":
        p = present_in(view, item.statement_value)
        return _reply(ctx, fmt, rng.choice(["yes", "no"]) if p is None else ("yes" if p else "no"))
    if item.format == "statements":
        statements = _statements(ctx)
        flags = [present_in(view, s["value"]) for s in statements]
        letters = [LETTERS[i] for i, f in enumerate(flags) if f]
        return _reply(ctx, fmt, letters or [LETTERS[rng.randrange(len(statements))]])
    if fmt in ("option_judgement", "open_with_reason_judgement"):
        return _reply(ctx, fmt, [bool(p) if p is not None else rng.random() < 0.5 for p in present])
    pick, _ = presence_choice(present)
    if item.format == "multiple_choice":
        return _reply(ctx, fmt, pick if pick is not None else rng.randrange(len(present)))
    # open: name an entity of the right kind that occurs in the clip (it does not know when)
    kind = CandidateValue.parse(item.option_values[0]).kind
    names = present_names(view, kind)
    return _reply(ctx, fmt, rng.choice(names) if names else random_entity(ctx.catalogue, item.option_values[0], rng))


def present_names(view: ClipView, kind: str) -> list[str]:
    """Names of entities of ``kind`` in the clip (the presence responder's open reply)."""
    return names_in_clip(view, kind)


def blind(ctx: Context) -> str:
    item, fmt = ctx.item, reply_format(ctx.item)
    freq = ctx.catalogue.frequency
    scores = [freq.get(v, 0) for v in item.option_values]
    best = max(range(len(scores)), key=lambda i: (scores[i], -i))
    if item.format == "yes_no":
        return _reply(ctx, fmt, "yes" if item.statement_value == item.option_values[best] else "no")
    if item.format == "multiple_choice":
        return _reply(ctx, fmt, best)
    if item.format == "statements":
        statements = _statements(ctx)
        s_scores = [freq.get(s["value"], 0) for s in statements]
        top = max(range(len(s_scores)), key=lambda i: (s_scores[i], -i))
        return _reply(ctx, fmt, [LETTERS[top]])
    if fmt in ("option_judgement", "open_with_reason_judgement"):
        return _reply(ctx, fmt, [i == best for i in range(len(scores))])
    kind = CandidateValue.parse(item.option_values[0]).kind
    common = ctx.catalogue.most_common.get(kind)
    return _reply(ctx, fmt, common or item.options[best])


OFFLINE = {"oracle": oracle, "chance": chance, "presence": presence, "blind": blind}


def offline_reply(name: str, ctx: Context) -> str:
    try:
        fn = OFFLINE[name]
    except KeyError:
        raise ValueError(f"unknown offline responder {name!r} (known: {', '.join(OFFLINE)})") from None
    return fn(ctx)
