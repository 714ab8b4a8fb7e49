"""Inspect AI eval logs both ways, through Inspect's public log API: :func:`replies_from_log` reads a log of the
export's task as a replies file, and :func:`write_run_logs` writes a run's verdicts as one eval log per responder ×
model (``inspect view`` is then the per-item viewer)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
from inspect_ai.log import (EvalConfig, EvalDataset, EvalLog, EvalPlan, EvalResults, EvalSample, EvalSpec,
                            EvalStats, read_eval_log, write_eval_log)
from inspect_ai.model import ChatMessageUser, ModelOutput
from inspect_ai.scorer import CORRECT, INCORRECT, Score

from ..records import records
from .replies import Replies, check_replies

SCORER = "epic_levels_rules"


def replies_from_log(path: Path, items: pd.DataFrame) -> Replies:
    """The samples of an Inspect log of the export's task as checked replies (RepliesError for bad samples)."""
    path = Path(path)
    log = read_eval_log(str(path))
    numbered = []
    for number, sample in enumerate(log.samples or [], 1):
        meta = sample.metadata or {}
        reply = sample.output.completion if sample.output is not None and not sample.error else None
        numbered.append((number, {"item_id": meta.get("item_id"), "condition": meta.get("condition"),
                                  "reply": reply}, ""))
    return check_replies(numbered, items, str(path), hashlib.sha256(path.read_bytes()).hexdigest())


def _score(row) -> Score | None:
    if row.scored_by in ("skipped", "error", "undecided") or pd.isna(row.correct):
        return None
    return Score(value=CORRECT if bool(row.correct) else INCORRECT, answer=str(row.parsed),
                 explanation=str(row.note or ""), metadata={"scored_by": row.scored_by})


def run_log(verdicts: pd.DataFrame, items: pd.DataFrame, responder: str, model: str, *, created: str) -> EvalLog:
    """One responder × model's verdicts as an Inspect eval log (one sample per item × condition)."""
    from .export import answer_reply

    by_item = {i.item_id: i for i in records(items)}
    mine = verdicts[(verdicts["responder"] == responder) & (verdicts["model"] == model)]
    mine = mine.sort_values(["item_id", "condition"], kind="stable")
    samples, scored, correct = [], 0, 0
    name = f"{responder}/{model}"
    for row in records(mine):
        item = by_item[row.item_id]
        score = _score(row)
        scored += score is not None
        correct += score is not None and score.value == CORRECT
        samples.append(EvalSample(
            id=f"{row.item_id}|{row.condition}", epoch=1, input=[ChatMessageUser(content=item.prompt)],
            target=answer_reply(item), output=ModelOutput.from_content(name, str(row.reply or "")),
            messages=[ChatMessageUser(content=item.prompt)],
            scores={SCORER: score} if score is not None else {},
            metadata={"item_id": row.item_id, "condition": row.condition, "level": row.level,
                      "subtype": row.subtype, "distractor_strategy": row.distractor_strategy,
                      "format": row.format, "dataset": row.dataset, "clip_id": row.clip_key,
                      "scored_by": row.scored_by, "expected": str(row.expected), "chance": float(row.chance)}))
    spec = EvalSpec(created=created, task="epic_levels", task_id=f"epic_levels-{responder}-{model}",
                    run_id=f"epic-levels-{responder}-{model}", eval_id=f"epic-levels-{responder}-{model}",
                    dataset=EvalDataset(name="epic-levels", samples=len(samples),
                                        sample_ids=[s.id for s in samples]),
                    model=name, config=EvalConfig(),
                    metadata={"responder": responder, "model": model, "written_by": "epic-levels"})
    results = EvalResults(total_samples=len(samples), completed_samples=len(samples),
                          metadata={"scored": scored, "correct": correct,
                                    "accuracy": correct / scored if scored else None})
    return EvalLog(status="success", eval=spec, plan=EvalPlan(name="epic-levels"), results=results,
                   stats=EvalStats(started_at=created, completed_at=created), samples=samples)


def write_run_logs(verdicts: pd.DataFrame, items: pd.DataFrame, out: Path, *,
                   created: str = "2000-01-01T00:00:00+00:00") -> list[Path]:
    """One ``.eval`` log per responder × model of ``verdicts`` under ``out``; the paths written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    pairs = verdicts[["responder", "model"]].drop_duplicates().sort_values(["responder", "model"])
    for responder, model in pairs.itertuples(index=False):
        log = run_log(verdicts, items, responder, model, created=created)
        safe = f"{responder}_{model}".replace("/", "_")
        path = out / f"epic-levels_{safe}.eval"
        write_eval_log(log, str(path))
        written.append(path)
    return written
