"""Judge audit: ask the judge about open replies the rules already decided, and see whether it agrees.

The judge only ever decides open replies the rules could not (:func:`scoring.verdicts`), so nothing in the
scored tables says how trustworthy it is. Here it is asked about a seeded sample of open replies whose
verdict the RULES gave (``scored_by == "rule"``), where the right reading is known, and asked twice, under
two different candidate orders:

- ``judge_rule_agreement`` — share of audited replies (first order answered) where the judge's option is
  the option the rules parsed. Low agreement means the judge misreads answers the rules read fine.
- ``judge_self_agreement`` — share of replies (both orders answered) where the two orders give the same
  option (both "none" counts as the same). A judge that picks by position rather than meaning disagrees
  with itself, because the second order never puts a candidate where the first one had it (below).
- ``judge_none_rate`` — share of answered judge calls (both orders) that said "none".
- ``judge_errors`` — number of failed judge calls (raw reply starting with ``error``, or a choice outside
  the shown candidates), over both orders.

Decisions and edge cases:

- Eligible rows: ``base_format == "open"`` (formats ``open`` and ``open_with_reason``), ``scored_by ==
  "rule"``, ``parsed`` neither ``"(abstained)"`` (an abstention names no candidate) nor empty, and the item
  present in ``items`` (rows whose item is missing are skipped).
- The sample is drawn per responder/model (up to ``sample_size`` each), so every responder/model gets its
  own audit of the same size: the replies of smallest seeded hash of their identity (responder, model,
  item, condition, format), so the sample depends on ``seed`` and the rows' content, not on the input's row
  order, and the sample of all clips can be made from each clip's own sample.
- The requests are built as :func:`scoring.verdicts` builds them: the question without its output format,
  the extracted answer text (not the whole reply), and the candidates (the item's options) in the order of
  :func:`scoring.judge_order` — the order scoring would have used (``judge_seed``). The judge is never told
  which candidate is right.
- The second order is a seeded shuffle that differs from the first at EVERY position (drawn again until it
  does; a rotation by one as a last resort), so a purely positional judge has self-agreement 0 and a judge
  that reads meaning has 1. With a single candidate there is no other order: both requests are the same.
- The rules' option: for names, ``parsed`` is the option text; for counts (``answer_type == "number"``)
  ``parsed`` is the number, which may be no option at all — then the rules' reading is "none of the
  candidates", and a judge "none" agrees with it.
- Rule agreement uses the first order only (the one scoring uses); the second order measures consistency.
- A pooled row (responder and model ``*``) is added when more than one responder/model was audited.
- ``judge`` None: no call is made, and the result is ONE row (responder and model ``*``, ``n`` 0, NaN rates)
  whose ``note`` says no judge is configured — a zero-row frame could not carry that message into a stored
  table or a report. No eligible rows with a judge: likewise one ``*`` row with a note, and no call.
- The judge must return one ``(choice | None, raw)`` per request, in order; anything else raises
  ``ValueError`` (a silent misalignment would corrupt every rate).
"""

from __future__ import annotations

import json
import random
from typing import Callable

import numpy as np
import pandas as pd

from ..records import records
from ..formats.parsing import answer_text
from ..seeding import stable_seed
from ..formats.registry import format_of
from .verdicts import JudgeRequest, judge_identity, judge_order

AUDIT_COLUMNS = ["responder", "model", "n", "judge_rule_agreement", "judge_self_agreement", "judge_none_rate",
                 "judge_errors", "note", "judge_provider", "judge_model", "judge_endpoint", "self_judged"]
NO_JUDGE_NOTE = "no judge is configured: the judge audit was not run"
NO_ROWS_NOTE = "no open replies decided by the rules to audit"

Judge = Callable[[list[JudgeRequest]], list[tuple[int | None, str]]]


def _note_frame(note: str, judge=None) -> pd.DataFrame:
    return pd.DataFrame([{"responder": "*", "model": "*", "n": 0, "judge_rule_agreement": np.nan,
                          "judge_self_agreement": np.nan, "judge_none_rate": np.nan, "judge_errors": 0,
                          "note": note, **judge_identity(judge), "self_judged": False}], columns=AUDIT_COLUMNS)


def second_order(first: list[int], item_id: str, responder: str, condition: str, seed: int = 0,
                 attempts: int = 200) -> list[int]:
    """A seeded shuffle of ``first``'s candidates that puts no candidate at the position it had in ``first``.

    Rejection-samples seeded shuffles (about 37 % of shuffles qualify, so a few draws suffice); after
    ``attempts`` draws, ``first`` rotated by one. One candidate (or none): ``first`` itself.
    """
    n = len(first)
    if n < 2:
        return list(first)
    for attempt in range(attempts):
        order = list(first)
        random.Random(stable_seed("judge_audit", seed, attempt, item_id, responder, condition)).shuffle(order)
        if all(a != b for a, b in zip(order, first)):
            return order
    return first[1:] + first[:1]


def _rule_option(verdict, item) -> int | None:
    """Index in the item's options of what the rules read, or None (a count that is no option)."""
    options = [str(o) for o in item.options]
    parsed = str(verdict.parsed)
    if parsed in options:
        return options.index(parsed)
    lowered = [o.strip().lower() for o in options]
    return lowered.index(parsed.strip().lower()) if parsed.strip().lower() in lowered else None


def eligible(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Open replies the rules decided with a reading (not an abstention)."""
    if not len(verdicts) or not {"base_format", "scored_by", "parsed"} <= set(verdicts.columns):
        return verdicts.iloc[0:0]
    parsed = verdicts["parsed"].fillna("").astype(str)
    keep = ((verdicts["base_format"] == "open") & (verdicts["scored_by"] == "rule")
            & (parsed != "(abstained)") & (parsed != ""))
    return verdicts[keep.fillna(False).astype(bool)]


def sample_key(responder, model, item_id, condition, fmt, seed: int) -> int:
    """A reply's place in the seeded sample order: the sample takes the smallest keys."""
    return stable_seed("judge_audit_sample", seed, responder, model, item_id, condition, fmt)


def sample_rows(verdicts: pd.DataFrame, sample_size: int, seed: int) -> pd.DataFrame:
    """Up to ``sample_size`` eligible rows per responder/model, seeded, independent of input row order: the
    rows of smallest :func:`sample_key` (a seeded hash of the reply's identity), with the key as column
    ``sample_key``. The smallest keys of a union are the smallest among each part's smallest, so the sample
    of all clips is made from each clip's own sample (``scoring.metrics.partials.judge_partials``)."""
    rows = eligible(verdicts)
    if not len(rows):
        return rows.assign(sample_key=pd.Series(dtype="int64"))
    keys = [sample_key(r, m, i, c, f, seed) for r, m, i, c, f in
            zip(rows["responder"], rows["model"], rows["item_id"], rows["condition"], rows["format"])]
    rows = rows.assign(sample_key=np.asarray(keys, dtype=np.int64))
    rows = rows.sort_values(["responder", "model", "sample_key", "item_id", "condition", "format"], kind="stable")
    return rows.groupby(["responder", "model"], sort=True).head(sample_size).reset_index(drop=True)


def _failed(choice, raw: str, n: int) -> bool:
    if choice is None:
        return str(raw).startswith("error")
    return not (isinstance(choice, (int, np.integer)) and 0 <= int(choice) < n)


def _rates(g: pd.DataFrame) -> dict:
    first_ok = g[~g["error_1"]]
    both_ok = g[~g["error_1"] & ~g["error_2"]]
    answered = pd.concat([g.loc[~g["error_1"], "judge_1"], g.loc[~g["error_2"], "judge_2"]])
    agree = (first_ok["judge_1"] == first_ok["rule"]).mean() if len(first_ok) else np.nan
    same = (both_ok["judge_1"] == both_ok["judge_2"]).mean() if len(both_ok) else np.nan
    none_rate = (answered == -1).mean() if len(answered) else np.nan
    errors = int(g["error_1"].sum() + g["error_2"].sum())
    note = "" if len(first_ok) else "every judge call failed"
    return {"n": len(g), "judge_rule_agreement": float(agree), "judge_self_agreement": float(same),
            "judge_none_rate": float(none_rate), "judge_errors": errors, "note": note}


def audit_details(verdicts: pd.DataFrame, items: pd.DataFrame, judge: Judge, *, sample_size: int = 50,
                  seed: int = 0, judge_seed: int = 0) -> pd.DataFrame:
    """One row per audited reply: the rules' option, the judge's option under each order (-1 = none), errors,
    and both orders (as JSON lists of option indices). Options are indices into the item's options."""
    columns = ["responder", "model", "item_id", "condition", "format", "answer", "rule", "judge_1", "judge_2",
               "error_1", "error_2", "raw_1", "raw_2", "order_1", "order_2"]
    rows = sample_rows(verdicts, sample_size, seed)
    by_item = {i.item_id: i for i in records(items)} if len(items) else {}
    pending: list[tuple[dict, JudgeRequest, JudgeRequest]] = []
    for v in records(rows):
        item = by_item.get(v.item_id)
        if item is None:
            continue
        answer = answer_text(v.reply)
        answer = str(answer.value) if answer.ok else str(v.parsed)
        options = [str(o) for o in item.options]
        first = judge_order(v.item_id, v.responder, v.condition, len(options), judge_seed)
        second = second_order(first, v.item_id, v.responder, v.condition, seed)
        question = format_of(v.base_format).judge_question(item)  # (the audit reads few item columns)
        base_key = f"{v.item_id}|{v.responder}|{v.model}|{v.condition}|{answer}"
        requests = [JudgeRequest(f"judge_audit|{i}|{base_key}", question, answer, [options[j] for j in order], order)
                    for i, order in ((1, first), (2, second))]
        rule = _rule_option(v, item)
        info = {"responder": v.responder, "model": v.model, "item_id": v.item_id, "condition": v.condition,
                "format": v.format, "answer": answer, "rule": -1 if rule is None else rule,
                "order_1": json.dumps(first), "order_2": json.dumps(second)}
        pending.append((info, requests[0], requests[1]))
    if not pending:
        return pd.DataFrame(columns=columns)
    flat = [r for _, a, b in pending for r in (a, b)]
    results = list(judge(flat))
    if len(results) != len(flat):
        raise ValueError(f"the judge returned {len(results)} results for {len(flat)} requests")
    out = []
    for k, (info, *requests) in enumerate(pending):
        row = dict(info)
        for i, request in enumerate(requests, 1):
            choice, raw = results[2 * k + i - 1]
            failed = _failed(choice, raw, len(request.candidates))
            row[f"error_{i}"] = failed
            row[f"raw_{i}"] = str(raw)
            row[f"judge_{i}"] = -1 if failed or choice is None else request.order[int(choice)]
        out.append(row)
    return pd.DataFrame(out, columns=columns)


def judge_audit(verdicts: pd.DataFrame, items: pd.DataFrame, judge: Judge | None, *, sample_size: int = 50,
                seed: int = 0, judge_seed: int = 0) -> pd.DataFrame:
    """Per responder/model: ``n``, ``judge_rule_agreement``, ``judge_self_agreement``, ``judge_none_rate``,
    ``judge_errors``, ``note`` (see the module docstring for every decision).

    ``judge(requests: list[JudgeRequest]) -> list[(choice index in the shown order | None, raw)]`` — e.g.
    :func:`scoring.model_judge`; all requests of the audit go in one call, so its rate limit and cache apply.
    """
    if judge is None:
        return _note_frame(NO_JUDGE_NOTE)
    details = audit_details(verdicts, items, judge, sample_size=sample_size, seed=seed, judge_seed=judge_seed)
    if not len(details):
        return _note_frame(NO_ROWS_NOTE, judge)
    who = judge_identity(judge)
    own = bool(getattr(judge, "self_judging", False))  # asked for explicitly (--judge self / --allow-self-judge)
    rows = [{"responder": r, "model": m, **_rates(g), **who, "self_judged": own and m == who["judge_model"]}
            for (r, m), g in details.groupby(["responder", "model"], sort=True)]
    if len(rows) > 1:
        rows.append({"responder": "*", "model": "*", **_rates(details), **who,
                     "self_judged": any(row["self_judged"] for row in rows)})
    return pd.DataFrame(rows, columns=AUDIT_COLUMNS)
