"""The question bank of one clip: drafts → distractor pools → options → solver-verified keys.

For every registered subtype the clip gets (:meth:`.subtypes.Subtype.applies`) and every configured distractor strategy:

1. the subtype's generator makes drafts (or says why it cannot: counted as a drop reason);
2. the strategy offers a pool of wrong candidates, each with the rows that justify it;
3. three are drawn (seeded by the question id) under the configured rule, none clashing with another
   option (:func:`distractors.pool`) — by default stratified by corpus frequency so that the key's
   frequency rank among the options is uniform, except in the clip's own pools, where they are drawn
   uniformly, the subtype's other answers in the clip first, so that the key is any of its options at
   random (with the default ``exchangeable`` rule a clip's drafts also take turns over their keys before
   the per-clip cap: :func:`_by_key_turns`) — and shuffled with the intended answer;
4. the subtype's solver decides which of the four are true. The question is kept only if exactly one
   is, and it is the intended answer; otherwise it is dropped and the reason counted.

Before drawing, a draft whose context or answer rows lie mostly outside the window is dropped
(:func:`levels.outside_window`), and every row is read at an instant inside it. Each question records its options' corpus frequencies
(``option_frequency``: what a text-only prior sees; :mod:`.options`).

The presence oracle (knows which entities occur anywhere in the clip, not when) is applied to every kept
question: ``presence_pick`` is the option it singles out (the only present one, else the only absent
one), and whether that is the key.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain
from operator import is_

import numpy as np
import pandas as pd
import pyarrow as pa
from pandas.arrays import ArrowStringArray

try:  # pandas' internals, for :func:`_frame_of_blocks` (a probe checks what it makes; without them, the public path)
    from pandas._libs.internals import BlockPlacement as _BlockPlacement
    from pandas.core.dtypes.common import is_1d_only_ea_dtype as _is_1d_only_ea_dtype
    from pandas.core.internals.blocks import ExtensionBlock as _ExtensionBlock
    from pandas.core.internals.blocks import NumpyBlock as _NumpyBlock
    from pandas.core.internals.blocks import get_block_type as _get_block_type
    from pandas.core.internals.managers import BlockManager as _BlockManager
except ImportError:
    pass

from ..annotations.catalogue import Catalogue
from .clip_view import ClipView
from .distractors import pool as make_pool
from ..annotations.clips import Clip
from .levels import derive_scope, evidence_json, outside_window
from .solvers import solve
from .subtypes import SUBTYPES, BankConfig, Draft
from ..annotations.language import LETTERS
from ..seeding import shuffle, stable_seed

QUESTION_COLUMNS = [
    "question_id", "dataset", "clip_key", "video_id", "subtype", "level", "scope", "derived_scope", "question",
    "options", "option_values", "answer", "answer_value", "answer_index", "distractor_strategy", "provenance",
    "can_stand_alone", "stand_alone_reason", "open_question", "statement", "answer_type", "params",
    "option_present", "presence_pick", "presence_rule", "presence_correct", "caveats",
    "option_frequency",
]
POOL_COLUMNS = ["clip_key", "question_id", "subtype", "distractor_strategy", "value", "text", "role", "present",
                "rows", "note", "chosen", "offered"]
_POOL_AT = {c: i for i, c in enumerate(POOL_COLUMNS)}
N_OPTIONS = 4
# ``json.dumps(obj, sort_keys=True)`` makes this encoder on every call; its ``encode`` gives the same text.
_SORTED_JSON = json.JSONEncoder(sort_keys=True)


def _sorted_json_maker():
    """``_SORTED_JSON.encode``, or (with the C encoder) the C encoder ``encode`` makes on every call, made
    once: the same settings (sorted keys, ASCII strings, ``": "`` and ``", "``, NaN allowed), without the
    check for circular structures (a draft's params are plain values, built fresh)."""
    c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
    if c_make_encoder is None:  # (no C accelerator: the encoder's own Python path)
        return _SORTED_JSON.encode
    encoder = c_make_encoder(None, _SORTED_JSON.default, json.encoder.encode_basestring_ascii, None, ": ", ", ",
                             True, False, True)
    return lambda value: "".join(encoder(value, 0))


_sorted_json = _sorted_json_maker()
# The type of the values of these question columns, by how :func:`_finish` makes them (f-string, list
# displays, ``list.index``, ``bool()``, JSON text, ``==``; ``presence_pick`` is -1 or an index): the frame
# does not scan them. ``test_build_frames`` checks them on real banks.
_QUESTION_TYPES = {QUESTION_COLUMNS.index(c): {t} for c, t in (
    ("question_id", str), ("options", list), ("option_values", list), ("answer_index", int),
    ("provenance", str), ("can_stand_alone", bool), ("params", str), ("option_present", list),
    ("presence_pick", int), ("presence_rule", str), ("presence_correct", bool), ("caveats", list),
    ("option_frequency", list))}


def question_id(clip: Clip, draft: Draft, strategy: str) -> str:
    """``<clip key>/<subtype>/<strategy>/<digest>``, the digest naming the draft (:func:`_digest`)."""
    return _question_id(clip.key, draft, strategy, _digest(_sorted_json(draft.params), draft.answer.value))


def _question_id(clip_key: str, draft: Draft, strategy: str, digest: str) -> str:
    return f"{clip_key}/{draft.subtype}/{strategy}/{digest}"


def _digest(params_json: str, answer_value) -> str:
    """The digest ending a draft's question ids: the sha1 of ``[params, answer value]`` as sorted JSON (first 8
    hex digits), from the params' JSON already made — the encoder writes a list as the texts of its items,
    each written as it is alone, joined by ``", "`` in brackets."""
    text = f"[{params_json}, {_SORTED_JSON.encode(answer_value)}]"
    return hashlib.sha1(text.encode()).hexdigest()[:8]


class _DraftTexts:
    """A draft's texts, the same for its question under every strategy, made once per draft: its params as
    sorted JSON, the digest ending its question ids and, once one of its questions is kept, its (read-inside)
    provenance as JSON."""

    __slots__ = ("draft", "params", "digest", "_provenance")

    def __init__(self, draft: Draft):
        self.draft = draft
        self.params = _sorted_json(draft.params)
        self.digest = _digest(self.params, draft.answer.value)
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


@dataclass
class Bank:
    questions: pd.DataFrame
    pools: pd.DataFrame
    drops: Counter = field(default_factory=Counter)


def build_bank(clip: Clip, rows: pd.DataFrame, catalogue: Catalogue, config: BankConfig | None = None) -> Bank:
    config = config or BankConfig()
    view = ClipView(clip, rows, catalogue)
    questions: list[tuple] = []
    pools = _PoolColumns(clip.key)
    drops: Counter = Counter()
    # One generator, reseeded for each draw: ``rng.seed(s)`` leaves it in the state ``random.Random(s)``
    # starts in (its ``__init__`` is that call), without a new generator (its 2.5 KB of state allocated and
    # freed) for every question: an eighth of the cost of a draw's seeding, by instruction count. Nothing
    # keeps it past a draw.
    rng = random.Random(0)
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
        if len(drafts) > 1:  # (fewer drafts draw no number in either shuffle: no generator to seed, same order)
            rng.seed(stable_seed(config.seed, clip.key, name))
            shuffle(rng, drafts)
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
                    texts[i] = _DraftTexts(draft)
                q, reason = _finish(view, subtype, draft, strategy, config, answers, derived, pools, texts[i], rng)
                if reason:
                    drops[f"{name} [{strategy}]: {reason}"] += 1
                    continue
                questions.append(q)
                kept += 1
    return Bank(_records_frame(questions, QUESTION_COLUMNS, _QUESTION_TYPES), pools.frame(), drops)


class _PoolColumns:
    """A clip's pool rows, collected column by column in :data:`POOL_COLUMNS` order: each drawn pool adds its
    candidates' rows, then the answer's (the rows ``_finish`` used to make as tuples, with no tuples to make
    and transpose). The columns that hold one value for a whole pool grow by that value repeated."""

    def __init__(self, clip_key: str):
        self.clip_key = clip_key
        self.cells: list[list] = [[] for _ in POOL_COLUMNS]
        # the types of the columns of one value a pool, gathered as pools are added (never scanned), and of
        # the columns whose type is fixed here: the question id (an f-string), role, rows (copies), chosen
        self.known: dict[int, set[type]] = {_POOL_AT[c]: t for c, t in (
            ("clip_key", {type(clip_key)}), ("question_id", {str}), ("subtype", set()), ("distractor_strategy", set()),
            ("role", {str}), ("rows", {list}), ("chosen", {bool}), ("offered", set()))}

    def add(self, qid: str, subtype: str, strategy: str, candidates: list, chosen_values: set[str], answer,
            offered: int) -> None:
        """One pool: its distractor candidates (``chosen`` when their value is one of ``chosen_values``), then
        the answer (always chosen), every row a copy of its candidate's rows list."""
        k = len(candidates) + 1
        known = self.known
        known[_POOL_AT["subtype"]].add(type(subtype))
        known[_POOL_AT["distractor_strategy"]].add(type(strategy))
        known[_POOL_AT["offered"]].add(type(offered))
        (clip_key, qids, subtypes, strategies, values, texts, roles, present, rows, notes, chosen,
         offereds) = self.cells
        clip_key += [self.clip_key] * k
        qids += [qid] * k
        subtypes += [subtype] * k
        strategies += [strategy] * k
        values += [c.value for c in candidates]
        values.append(answer.value)
        texts += [c.text for c in candidates]
        texts.append(answer.text)
        roles += ["distractor"] * (k - 1)
        roles.append("answer")
        present += [c.present for c in candidates]
        present.append(answer.present)
        rows += [list(c.rows) for c in candidates]
        rows.append(list(answer.rows))
        notes += [c.note for c in candidates]
        notes.append(answer.note)
        chosen += [c.value in chosen_values for c in candidates]
        chosen.append(True)
        offereds += [offered] * k

    def frame(self) -> pd.DataFrame:
        return _columns_frame(self.cells, POOL_COLUMNS, self.known)


def _records_frame(rows: list[tuple], columns: list[str], known: dict[int, set[type]] | None = None) -> pd.DataFrame:
    """``pd.DataFrame([dict(zip(columns, row)) for row in rows], columns=columns)``: the same frame, from rows
    given as tuples in column order (:func:`_columns_frame` of their columns; ``known`` as there)."""
    return _columns_frame(list(zip(*rows)), columns, known)


def _columns_frame(cells: list, columns: list[str], known: dict[int, set[type]] | None = None) -> pd.DataFrame:
    """The frame ``pd.DataFrame`` makes of the rows ``zip(*cells)`` as dicts (``cells``: one sequence of
    values per column, in column order, all of one length), built column by column. The columns whose values
    are all strings, all bools or all ints are typed directly (pandas infers the others as it would); the
    string columns are converted to Arrow in one call, each column a slice of that one array. ``known``: the
    types of a column's values known without looking (column position → the set of their types), which
    spares scanning those columns."""
    n = len(cells[0]) if cells else 0
    if not n:
        return pd.DataFrame([], columns=columns)
    known = known or {}
    arrays: list = [None] * len(columns)
    strings = []
    for i, values in enumerate(cells):
        types = known.get(i) or set(map(type, values))
        if types == {str} and _STR is not None:
            strings.append(i)
        else:
            arrays[i] = _typed(values, types)
    if strings:  # (a slice of a one-chunk ChunkedArray is a one-chunk ChunkedArray: nothing left to wrap)
        flat = pa.chunked_array([pa.array(list(chain.from_iterable(cells[i] for i in strings)), type=pa.large_string())])
        for j, i in enumerate(strings):
            arrays[i] = _arrow_strings(flat.slice(j * n, n))
    return _frame_of_arrays(arrays, _labels(tuple(columns)), n)


def _frame_of_arrays_public(arrays: list, columns: pd.Index, n: int) -> pd.DataFrame:
    """The frame of one 1-d array per column (numpy or extension arrays, each of length ``n``), as
    ``DataFrame._from_arrays`` makes it (or, where that private constructor moved, the public one)."""
    try:
        return pd.DataFrame._from_arrays(arrays, columns=columns, index=pd.RangeIndex(n), verify_integrity=False)
    except (AttributeError, TypeError):  # the private constructor moved: the public one
        return pd.DataFrame(dict(zip(columns, arrays)), columns=columns)


def _frame_of_blocks(arrays: list, columns: pd.Index, n: int) -> pd.DataFrame:
    """:func:`_frame_of_arrays_public`, its blocks made here: what ``_from_arrays`` does less its checks of
    arrays typed here already. It reproduces pandas' consolidation (``managers._form_blocks``): the columns of
    one numpy dtype stacked into one 2-d block, their positions its placement, the dtypes in the order of
    their first column; every extension array (a string column) a block of its own, grouped (as pandas does)
    by the identity of its dtype. Columns of another kind (datetimes, numpy strings, 2-d extension arrays)
    go to the public path. :data:`_frame_of_arrays` is this only when it made the frame the public path
    makes, layout of blocks included (:func:`_frame_maker`)."""
    groups: dict = {}
    for i, a in enumerate(arrays):
        dtype = a.dtype
        key = dtype if isinstance(dtype, np.dtype) else id(dtype)
        where = groups.get(key)
        if where is None:
            groups[key] = [i]
        else:
            where.append(i)
    blocks = []
    for where in groups.values():
        first = arrays[where[0]]
        if isinstance(first, np.ndarray):
            if first.dtype.kind not in "biufcO":
                return _frame_of_arrays_public(arrays, columns, n)
            values = np.empty((len(where), n), dtype=first.dtype)
            for j, i in enumerate(where):
                values[j] = arrays[i]
            blocks.append(_NumpyBlock(values, ndim=2, placement=_BlockPlacement(tuple(where))))
        elif _get_block_type(first.dtype) is _ExtensionBlock and _is_1d_only_ea_dtype(first.dtype):
            blocks += [_ExtensionBlock(arrays[i], ndim=2, placement=_BlockPlacement(i)) for i in where]
        else:
            return _frame_of_arrays_public(arrays, columns, n)
    manager = _BlockManager(blocks, [columns, pd.RangeIndex(range(n))], verify_integrity=False)
    # consolidated already (one block per numpy dtype; extension blocks never merge): recorded so, as
    # ``_consolidate_inplace`` records it after ``_from_arrays`` (the probe compares the flags too)
    manager._is_consolidated = manager._known_consolidated = True
    return pd.DataFrame._from_mgr(manager, manager.axes)


def _block_layout(frame: pd.DataFrame) -> list:
    """A frame's blocks as pandas holds them: kind, dtype, placement, shape and memory order of each; then
    whether its manager knows itself consolidated."""
    return [(type(b), b.dtype, str(b.mgr_locs), b.values.shape,
             b.values.flags.c_contiguous if isinstance(b.values, np.ndarray) else None)
            for b in frame._mgr.blocks] + [(frame._mgr._is_consolidated, frame._mgr._known_consolidated)]


def _frame_maker():
    """:func:`_frame_of_blocks` when this pandas has the internals it uses and it makes the frame (values,
    dtypes, labels, layout of blocks) the public path makes of a probe holding every kind of column the bank
    has; else the public path."""
    try:
        probe = [np.array([True, False]), np.array([1, 2], dtype=np.int64), _typed(([1], ["a"]), {list}),
                 _typed((None, "b"), {type(None), str}), np.array([False, True]), np.array([3, 4], dtype=np.int64),
                 _typed((1.5, None), {float, type(None)})]
        if _STR is not None:
            flat = pa.chunked_array([pa.array(["a", "", "b", "c"], type=pa.large_string())])
            probe += [_arrow_strings(flat.slice(0, 2)), _arrow_strings(flat.slice(2, 2))]
        labels = pd.Index([f"c{i}" for i in range(len(probe))])
        made, public = _frame_of_blocks(probe, labels.copy(), 2), _frame_of_arrays_public(probe, labels.copy(), 2)
        pd.testing.assert_frame_equal(made, public, check_exact=True)
        same = _block_layout(made) == _block_layout(public)
    except (AttributeError, TypeError, ValueError, AssertionError, NameError):  # another pandas
        return _frame_of_arrays_public
    return _frame_of_blocks if same else _frame_of_arrays_public


@lru_cache(maxsize=None)
def _column_index(columns: tuple[str, ...]) -> pd.Index:
    """The frames' column labels, made once per column list (each frame gets a shallow copy: :func:`_labels`)."""
    return pd.Index(list(columns))


def _labels(columns: tuple[str, ...]) -> pd.Index:
    """A shallow copy of :func:`_column_index` (a frame's own labels, renamed without renaming another's):
    ``Index.copy()`` is ``_view()`` after checking the name it is given — none here."""
    labels = _column_index(columns)
    try:
        return labels._view()
    except AttributeError:  # another pandas
        return labels.copy()


def _inferred_str_dtype():
    """The dtype pandas infers for a column of strings when it is Arrow-backed ``str`` (pandas 3), else None."""
    dtype = pd.Series(["a"]).dtype
    if not (isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"):
        return None
    try:
        probe = ArrowStringArray(pa.chunked_array([pa.array(["a"], type=pa.large_string())]), dtype=dtype)
        same = pd.array(["a"], dtype=dtype)._pa_array.type == probe._pa_array.type
    except (AttributeError, TypeError):  # another pandas: let it infer
        return None
    return dtype if same and pd.Series(probe).equals(pd.Series(["a"])) else None


_STR = _inferred_str_dtype()


def _arrow_strings_checked(values: pa.Array | pa.ChunkedArray) -> ArrowStringArray:
    """An Arrow ``large_string`` array (or chunked array) as the column pandas infers for those strings
    (needs :data:`_STR`), through the public constructor (which checks the type)."""
    return ArrowStringArray(values if isinstance(values, pa.ChunkedArray) else pa.chunked_array([values]), dtype=_STR)


def _string_maker():
    """How :func:`_columns_frame` wraps a ``large_string`` Arrow array: ``_from_pyarrow_array`` of an empty
    column of :data:`_STR` — the constructor pandas 3 uses for the results of Arrow operations, without
    ``__init__``'s type checks and casts (the values here are ``large_string`` by construction) — when this
    pandas has it and it makes the column the public constructor makes; else the public constructor."""
    if _STR is None:
        return _arrow_strings_checked
    try:
        fast = _arrow_strings_checked(pa.array([], type=pa.large_string()))._from_pyarrow_array
        probe = pa.chunked_array([pa.array(["x", "a", ""], type=pa.large_string())]).slice(1, 2)
        made, checked = fast(probe), _arrow_strings_checked(probe)
        same = type(made) is type(checked) and made.dtype == checked.dtype and \
            made._pa_array.equals(checked._pa_array) and pd.Series(made).equals(pd.Series(checked))
    except (AttributeError, TypeError, AssertionError):  # another pandas
        return _arrow_strings_checked
    return fast if same else _arrow_strings_checked


_arrow_strings = _string_maker()


def _typed(values: tuple, types: set[type]):
    """A column's values (``types``: the set of their types) as the array pandas would infer for them;
    columns of strings only are converted by :func:`_columns_frame`, all at once."""
    if types == {bool}:
        return np.array(values, dtype=bool)
    if types == {int}:
        try:
            return np.array(values, dtype=np.int64)
        except OverflowError:  # an int outside int64: pandas' inference (uint64 or objects)
            pass
    elif types == {list} or types == _BOOLS_AND_NONE:
        # objects as they are: lists one per cell (never a 2-d array as np.array would make); bools with
        # None are what pandas infers them as too (objects, None kept)
        return np.fromiter(values, dtype=object, count=len(values))
    return pd.Series(list(values))._values


_BOOLS_AND_NONE = {bool, type(None)}  # (a pool's ``present``: None where presence cannot tell)


_frame_of_arrays = _frame_maker()


def _by_key_turns(drafts: list[Draft], rng: random.Random) -> list[Draft]:
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
    shuffle(rng, order)
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
            answers: frozenset[str], derived_scope: str | None, pools: _PoolColumns, texts: _DraftTexts,
            rng: random.Random):
    """The question of one draft under one strategy (its row, in :data:`QUESTION_COLUMNS` order) and why it
    was dropped ("" when kept); its pool rows go to ``pools``, kept or not. ``derived_scope``: the scope of
    the draft's (read-inside) provenance when already derived; ``texts``: the draft's :class:`_DraftTexts`; ``rng``:
    the bank's generator, reseeded here for this question."""
    clip = view.clip
    clip_key = clip.key
    qid = _question_id(clip_key, draft, strategy, texts.digest)
    rng.seed(stable_seed(config.seed, qid))  # (the state of ``random.Random(stable_seed(config.seed, qid))``)
    drawn = make_pool(strategy, view, draft, rng, rule=config.distractor_rule, peers=answers)
    candidates, offered = drawn.candidates, drawn.offered
    chosen = candidates[: N_OPTIONS - 1] if len(candidates) >= N_OPTIONS - 1 else []
    chosen_values = {c.value for c in chosen}
    pools.add(qid, draft.subtype, strategy, candidates, chosen_values, draft.answer, offered)
    if drawn.shortfall:
        return None, drawn.shortfall
    if not chosen:
        return None, f"too few distractors ({len(candidates)} < {N_OPTIONS - 1})"
    options = [draft.answer] + chosen
    shuffle(rng, options)
    truth = solve(draft.subtype, view, draft.params, [o.value for o in options])
    if sum(truth) != 1:
        return None, f"solver found {sum(truth)} true options"
    key_index = truth.index(True)
    if options[key_index].value != draft.answer.value:
        return None, "generator's intended answer disagrees with the solver"
    present = [o.present for o in options]
    pick, rule = presence_choice(present)
    frequency = view.catalogue.frequency
    # The row, in QUESTION_COLUMNS order, each line's columns named at its end: a tuple made here, not a
    # dict of 28 keys read back by name (that cost more than the rest of this function's own lines).
    row = (
        qid, clip.dataset, clip_key, clip.video_id,  # question_id, dataset, clip_key, video_id
        draft.subtype, subtype.level, subtype.scope,  # subtype, level, scope
        derive_scope(draft.provenance) if derived_scope is None else derived_scope,  # derived_scope
        draft.question, [o.text for o in options], [o.value for o in options],  # question, options, option_values
        options[key_index].text, options[key_index].value, key_index,  # answer, answer_value, answer_index
        strategy, texts.provenance(),  # distractor_strategy, provenance
        bool(draft.can_stand_alone), draft.stand_alone_reason,  # can_stand_alone, stand_alone_reason
        draft.open_question, draft.statement, draft.answer_type,  # open_question, statement, answer_type
        texts.params, [None if p is None else bool(p) for p in present],  # params, option_present
        -1 if pick is None else pick, rule, pick == key_index,  # presence_pick, presence_rule, presence_correct
        list(draft.caveats),  # caveats
        [int(frequency.get(o.value, 0)) for o in options],  # option_frequency
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
