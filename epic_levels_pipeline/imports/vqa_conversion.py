"""Converting read VQA questions into base questions and items of dataset ``hd_epic_vqa`` (the format
registry's own templates), and importing whole folders with a report per file."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pandas as pd

from ..formats import items as formats, prompts
from ..formats.item_text import QuestionItems
from ..formats.registry import FORMATS
from ..errors import Problem
from ..seeding import DEFAULT_SEED, stable_seed
from .vqa_reading import SKIP_REASONS, DATASET, VqaFileError, _normalise, _record_problems, read_vqa_file
from .vqa_rewriting import declarative, proposed_answer_prompt, step1
from .vqa_tags import render_tags

SEED = DEFAULT_SEED
DISTRACTOR_STRATEGY = "hd_epic_vqa"

EXTRA_ITEM_COLUMNS = ["source_file", "prototype", "source_qid", "step1_reason_code", "yes_no_style", "input_ids"]
ITEM_COLUMNS = formats.ITEM_COLUMNS + EXTRA_ITEM_COLUMNS
QUESTION_COLUMNS = [
    "question_id", "dataset", "source_file", "prototype", "source_qid", "video_id", "input_ids", "inputs",
    "question", "options", "choices_raw", "answer", "answer_index", "answer_type", "can_stand_alone",
    "stand_alone_reason_code", "stand_alone_reason", "open_question", "rewrites", "base_format",
    "rejected_by_checker", "checker_problems", "checker_markup_only", "yes_no_style", "metadata",
]
SKIP_COLUMNS = [f"n_skipped_{reason}" for reason in SKIP_REASONS]
SKIPPED_COLUMNS = ["file", "qid", "reason", "message"]
REPORT_COLUMNS = ["file", "n_questions", "n_skipped_duplicates", *SKIP_COLUMNS, "n_imported", "n_open", "n_option_judgement",
                  "n_rejected_by_checker", "n_rejected_markup_only", "top_reasons", "note"]


def _input_ids(inputs: dict) -> list[str]:
    return [str(v["id"]) for v in inputs.values()]


def convert(question: dict, *, source: str, want_true: bool | None = None, seed: int = SEED) -> dict:
    """One VQA question → a base question (a dict of :data:`QUESTION_COLUMNS`) with ``items`` (item dicts).

    ``question`` is a record from :func:`read_vqa_file`, or a raw record ``{inputs, question, choices,
    correct_idx}`` with its id under ``qid`` (validated the same way; a bad one raises :class:`VqaFileError`).
    ``source`` names the file (used in ids and messages). ``want_true`` chooses whether the yes/no item states
    the correct choice; None decides by a seeded hash of the id (:func:`import_files` passes a per-file
    balanced value). The wrong choice for a false statement is drawn seeded by the question id.
    """
    if "source_file" not in question:
        qid = str(question.get("qid", "")) or "-"
        problems = _record_problems(source, qid, question)
        if problems:
            raise VqaFileError(problems)
        question = _normalise(source, Path(source).stem, qid, question, False)
    qid = question["qid"]
    options, idx = list(question["choices"]), int(question["correct_idx"])
    n = len(options)
    decision = step1(question["question"], options, question.get("choices_raw"))
    question_id = f"{DATASET}/{qid}"
    rng = random.Random(stable_seed(seed, question_id, "formats"))
    if want_true is None:
        want_true = stable_seed(seed, question_id, "yes_no") % 2 == 0
    truth = [i == idx for i in range(n)]

    def yes_no_prompt(shown: int) -> str:
        statement = declarative(question["question"], options[shown])
        return prompts.yes_no_prompt(statement) if statement else proposed_answer_prompt(question["question"],
                                                                                          options[shown])

    inputs = question["inputs"]
    asked = QuestionItems(
        question_id, {}, question["question"], options, [f"choice:{i}" for i in range(n)], truth, idx, rng, want_true,
        yes_no_prompt, decision.can_stand_alone, decision.open_question, decision.answer_type,
        str(int(options[idx])) if decision.answer_type == "number" else options[idx],
        render_tags(question["question"], inputs), [render_tags(o, inputs) for o in options])
    shown = asked.yes_no_index  # drawn first, as the yes/no item's wording is part of every item's columns
    yes_no_style = "statement" if declarative(question["question"], options[shown]) else "proposed_answer"
    ids = _input_ids(question["inputs"])
    base_format = "open" if decision.can_stand_alone else "option_judgement"
    asked.base.update({
        "question_id": question_id, "clip_key": None, "dataset": DATASET, "video_id": ids[0],
        "subtype": question["prototype"], "level": None, "distractor_strategy": DISTRACTOR_STRATEGY,
        "answer_type": decision.answer_type, "options": options, "option_values": asked.values,
        "option_truth": truth, "candidate_synonyms": json.dumps([[o] for o in options]), "statements": None,
        "statement_value": None, "statement_true": None, "source_file": question["source_file"],
        "prototype": question["prototype"], "source_qid": qid, "step1_reason_code": decision.reason_code,
        "yes_no_style": yes_no_style, "input_ids": ids,
        "audio_annotated": False,  # an imported question comes with no annotations: its clip's audio is not evidence
    })
    items = [row for entry in list(FORMATS.values()) if "imported" in entry.asked_of for row in entry.items(entry, asked)]
    return {
        "question_id": question_id, "dataset": DATASET, "source_file": question["source_file"],
        "prototype": question["prototype"], "source_qid": qid, "video_id": ids[0], "input_ids": ids,
        "inputs": json.dumps(question["inputs"], sort_keys=True), "question": question["question"],
        "options": options, "choices_raw": json.dumps(question.get("choices_raw", options)),
        "answer": options[idx], "answer_index": idx, "answer_type": decision.answer_type,
        "can_stand_alone": decision.can_stand_alone, "stand_alone_reason_code": decision.reason_code,
        "stand_alone_reason": decision.reason, "open_question": decision.open_question,
        "rewrites": list(decision.rewrites), "base_format": base_format,
        "rejected_by_checker": decision.rejected_by_checker, "checker_problems": list(decision.checker_problems),
        "checker_markup_only": decision.checker_markup_only, "yes_no_style": yes_no_style,
        "metadata": None if question.get("metadata") is None else json.dumps(question["metadata"]),
        "items": items,
    }


def _expand(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        out += sorted(p.glob("*.json")) if p.is_dir() else [p]
    return out


def import_files(paths: list[Path], *, seed: int = SEED, strict: bool = False,
                 skipped: list[dict] | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Read, validate and convert VQA files (folders are expanded to their ``*.json``).

    Returns ``(questions, items, report)``; the report has one row per file (:data:`REPORT_COLUMNS`, top
    reasons as ``code: count`` for the three commonest step-1 reasons). All files are validated before
    anything is converted; every problem of every file is raised together as :class:`VqaFileError`.
    Unless ``strict``, a question that cannot be converted honestly (duplicate choices, no answer among the
    choices, malformed times: :data:`.vqa_reading.SKIP_REASONS`) is skipped, counted per file and reason in the
    report (``n_skipped_<reason>``) and appended to ``skipped`` when given (``SKIPPED_COLUMNS``); with ``strict``
    it refuses the import like any other problem. Sample-shaped files are read last: a question also read from a per-prototype file is skipped (it must be
    identical there, else an error); a duplicate id between two per-prototype files is an error.
    """
    files = _expand(paths)
    problems: list[Problem] = []
    read: dict[Path, list[dict]] = {}
    unconvertible: list[dict] = []
    for f in files:
        try:
            read[f] = read_vqa_file(f, None if strict else unconvertible)
        except VqaFileError as exc:
            problems += exc.problems
    ordered = sorted(read, key=lambda f: (any(r["from_sample"] for r in read[f]), str(f)))
    seen: dict[str, tuple[str, dict]] = {}
    keep: dict[Path, list[dict]] = {}
    copies: Counter = Counter()
    for f in ordered:
        keep[f] = []
        for r in read[f]:
            if r["qid"] in seen:
                other_file, other = seen[r["qid"]]
                same = all(other[k] == r[k] for k in ("question", "choices", "correct_idx", "inputs"))
                if r["from_sample"] and same:
                    copies[f] += 1
                    continue
                why = "differs from" if r["from_sample"] else "duplicate question id, also in"
                problems.append(Problem(f.name, r["qid"], "-", f"{why} {other_file}"))
                continue
            seen[r["qid"]] = (f.name, r)
            keep[f].append(r)
    if problems:
        raise VqaFileError(problems)
    if skipped is not None:
        skipped += unconvertible
    questions: list[dict] = []
    items: list[dict] = []
    report: list[dict] = []
    for f in sorted(keep, key=str):
        records = keep[f]
        truths = formats.yes_no_truths([f"{DATASET}/{r['qid']}" for r in records], seed, f.name) if records else {}
        converted = [convert(r, source=f.name, want_true=truths[f"{DATASET}/{r['qid']}"], seed=seed) for r in records]
        for c in converted:
            items += c.pop("items")
            questions.append(c)
        reasons = Counter(c["stand_alone_reason_code"] for c in converted)
        note = ""
        if any(r["from_sample"] for r in read[f]):
            note = (f"sample file: {copies[f]} of {len(read[f])} questions skipped as copies of per-prototype files"
                    if copies[f] else "sample file imported (no per-prototype copies among the inputs)")
        report.append({
            "file": f.name, "n_questions": len(read[f]) + sum(u["file"] == f.name for u in unconvertible),
            "n_skipped_duplicates": copies[f],
            **{f"n_skipped_{reason}": sum(u["file"] == f.name and u["reason"] == reason for u in unconvertible)
               for reason in SKIP_REASONS},
            "n_imported": len(converted),
            "n_open": sum(c["can_stand_alone"] for c in converted),
            "n_option_judgement": sum(not c["can_stand_alone"] for c in converted),
            "n_rejected_by_checker": sum(c["rejected_by_checker"] for c in converted),
            "n_rejected_markup_only": sum(c["checker_markup_only"] for c in converted),
            "top_reasons": "; ".join(f"{k}: {v}" for k, v in reasons.most_common(3)), "note": note,
        })
    return (pd.DataFrame(questions, columns=QUESTION_COLUMNS), pd.DataFrame(items, columns=ITEM_COLUMNS),
            pd.DataFrame(report, columns=REPORT_COLUMNS))


