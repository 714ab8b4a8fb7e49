"""Distractors: drawing a draft's three wrong options from its strategy's pool (:mod:`.pools`), by a seeded rule
(:data:`RULES`) that leaves a corpus-frequency prior nothing to go on (docs/design/question-bank.md)."""

from __future__ import annotations

import numpy as np

from ..annotations.values import CandidateValue
from .candidates import Candidate, Drawn, Pool
from .clip_view import ClipView
from .kinds import present as present_in, render
from .options import ENTITY_KINDS, OptionSet
from .pools import POOLS, offered, option_texts

__all__ = ["Candidate", "Drawn", "Pool", "EXCHANGEABLE", "N_DISTRACTORS", "RULES", "has_prior", "offered",
           "option_texts", "pool", "render"]

RULES = ("exchangeable", "uniform_rank", "uniform")
# Strategies whose key and distractors are the same kind of thing drawn from the same place (what the clip
# holds at its moments): under the ``exchangeable`` rule they draw uniformly, the subtype's other answers first.
EXCHANGEABLE = ("same_clip_other_moments",)
N_DISTRACTORS = 3
# A ranked draw's sides: the candidates more, as and less frequent than the key
_SIDES = {"higher": np.greater, "equal": np.equal, "lower": np.less}


def pool(strategy: str, view: ClipView, draft, rng: np.random.Generator | None = None, limit: int = 12,
         rule: str = "exchangeable", peers: frozenset[str] = frozenset()) -> Drawn:
    """Wrong-option candidates the strategy offers for a draft (answer excluded), rendered, the :data:`N_DISTRACTORS`
    chosen ones first, up to ``limit`` in all; and how many the strategy offered.

    A candidate whose text clashes with the key's or with one already taken (:func:`.options.clash`) is skipped.
    ``rule`` (:data:`RULES`: ``exchangeable``, ``uniform_rank``, ``uniform``) says how the three are drawn; when a
    ranked draw cannot be filled fairly, no option set is drawn and ``shortfall`` says why (the question is
    dropped with that reason). The pool's positions are permuted once by ``rng`` (none: pool order); only the
    candidates kept are rendered and made."""
    if strategy not in POOLS:
        raise ValueError(f"unknown distractor strategy {strategy!r} (known: {', '.join(POOLS)})")
    if rule not in RULES:
        raise ValueError(f"unknown distractor rule {rule!r} (known: {', '.join(RULES)})")
    peers_first = rule == "exchangeable" and strategy in EXCHANGEABLE
    if rule == "exchangeable" and not peers_first:
        rule = "uniform_rank"
    source = offered(strategy, view, draft)
    n = len(source)
    ranked = rule == "uniform_rank" and has_prior(draft.answer.value)
    key_f = int(view.catalogue.frequency.get(draft.answer.value, 0))
    if ranked:
        higher, lower = int(np.count_nonzero(source.freq > key_f)), int(np.count_nonzero(source.freq < key_f))
        # Absent-from-clip pools hold the whole catalogue: a rank they cannot fill means the key is at the
        # corpus's extreme, and another rank would hand the prior the key. Kept only if every rank could be
        # drawn: dropping just the unlucky draws would keep the most frequent keys exactly when they come out
        # on top. (No draw is needed to know that.)
        if strategy == "absent_from_clip" and n - higher - lower < N_DISTRACTORS and (
                higher < N_DISTRACTORS or lower < N_DISTRACTORS):
            return Drawn.none(strategy, n, "the key is among the three most or least frequent of its kind: "
                                           "no frequency-matched options")
    draw = _Draw(view, source, OptionSet(option_texts(view.catalogue), draft.answer.text,
                                         CandidateValue.parse(draft.answer.value).kind in ENTITY_KINDS))
    order = rng.permutation(n) if rng is not None else np.arange(n)
    if ranked:
        shuffled = source.freq[order]
        counts = {"higher": higher, "equal": n - higher - lower, "lower": lower}
        sides: dict[str, np.ndarray] = {}

        def side(name: str) -> np.ndarray:
            """The positions on one side of the key's frequency, in drawn order (made when a design asks)."""
            got = sides.get(name)
            if got is None:
                got = sides[name] = order[_SIDES[name](shuffled, key_f)]
            return got

        drawn = int(rng.integers(N_DISTRACTORS + 1)) if rng is not None else 0
        # Designs, best first: all three as frequent as the key (both priors exactly at chance), then the
        # drawn rank (``drawn`` distractors more frequent, the rest less), then the other ranks in a seeded order.
        others = [k for k in range(N_DISTRACTORS + 1) if k != drawn]
        if rng is not None:
            others = [others[i] for i in rng.permutation(len(others))]
        designs = [{"equal": N_DISTRACTORS}] + [{"higher": k, "lower": N_DISTRACTORS - k} for k in [drawn] + others]
        for design in designs:
            if any(counts[name] < want for name, want in design.items()):
                continue  # (it cannot be filled)
            draw.restart()
            if all(want == 0 or draw.take(side(name), want) for name, want in design.items()):  # (none: no side read)
                break
        else:
            return Drawn.none(strategy, n, "no distractors to place the key at a frequency rank (pool too small)")
    elif peers_first and peers:
        peer = np.fromiter(map(peers.__contains__, source.values[order].tolist()), dtype=bool, count=n)
        order = np.concatenate([order[peer], order[~peer]])
    draw.take(order, limit - len(draw.taken))
    return draw.drawn(n)


class _Draw:
    """The positions taken so far from one pool, each with its text: a text is joined to the options (the key's
    and those taken) unless it clashes with one. The candidates' columns are read at the end, for the
    positions taken (:meth:`drawn`)."""

    def __init__(self, view: ClipView, source: Pool, beside: OptionSet):
        self.view, self.source, self.beside = view, source, beside
        self.taken: dict[int, str] = {}

    def restart(self) -> None:
        self.taken = {}
        self.beside.clear()

    def text(self, p: int) -> str:
        value = self.source.values[p]
        texts = self.source.texts
        if texts is None:
            return render(self.view, value)
        text = texts.get(value)
        if text is None:
            text = texts[value] = render(self.view, value)
        return text

    def take(self, positions: np.ndarray, want: int) -> bool:
        """Take up to ``want`` more of ``positions`` in order (those not taken nor clashing); all of them?"""
        got = 0
        for start in range(0, len(positions) if want > 0 else 0, 32):  # (a draw reads a few of thousands)
            for p in positions[start:start + 32].tolist():
                if p in self.taken:
                    continue
                text = self.text(p)
                if self.beside.join(text):
                    self.taken[p] = text
                    got += 1
                    if got == want:
                        return True
        return got >= want

    def drawn(self, offered: int) -> Drawn:
        """The candidates taken, as the columns of a :class:`.candidates.Drawn`."""
        source = self.source
        taken = np.fromiter(self.taken, dtype=np.intp, count=len(self.taken))  # (the positions, in order taken)
        values = tuple(source.values[taken].tolist())
        at = source.at[taken].tolist()
        present = ((source.present,) * len(values) if source.present is not None
                   else tuple(present_in(self.view, v) for v in values))
        return Drawn(source.strategy, values, tuple(self.taken.values()), present,
                     tuple(tuple(source.rows_of(a)) for a in at), tuple(map(source.note_of, at)), offered)


def has_prior(value: str) -> bool:
    """Does the corpus give this kind of value a frequency (a text-only prior)? Not counts or steps."""
    return CandidateValue.parse(value).kind not in ("count", "step")
