"""What each offline reference responder answers in each format: a value the format's reply form renders, or
None when it cannot tell (it then abstains). A responder perceives a clip through :class:`Context` and draws
from its own seeded ``rng``; ``blind`` reads a :class:`Prior` instead."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Callable

from ..annotations.catalogue import Catalogue
from ..annotations.language import LETTERS
from ..annotations.values import CandidateValue
from ..bank.build import presence_choice
from ..bank.clip_view import ClipView
from ..bank.kinds import names_in_clip, present as present_in, random_name
from ..bank.solvers import solve
from ..seeding import DEFAULT_SEED
from .parsing import resolve_open


@dataclass
class Context:
    item: object          # a row of the items table
    question: object      # its row of the questions table
    view: ClipView        # the clip as this condition lets the responder perceive it
    catalogue: Catalogue
    condition: str
    questions_by_id: dict  # question_id -> question row (format-3 statements cite other questions)
    pool: list[str] | None = None  # an imported question's names to draw an open reply from (no catalogue)
    seed: int = DEFAULT_SEED       # the project seed (the seeded responders draw from it)


@dataclass(frozen=True)
class Prior:
    """A text-only prior: ``score(value, text)`` how often the corpus names an option; ``common(item)`` the most
    frequent name of the item's kind (an open reply), or None."""

    score: Callable[[str, str], int]
    common: Callable[[object], str | None]


@dataclass(frozen=True)
class OfflineAnswers:
    """One format's answers: ``oracle``, ``chance`` and ``presence`` take ``(ctx, rng)``, ``blind`` ``(ctx, prior)``."""

    oracle: Callable[[Context, random.Random], object]
    chance: Callable[[Context, random.Random], object]
    presence: Callable[[Context, random.Random], object]
    blind: Callable[[Context, Prior], object]


# --- what the responders read ------------------------------------------------------------------------------


def streams_of(question) -> set[str]:
    return {e["stream"] for e in json.loads(question.provenance)}


def knows_question(ctx: Context) -> bool:
    """Does the responder perceive every stream the question's evidence lies in?"""
    return streams_of(ctx.question) <= ctx.view.streams


def _truth(ctx: Context) -> list[bool]:
    q = ctx.question
    return solve(q.subtype, ctx.view, json.loads(q.params), list(ctx.item.option_values))


def _statements(ctx: Context) -> list[dict]:
    return json.loads(ctx.item.statements)


def _statement_knowable(ctx: Context, s: dict) -> bool:
    perceived = ctx.view.streams
    if s["source"].startswith("question:"):
        q = ctx.questions_by_id[s["source"].split(":", 1)[1]]
        return streams_of(q) <= perceived
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


def random_entity(cat: Catalogue, like_value: str, rng: random.Random) -> str:
    """A random name of the same kind as ``like_value`` from the whole catalogue (chance's open reply)."""
    return random_name(cat, CandidateValue.parse(like_value).kind, rng)


def _kind(item) -> str:
    return CandidateValue.parse(item.option_values[0]).kind


def best_option(item, prior: Prior) -> int:
    """The option the prior favours (ties to the first)."""
    scores = [prior.score(v, str(o)) for v, o in zip(item.option_values, item.options)]
    return max(range(len(scores)), key=lambda i: (scores[i], -i))


def _present(ctx: Context) -> list[bool | None]:
    return [present_in(ctx.view, v) for v in ctx.item.option_values]


def _single_key(ctx: Context) -> int | None:
    if not knows_question(ctx):
        return None
    truth = _truth(ctx)
    return truth.index(True) if sum(truth) == 1 else None


# --- one set of answers per format --------------------------------------------------------------------------


def _yes_no_oracle(ctx, rng):
    if not knows_question(ctx):
        return None
    q = ctx.question
    return solve(q.subtype, ctx.view, json.loads(q.params), [ctx.item.statement_value])[0]


def _yes_no_presence(ctx, rng):
    p = present_in(ctx.view, ctx.item.statement_value)
    return rng.choice(["yes", "no"]) if p is None else ("yes" if p else "no")


YES_NO = OfflineAnswers(
    oracle=_yes_no_oracle,
    chance=lambda ctx, rng: rng.choice(["yes", "no"]),
    presence=_yes_no_presence,
    blind=lambda ctx, prior: "yes" if ctx.item.statement_value == ctx.item.option_values[best_option(ctx.item, prior)]
    else "no",
)


def _pick_presence(ctx, rng):
    present = _present(ctx)
    pick, _ = presence_choice(present)
    return pick if pick is not None else rng.randrange(len(present))


# One option picked by letter (multiple choice, and the letter-only form of imported benchmarks).
PICK_ONE = OfflineAnswers(
    oracle=lambda ctx, rng: _single_key(ctx),
    chance=lambda ctx, rng: rng.randrange(len(ctx.item.options)),
    presence=_pick_presence,
    blind=lambda ctx, prior: best_option(ctx.item, prior),
)


def _statements_oracle(ctx, rng):
    statements = _statements(ctx)
    if not all(_statement_knowable(ctx, s) for s in statements):
        return None
    return [LETTERS[i] for i, s in enumerate(statements) if _statement_truth(ctx, s)] or None


def _statements_chance(ctx, rng):
    k = len(_statements(ctx))
    mask = rng.randrange(1, 2 ** k)  # uniform over the non-empty subsets
    return [LETTERS[i] for i in range(k) if mask >> i & 1]


def _statements_presence(ctx, rng):
    statements = _statements(ctx)
    flags = [present_in(ctx.view, s["value"]) for s in statements]
    return [LETTERS[i] for i, f in enumerate(flags) if f] or [LETTERS[rng.randrange(len(statements))]]


def _statements_blind(ctx, prior):
    scores = [prior.score(s["value"], s["text"]) for s in _statements(ctx)]
    return [LETTERS[max(range(len(scores)), key=lambda i: (scores[i], -i))]]


STATEMENTS = OfflineAnswers(_statements_oracle, _statements_chance, _statements_presence, _statements_blind)


def _judgements_chance(ctx, rng):
    n = len(ctx.item.options)
    true = rng.randrange(n)  # one option marked true, uniformly: 4b questions have exactly one true option
    return [i == true for i in range(n)]


JUDGEMENTS = OfflineAnswers(
    oracle=lambda ctx, rng: _truth(ctx) if knows_question(ctx) else None,
    chance=_judgements_chance,
    presence=lambda ctx, rng: [bool(p) if p is not None else rng.random() < 0.5 for p in _present(ctx)],
    blind=lambda ctx, prior: [i == best_option(ctx.item, prior) for i in range(len(ctx.item.options))],
)


def _open_oracle(ctx, rng):
    index = _single_key(ctx)
    return None if index is None else _open_text(ctx, index, rng)


def _open_chance(ctx, rng):
    if ctx.pool is not None:
        return rng.choice(ctx.pool)
    return random_entity(ctx.catalogue, ctx.item.option_values[0], rng)


def _open_presence(ctx, rng):
    """A name of the right kind that occurs in the clip (it does not know when)."""
    names = names_in_clip(ctx.view, _kind(ctx.item))
    return rng.choice(names) if names else random_entity(ctx.catalogue, ctx.item.option_values[0], rng)


OPEN = OfflineAnswers(
    oracle=_open_oracle,
    chance=_open_chance,
    presence=_open_presence,
    blind=lambda ctx, prior: prior.common(ctx.item) or ctx.item.options[best_option(ctx.item, prior)],
)


def catalogue_prior(cat: Catalogue) -> Prior:
    """The clips' prior: how often the dataset names each value, and the most frequent entity of a kind."""
    freq = cat.frequency
    return Prior(lambda value, text: freq.get(value, 0), lambda item: cat.most_common.get(_kind(item)))
