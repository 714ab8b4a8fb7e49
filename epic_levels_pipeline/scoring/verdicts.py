"""Verdicts: rules first, a bounded judge only when rules cannot decide.

Each response is parsed with its format's parser and compared with the item's expected answer; ``scored_by``
records how: ``rule``, ``judge`` (an open reply the rules could not decide; the judge sees the question, the reply
and the candidates in a seeded order), ``unparsed`` (wrong, never guessed), ``undecided`` and ``judge_failed``
(left out of accuracy, never counted wrong), ``skipped`` / ``error`` (no reply; counted, not scored). A
:class:`JudgePanel` asks every judge and keeps one named judge's or the majority's verdict, every vote in
``judge_votes``. The table of outcomes: docs/design/model-calls.md."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from ..records import records
from ..formats.parsing import answer_text
from ..formats.registry import judge_question, rule_verdict
from ..annotations.language import LETTERS
from ..seeding import stable_seed

VERDICT_COLUMNS = [
    "item_id", "question_id", "clip_key", "dataset", "level", "subtype", "distractor_strategy", "format", "base_format",
    "condition", "responder", "model", "reply", "parsed", "expected", "correct", "scored_by", "note",
    "n_marked_true", "judge_raw", "chance", "provider", "endpoint", "judge_provider", "judge_model", "judge_endpoint",
    "self_judged", "judge_votes", "served_model", "model_digest", "audio_ignored", "video_ignored",
]
JUDGE_IDENTITY_COLUMNS = ["judge_provider", "judge_model", "judge_endpoint"]


def judge_identity(judge) -> dict:
    """``judge_provider``/``judge_model``/``judge_endpoint`` of a judge function (its ``identity``
    attribute, as :func:`model_judge` sets it); empty strings for a judge that does not say."""
    identity = getattr(judge, "identity", None)
    if identity is None:
        return dict.fromkeys(JUDGE_IDENTITY_COLUMNS, "")
    return {"judge_provider": identity.provider, "judge_model": getattr(judge, "name", None) or identity.model,
            "judge_endpoint": identity.endpoint}


def self_judged(frame: pd.DataFrame, identity=None) -> pd.Series:
    """Rows the judge decided about replies of its own model (the same served model at the same endpoint, whatever
    either's configured NAME; ``identity``: the judge's, else the row's judge columns): allowed only when asked for
    (``--judge self`` / ``--allow-self-judge``), and marked."""
    if not len(frame):
        return pd.Series([], dtype=bool)
    judged = frame["scored_by"] == "judge"
    if identity is None:
        return (judged & (frame["judge_provider"] == frame["provider"]) & (frame["judge_model"] == frame["model"])
                & (frame["judge_endpoint"] == frame["endpoint"])).astype(bool)
    served = frame["served_model"] if "served_model" in frame else frame["model"]
    return (judged & (frame["provider"] == identity.provider) & (served == identity.model)
            & (frame["endpoint"] == identity.endpoint)).astype(bool)


@dataclass
class JudgeRequest:
    """What a judge sees: the question (no options, no clip, no key), the reply, the candidates in order."""

    key: str  # what is judged (item, responder, model, condition, reply): a label for audits; calls are
    # cached by their content (model, prompt, settings), so identical judgements share one call
    question: str
    reply: str
    candidates: list[str]
    order: list[int]  # order[i] = index in the item's options of the i-th candidate shown


def judge_order(item_id: str, responder: str, condition: str, n: int, seed: int = 0) -> list[int]:
    order = list(range(n))
    random.Random(stable_seed("judge", seed, item_id, responder, condition)).shuffle(order)
    return order


def judge_prompt(question: str, reply: str, candidates: list[str]) -> str:
    lines = "\n".join(f"{LETTERS[i]}. {c}" for i, c in enumerate(candidates))
    return ("You check what a short answer means. You see a question, someone's answer, and candidate answers.\n"
            "Decide which single candidate the answer means. If it means none of them, more than one, or is "
            "not an answer, choose none.\n\n"
            f"Question: {question}\nAnswer given: {reply}\n\nCandidates:\n{lines}\n\n"
            'Reply as JSON: {"choice": "<letter or none>"}')


def _base(response, item) -> dict:
    return {c: getattr(response, c) for c in ("item_id", "question_id", "clip_key", "dataset", "level", "subtype",
                                               "distractor_strategy", "format", "base_format", "condition",
                                               "responder", "model", "reply")} | {
        "provider": getattr(response, "provider", ""), "endpoint": getattr(response, "endpoint", ""),
        "served_model": getattr(response, "served_model", None) or response.model,
        "model_digest": getattr(response, "model_digest", None) or "",
        "audio_ignored": _flag(getattr(response, "audio_ignored", None)),
        "video_ignored": _flag(getattr(response, "video_ignored", None)),
        "expected": item.expected, "chance": float(item.chance), **dict.fromkeys(JUDGE_IDENTITY_COLUMNS, "")}


def _flag(value) -> bool | None:
    """A nullable boolean as read from a frame (NaN and None: not told)."""
    return None if value is None or value != value else bool(value)


MAJORITY = "majority"


@dataclass
class JudgePanel:
    """Judges asked about the same undecided replies, by NAME (each a :func:`model_judge`-like function), and
    whose verdict counts: a NAME of ``judges``, or ``"majority"`` (an answer given by more than half of them)."""

    judges: dict[str, Callable]
    verdict_by: str

    def __post_init__(self):
        if not self.judges:
            raise ValueError("a judge panel needs at least one judge")
        if self.verdict_by != MAJORITY and self.verdict_by not in self.judges:
            raise ValueError(f"verdict_by {self.verdict_by!r} is neither 'majority' nor one of {list(self.judges)}")


def as_panel(judge) -> JudgePanel:
    """A judge function as a panel of one (named by its ``name`` attribute, else its model), or the panel itself."""
    if isinstance(judge, JudgePanel):
        return judge
    name = getattr(judge, "name", None) or judge_identity(judge)["judge_model"] or "judge"
    return JudgePanel({name: judge}, name)


def failed_call(choice, raw, n: int) -> bool:
    """A judge call that gave no usable answer: an error, or a choice outside the shown candidates."""
    if choice is None:
        return str(raw).startswith("error")
    return not (isinstance(choice, (int, np.integer)) and 0 <= int(choice) < n)


def _decide(row: dict, request: "JudgeRequest", item, answers: dict[str, tuple], panel: JudgePanel) -> None:
    """Fill a verdict row from every judge's ``(choice, raw)``: its votes, then the counting judge's (or the
    majority's) verdict, ``judge_failed`` when that answer is missing, ``undecided`` when a majority splits."""
    key_index = list(item.options).index(item.expected)
    votes, chosen = [], {}
    for name, (choice, raw) in answers.items():
        failed = failed_call(choice, raw, len(request.candidates))
        option = None if failed or choice is None else request.order[int(choice)]
        chosen[name] = "failed" if failed else option
        votes.append({"judge": name, "outcome": "failed" if failed else ("none" if option is None else "chose"),
                      "choice": None if option is None else int(option), "correct": None if failed else option == key_index,
                      "raw": str(raw)[:500]})
    row["judge_votes"] = json.dumps(votes)
    if panel.verdict_by == MAJORITY:
        row.update(judge_provider="", judge_model=MAJORITY, judge_endpoint="")
        answered = [v for v in chosen.values() if v != "failed"]
        row["judge_raw"] = "; ".join(f"{v['judge']}: {v['outcome']}" for v in votes)
        if not answered:
            row.update(scored_by="judge_failed", note="every judge failed")
            return
        top = max(set(answered), key=lambda v: (answered.count(v), -1 if v is None else -int(v)))
        if answered.count(top) * 2 <= len(chosen):
            row["note"] = "judges split: no answer from more than half of them"
            return  # stays undecided
        option = top
    else:
        choice, raw = answers[panel.verdict_by]
        row["judge_raw"] = raw
        row.update(judge_identity(panel.judges[panel.verdict_by]))  # who decided, whether it answered or failed
        if chosen[panel.verdict_by] == "failed":
            row.update(scored_by="judge_failed", note=f"judge failed: {raw}")
            return
        option = chosen[panel.verdict_by]
    row["parsed"] = item.options[option] if option is not None else "(none of the candidates)"
    row["correct"] = option == key_index
    row["scored_by"] = "judge"


def verdicts(responses: pd.DataFrame, items: pd.DataFrame, judge=None, judge_seed: int = 0) -> pd.DataFrame:
    """One verdict per response. ``judge(requests: list[JudgeRequest]) -> list[(choice_index|None, raw)]``, or a
    :class:`JudgePanel` of such functions."""
    by_item = {i.item_id: i for i in records(items)}
    rows: list[dict] = []
    pending: list[tuple[int, JudgeRequest, object]] = []
    for r in records(responses):
        item = by_item[r.item_id]
        base = _base(r, item)
        if r.status != "ok":
            rows.append({**base, "parsed": "", "correct": None, "scored_by": r.status, "note": r.error,
                         "n_marked_true": None, "judge_raw": "", "judge_votes": ""})
            continue
        parsed, correct, scored_by, note, marked = rule_verdict(item, r.reply)
        rows.append({**base, "parsed": parsed, "correct": correct, "scored_by": scored_by, "note": note,
                     "n_marked_true": marked, "judge_raw": "", "judge_votes": ""})
        if scored_by == "undecided" and judge is not None:
            order = judge_order(r.item_id, r.responder, r.condition, len(item.options), judge_seed)
            candidates = [item.options[i] for i in order]
            answer = answer_text(r.reply).value
            key = f"judge|{r.item_id}|{r.responder}|{r.model}|{r.condition}|{answer}"
            pending.append((len(rows) - 1, JudgeRequest(key, judge_question(item), str(answer), candidates, order), item))
    if pending:
        panel = as_panel(judge)
        asked = {name: list(fn([p[1] for p in pending])) for name, fn in panel.judges.items()}
        for name, results in asked.items():
            if len(results) != len(pending):
                raise ValueError(f"judge {name} returned {len(results)} results for {len(pending)} requests")
        for k, (row_index, request, item) in enumerate(pending):
            _decide(rows[row_index], request, item, {name: results[k] for name, results in asked.items()}, panel)
    frame = pd.DataFrame(rows, columns=VERDICT_COLUMNS)
    counting = judge.judges.get(judge.verdict_by) if isinstance(judge, JudgePanel) else judge
    frame["self_judged"] = self_judged(frame, getattr(counting, "identity", None))
    frame["correct"] = frame["correct"].astype("boolean")
    frame["n_marked_true"] = pd.to_numeric(frame["n_marked_true"], errors="coerce").astype("Int64")
    return frame


def model_judge(caller, cache, *, model: str | None = None, rpm: float = 60, concurrency: int = 4,
                name: str | None = None):
    """A judge function for :func:`verdicts` backed by any provider (structured output, cached like responses).

    Each request's prompt holds only the question, the reply and the shuffled candidates (never the clip
    or which candidate is right); the call is cached under a key of the provider's identity (provider, model,
    endpoint), model and prompt, so a re-run makes no judge call it already made. The function's ``identity``
    attribute is the judge's :class:`~..responses.providers.base.ProviderIdentity`, written into every verdict
    row it decided and into ``judge_audit``; its ``name``, the NAME it is configured by, names it in a panel.
    """
    from ..responses.calls import run_calls_sync
    from ..responses.providers.base import identity_of
    from ..responses.providers.structured import parse_choice

    def judge(requests: list[JudgeRequest]) -> list[tuple[int | None, str]]:
        calls = [caller.judge_request(judge_prompt(r.question, r.reply, r.candidates), len(r.candidates), model=model)
                 for r in requests]
        results, _ = run_calls_sync(calls, caller, cache, rpm=rpm, concurrency=concurrency)
        out: list[tuple[int | None, str]] = []
        for request, result in zip(requests, results):
            if result.status != "ok":
                out.append((None, f"error: {result.error}"))
                continue
            try:
                letter = parse_choice(result.reply, len(request.candidates))
            except ValueError as exc:
                out.append((None, f"error: {exc}"))
                continue
            out.append((None if letter is None else LETTERS.index(letter), result.reply))
        return out

    judge.identity = identity_of(caller)
    judge.name = name  # the judge's NAME in the models file (None: its model)
    return judge


gemini_judge = model_judge  # the former name, when Gemini was the only judge
