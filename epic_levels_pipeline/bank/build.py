"""The question bank of one clip: drafts → distractor pools → options → solver-verified keys. A question is kept
only when its solver finds exactly one true option and it is the intended answer; every other draft is dropped
with its reason counted. The steps and the draw: docs/design/question-bank.md."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from operator import is_

import numpy as np
import pandas as pd
import pyarrow as pa

from ..annotations.catalogue import Catalogue
from ..annotations.clips import Clip
from ..annotations.language import LETTERS
from ..seeding import Seed, generator
from .clip_view import ClipView
from .distractors import pool as make_pool
from .levels import derive_scope, evidence_json, outside_window
from .solvers import solve
from .subtypes import SUBTYPES, BankConfig, Draft
from .tables import N_OPTIONS, PoolColumns, QuestionRows


def _sorted_json(value) -> str:
    return json.dumps(value, sort_keys=True)


def question_id(clip: Clip, draft: Draft, strategy: str) -> str:
    """``<clip key>/<subtype>/<strategy>/<digest>``, the digest naming the draft (:func:`_digest`)."""
    return _question_id(clip.key, draft, strategy, _digest(_sorted_json(draft.params), draft.answer.value))


def _question_id(clip_key: str, draft: Draft, strategy: str, digest: str) -> str:
    return f"{clip_key}/{draft.subtype}/{strategy}/{digest}"


def _digest(params_json: str, answer_value) -> str:
    """The digest ending a draft's question ids: the sha1 of ``[params, answer value]`` as sorted JSON (first 8
    hex digits), from the params' JSON already made — the encoder writes a list as the texts of its items,
    each written as it is alone, joined by ``", "`` in brackets."""
    # (a text has no keys to sort: its JSON by the standard encoder, without making a sorting one)
    value_json = json.dumps(answer_value) if isinstance(answer_value, str) else _sorted_json(answer_value)
    text = f"[{params_json}, {value_json}]"
    return hashlib.sha1(text.encode()).hexdigest()[:8]


class _DraftTexts:
    """What a draft's question is made of under every strategy, made once per draft: its params as sorted
    JSON, the digest ending its question ids, the :class:`..seeding.Seed` of its draws (project seed, clip,
    subtype, draft: each strategy draws from a new generator of it) and, once one of its questions is kept,
    its (read-inside) provenance as JSON."""

    __slots__ = ("draft", "params", "digest", "seed", "_provenance")

    def __init__(self, draft: Draft, project_seed: int, clip_key: str):
        self.draft = draft
        self.params = _sorted_json(draft.params)
        self.digest = _digest(self.params, draft.answer.value)
        self.seed = Seed(project_seed, clip_key, draft.subtype, self.digest)
        self._provenance: str | None = None

    def provenance(self) -> str:
        if self._provenance is None:  # the JSON of Evidence.to_dict() of every row
            self._provenance = evidence_json(self.draft.provenance)
        return self._provenance


def presence_choice(present: list[bool | None]) -> tuple[int | None, str]:
    """The presence oracle's pick: the only present option, else the only absent one, else none."""
    if any(p is None for p in present):
        return None, "cannot tell"
    if sum(present) == 1:
        return present.index(True), "only present option"
    if sum(not p for p in present) == 1:
        return present.index(False), "only absent option"
    return None, "no option singled out"


@dataclass(frozen=True)
class Bank:
    """A clip's bank: its questions and distractor pools as Arrow tables of the declared schemas
    (:mod:`..schemas`, written as they are), as frames for readers (:attr:`questions`, :attr:`pools`), and
    the drafts dropped, by reason."""

    question_table: pa.Table
    pool_table: pa.Table
    drops: Counter = field(default_factory=Counter)

    @cached_property
    def questions(self) -> pd.DataFrame:
        return _frame(self.question_table)

    @cached_property
    def pools(self) -> pd.DataFrame:
        return _frame(self.pool_table)


def _frame(table: pa.Table) -> pd.DataFrame:
    """A bank table as a frame: list cells as Python lists (what the bank's readers index and compare)."""
    frame = table.to_pandas()
    for f in table.schema:
        if pa.types.is_list(f.type):
            frame[f.name] = np.fromiter(table.column(f.name).to_pylist(), dtype=object, count=table.num_rows)
    return frame


def build_bank(clip: Clip, rows: pd.DataFrame, catalogue: Catalogue, config: BankConfig | None = None) -> Bank:
    config = config or BankConfig()
    view = ClipView(clip, rows, catalogue)
    questions = QuestionRows()
    pools = PoolColumns(clip.key)
    drops: Counter = Counter()
    names = config.subtypes or tuple(SUBTYPES)
    for name in names:
        subtype = SUBTYPES[name]
        if not subtype.applies(view):
            continue
        drafts: list[Draft] = []
        for item in subtype.generate(view):
            if isinstance(item, tuple):
                drops[f"{name}: {item[1]}"] += 1
            else:
                drafts.append(item)
        exchangeable = config.distractor_rule == "exchangeable"
        if len(drafts) > 1:  # the drafts in a seeded order (per project seed, clip and subtype)
            rng = generator(config.seed, clip.key, name)
            drafts = [drafts[i] for i in rng.permutation(len(drafts)).tolist()]
            if exchangeable:
                drafts = _by_key_turns(drafts, rng)
        answers: frozenset[str] = frozenset()
        if exchangeable:
            answers = frozenset(d.answer.value for d in drafts)  # the peers: every draft's key, kept or not
        # a draft's window check, made once for all strategies: (why it is not asked, or "", and the scope
        # of its rows read inside their spans). It does not read the strategy, and a draft it passed passes
        # it again unchanged (its rows are then read inside already), so the first answer is every strategy's.
        checked: dict[int, tuple[str, str]] = {}
        texts: dict[int, _DraftTexts] = {}  # a draft's texts, made for its first question, shared by the others
        for strategy in config.strategies(subtype):
            kept = 0
            for i, draft in enumerate(drafts):
                if kept >= config.max_per_subtype:
                    drops[f"{name}: over the per-clip cap of {config.max_per_subtype}"] += 1
                    continue
                if i not in checked:
                    outside = outside_window(draft.provenance, clip)
                    checked[i] = (outside, "") if outside else _read_inside(draft, subtype)
                reason, derived = checked[i]
                if reason:
                    drops[f"{name} [{strategy}]: {reason}"] += 1
                    continue
                if i not in texts:
                    texts[i] = _DraftTexts(draft, config.seed, clip.key)
                q, reason = _finish(view, subtype, draft, strategy, config, answers, derived, pools, texts[i])
                if reason:
                    drops[f"{name} [{strategy}]: {reason}"] += 1
                    continue
                questions.add(q)
                kept += 1
    return Bank(questions.table(), pools.table(), drops)


def _by_key_turns(drafts: list[Draft], rng: np.random.Generator) -> list[Draft]:
    """The drafts (already shuffled) reordered so that their keys take turns: one draft of every key, the
    keys in a seeded order, then a second of every key that has one, and so on; drafts of one key keep
    their order. The per-clip cap then keeps as many different keys as the clip offers, each key as likely
    as any other — not the keys that happen to have the most moments (a frequent sound covers more
    seconds; a frequent object moves more often), which would tie the key to corpus frequency.
    Done under the ``exchangeable`` distractor rule only (``uniform_rank`` and ``uniform`` keep the plain
    shuffle of earlier banks); with its peers-first draw it is what makes the key one of its options at
    random."""
    groups: dict[str, list[Draft]] = {}
    for d in drafts:
        groups.setdefault(d.answer.value, []).append(d)
    order = list(groups.values())
    order = [order[i] for i in rng.permutation(len(order)).tolist()]
    out = []
    for i in range(max((len(g) for g in order), default=0)):
        out += [g[i] for g in order if i < len(g)]
    return out


def _read_inside(draft: Draft, subtype) -> tuple[str, str]:
    """Every row is read at an instant inside it (``at_s`` moved into the row). When that moves the
    instants off the moments the subtype asks about (a cue and a narration that overlap only at an edge),
    the draft is not asked. A subtype whose evidence does not match its scope anyway is left to the
    blocking ``level_matches_provenance`` check. Returns why it is not asked ("" when it is) and the
    scope its rows, read inside, derive (:func:`levels.derive_scope`)."""
    inside = [e.read_inside() for e in draft.provenance]
    derived = derive_scope(inside)
    # (read_inside returns a row already inside itself: a row moved is another object)
    moved = not all(map(is_, inside, draft.provenance))
    if (derive_scope(draft.provenance) if moved else derived) == subtype.scope != derived:
        return f"its rows, read inside their spans, give {derived} evidence, not {subtype.scope}", derived
    draft.provenance = inside
    return "", derived


def _finish(view: ClipView, subtype, draft: Draft, strategy: str, config: BankConfig,
            answers: frozenset[str], derived_scope: str | None, pools: PoolColumns, texts: _DraftTexts):
    """The question of one draft under one strategy (its row: a dict by column) and why it
    was dropped ("" when kept); its pool rows go to ``pools``, kept or not. ``derived_scope``: the scope of
    the draft's (read-inside) provenance when already derived; ``texts``: the draft's :class:`_DraftTexts`. The
    question's draws come from a new generator of the draft's seed (project seed, clip, subtype, draft): a
    draft's draws are the same whichever strategies are configured beside this one."""
    clip = view.clip
    clip_key = clip.key
    qid = _question_id(clip_key, draft, strategy, texts.digest)
    rng = texts.seed.generator()  # (project seed, clip, subtype, draft)
    drawn = make_pool(strategy, view, draft, rng, rule=config.distractor_rule, peers=answers)
    chosen = [drawn.candidate(i) for i in range(N_OPTIONS - 1)] if len(drawn) >= N_OPTIONS - 1 else []
    pools.add(qid, draft.subtype, strategy, drawn, {c.value for c in chosen}, draft.answer)
    if drawn.shortfall:
        return None, drawn.shortfall
    if not chosen:
        return None, f"too few distractors ({len(drawn)} < {N_OPTIONS - 1})"
    options = [draft.answer] + chosen
    options = [options[i] for i in rng.permutation(len(options)).tolist()]
    truth = solve(draft.subtype, view, draft.params, [o.value for o in options])
    if sum(truth) != 1:
        return None, f"solver found {sum(truth)} true options"
    key_index = truth.index(True)
    if options[key_index].value != draft.answer.value:
        return None, "generator's intended answer disagrees with the solver"
    present = [o.present for o in options]
    pick, rule = presence_choice(present)
    frequency = view.catalogue.frequency
    key = options[key_index]
    row = dict(
        question_id=qid, dataset=clip.dataset, clip_key=clip_key, video_id=clip.video_id, subtype=draft.subtype,
        level=subtype.level, scope=subtype.scope,
        derived_scope=derive_scope(draft.provenance) if derived_scope is None else derived_scope,
        question=draft.question, options=[o.text for o in options], option_values=[o.value for o in options],
        answer=key.text, answer_value=key.value, answer_index=key_index, distractor_strategy=strategy,
        provenance=texts.provenance(), can_stand_alone=bool(draft.can_stand_alone),
        stand_alone_reason=draft.stand_alone_reason, open_question=draft.open_question, statement=draft.statement,
        answer_type=draft.answer_type, params=texts.params, option_present=[None if p is None else bool(p) for p in present],
        presence_pick=-1 if pick is None else pick, presence_rule=rule, presence_correct=pick == key_index,
        caveats=list(draft.caveats), option_frequency=[int(frequency.get(o.value, 0)) for o in options],
    )
    return row, ""


def render_question(q: dict | pd.Series, with_key: bool = True) -> str:
    """A question as a person reads it, with level, subtype, options, key and provenance."""
    lines = [f"[{q['level']} · {q['subtype']} · {q['distractor_strategy']}] {q['question']}"]
    for i, option in enumerate(q["options"]):
        mark = "  ← key" if with_key and i == q["answer_index"] else ""
        lines.append(f"  {LETTERS[i]}. {option}{mark}")
    if with_key:
        for e in json.loads(q["provenance"]):
            at = f" read at {e['at_s']:.2f}s" if e.get("at_s") is not None else ""
            lines.append(f"    evidence: {e['stream']} {e['row_id']} {e['start_s']:.2f}–{e['stop_s']:.2f}s "
                         f"({e['role']}{at}) {e.get('label', '')}".rstrip())
        for c in q["caveats"]:
            lines.append(f"    caveat: {c}")
    return "\n".join(lines)
