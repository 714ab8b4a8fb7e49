"""The whole offline computation as plain function calls (pure core: no Dagster). :func:`clip_chain` is one clip's
bank → items → offline responses → verdicts → partials (the ``questions`` command and the tests run it, the assets
its steps); :func:`run_core` loads the annotations and catalogue once, runs the chain per clip and the cross-clip
tables, in memory. Only the offline responders run here (no judge: undecided rows stay undecided); it is the
reference the orchestration benchmark compares the graph against."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

import pandas as pd

from .annotations.readers import Annotations, load_annotations
from .bank.checks import shortcut_rates
from .annotations.catalogue import Catalogue, build_catalogue
from .bank.clip_view import ClipView
from .annotations.clips import Clip
from .annotations.clip_rows import iter_clips_annotations
from .annotations.clip_keys import read_manifest
from .formats.items import ITEM_COLUMNS, build_items
from .bank.tables import QUESTION_COLUMNS
from .bank.build import Bank, build_bank
from .responses.offline import OFFLINE_RESPONDERS
from .responses.runner import RESPONSE_COLUMNS, offline_responses
from .scoring.verdicts import VERDICT_COLUMNS, verdicts as make_verdicts
from .seeding import DEFAULT_SEED
from .settings import Paths
from .bank.subtypes import BankConfig
from .scoring.metrics.clip_partials import clip_partials
from .scoring.metrics.tables import over_marking, paired_comparisons, scores, shortcut_audit

DEFAULT_RESPONDERS = OFFLINE_RESPONDERS


@dataclass
class CoreResult:
    """Every table of an offline run. Per-clip tables are concatenated over clips (clip order kept)."""

    questions: pd.DataFrame
    items: pd.DataFrame
    responses: pd.DataFrame
    verdicts: pd.DataFrame
    scores: pd.DataFrame
    paired: pd.DataFrame
    over_marking: pd.DataFrame
    shortcut_audit: pd.DataFrame
    clips: list[Clip] = field(default_factory=list)
    drops: Counter = field(default_factory=Counter)          # question-bank drop reasons, summed over clips
    seconds: dict[str, float] = field(default_factory=dict)  # wall time per stage


def _concat(frames: list[pd.DataFrame], columns: list[str]) -> pd.DataFrame:
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True)


@dataclass
class ClipTables:
    """One clip through the chain: its bank, items (and the open prompts the checker sent to 4b), and, when
    responders were asked, their offline responses and the verdicts."""

    clip: Clip
    bank: Bank
    items: pd.DataFrame
    rejected: list[str]
    responses: pd.DataFrame | None = None
    verdicts: pd.DataFrame | None = None
    partials: dict[str, pd.DataFrame] | None = None


def clip_chain(clip: Clip, rows: pd.DataFrame, catalogue: Catalogue, *, config: BankConfig | None = None,
               responders: tuple[str, ...] | list[str] | None = None, seed: int = DEFAULT_SEED, judge=None,
               partials: bool = False, seconds: Counter | None = None, started: float | None = None) -> ClipTables:
    """One clip's bank → items → offline responses → verdicts (when ``responders`` is given) → partial results
    (with ``partials``). ``seconds`` adds each stage's wall time, counted from ``started`` (default: now)."""
    t = time.perf_counter() if started is None else started

    def lap(stage: str) -> None:
        nonlocal t
        now = time.perf_counter()
        if seconds is not None:
            seconds[stage] += now - t
        t = now

    bank = build_bank(clip, rows, catalogue, config)
    lap("questions")
    items, rejected = build_items(bank.questions, ClipView(clip, rows, catalogue), catalogue, seed=seed)
    lap("items")
    if responders is None:
        return ClipTables(clip, bank, items, rejected)
    responses = offline_responses(clip, items, bank.questions, rows, catalogue, list(responders), seed=seed)
    lap("responses")
    verdicts = make_verdicts(responses, items, judge=judge, judge_seed=seed)
    lap("verdicts")
    made = clip_partials(verdicts, bank.questions, items, seed=seed) if partials else None
    return ClipTables(clip, bank, items, rejected, responses, verdicts, made)


def questions_and_items(paths: Paths, clips: list[Clip] | None = None, *, annotations: Annotations | None = None,
                        catalogue: Catalogue | None = None,
                        config: BankConfig | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Only the question bank and the items of ``clips`` (default: the manifest's), concatenated."""
    clips = list(read_manifest(paths.manifest)) if clips is None else list(clips)
    ann = annotations if annotations is not None else load_annotations(paths.annotations)
    cat = catalogue if catalogue is not None else build_catalogue(ann)
    chains = [clip_chain(clip, rows, cat, config=config) for clip, rows in iter_clips_annotations(ann, clips)]
    return (_concat([c.bank.questions for c in chains], QUESTION_COLUMNS),
            _concat([c.items for c in chains], ITEM_COLUMNS))


def run_core(paths: Paths, clips: list[Clip] | None = None,
             responders: tuple[str, ...] | list[str] = DEFAULT_RESPONDERS, *,
             annotations: Annotations | None = None, catalogue: Catalogue | None = None,
             config: BankConfig | None = None, n_boot: int = 1000, seed: int = 0) -> CoreResult:
    """Run the offline pipeline for ``clips`` (default: the manifest's clips) and return every table.

    ``annotations`` / ``catalogue`` may be passed in to reuse ones already loaded (otherwise they are
    read from ``paths.annotations`` once). ``config`` is the question-bank configuration (the graph's
    default when None); ``n_boot`` / ``seed`` go to the bootstrap of the scored tables.
    """
    unknown = [r for r in responders if r not in OFFLINE_RESPONDERS]
    if unknown:
        raise ValueError(f"unknown offline responders {unknown}; known: {', '.join(OFFLINE_RESPONDERS)}")
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    clips = list(read_manifest(paths.manifest)) if clips is None else list(clips)
    ann = annotations if annotations is not None else load_annotations(paths.annotations)
    t1 = time.perf_counter()
    seconds["annotations"] = t1 - t0
    cat = catalogue if catalogue is not None else build_catalogue(ann)
    seconds["catalogue"] = time.perf_counter() - t1

    stage = Counter()
    questions, items, responses, verdicts = [], [], [], []
    drops: Counter = Counter()
    t = time.perf_counter()
    for clip, rows in iter_clips_annotations(ann, clips):
        # (the questions' time includes the clip's share of the interval join, since ``t``)
        chain = clip_chain(clip, rows, cat, config=config, responders=responders, seconds=stage, started=t)
        drops.update(chain.bank.drops)
        questions.append(chain.bank.questions)
        items.append(chain.items)
        responses.append(chain.responses)
        verdicts.append(chain.verdicts)
        t = time.perf_counter()
    seconds.update(stage)

    t = time.perf_counter()
    q = _concat(questions, QUESTION_COLUMNS)
    it = _concat(items, ITEM_COLUMNS)
    resp = _concat(responses, RESPONSE_COLUMNS)
    verd = _concat(verdicts, VERDICT_COLUMNS)
    if len(verd):
        verd["correct"] = verd["correct"].astype("boolean")
        verd["n_marked_true"] = pd.to_numeric(verd["n_marked_true"], errors="coerce").astype("Int64")
    result = CoreResult(
        questions=q, items=it, responses=resp, verdicts=verd,
        scores=scores(verd, n_boot=n_boot, seed=seed),
        paired=paired_comparisons(verd, n_boot=n_boot, seed=seed),
        over_marking=over_marking(verd),
        shortcut_audit=shortcut_audit(shortcut_rates(q), verd),
        clips=clips, drops=drops, seconds=seconds,
    )
    seconds["tables"] = time.perf_counter() - t
    seconds["total"] = time.perf_counter() - t0
    return result
