"""Reading HD-EPIC's VQA benchmark files: shapes, validation, and the problems that make a question
unconvertible (``FILE:QID:FIELD: message``). See :mod:`.hd_epic_vqa` for the whole import."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from ..annotations.language import LETTERS
from ..errors import AnnotationError, Problem

DATASET = "hd_epic_vqa"
SAMPLE_FILE = "vqa_benchmark_sample.json"

class VqaFileError(AnnotationError):
    """A VQA benchmark file is unusable; carries every problem as ``FILE:QID:FIELD: message``."""


# --- reading ----------------------------------------------------------------------------------------------


def render_choice(choice) -> str:
    """A choice as text: a string stripped, a list (an ordering) joined with ``", "``."""
    if isinstance(choice, list):
        return ", ".join(str(c).strip() for c in choice)
    return str(choice).strip()


def _record_problems(file: str, qid: str, rec) -> list[Problem]:
    if not isinstance(rec, dict):
        return [Problem(file, qid, "-", f"question must be an object, got {type(rec).__name__}")]
    out: list[Problem] = []
    q = rec.get("question")
    if not isinstance(q, str) or not q.strip():
        out.append(Problem(file, qid, "question", "missing or empty question text"))
    inputs = rec.get("inputs")
    if not isinstance(inputs, dict) or not inputs:
        out.append(Problem(file, qid, "inputs", "missing or empty inputs object"))
    else:
        for name, value in inputs.items():
            if not isinstance(value, dict) or not isinstance(value.get("id"), str) or not value["id"].strip():
                out.append(Problem(file, qid, f"inputs/{name}", "input must be an object with a non-empty string id"))
    choices = rec.get("choices")
    if not isinstance(choices, list) or not 2 <= len(choices) <= len(LETTERS):
        out.append(Problem(file, qid, "choices", f"must be a list of 2..{len(LETTERS)} choices"))
        choices = None
    else:
        for i, c in enumerate(choices):
            ok = (isinstance(c, str) and c.strip()) or (
                isinstance(c, list) and c and all(isinstance(x, str) and x.strip() for x in c))
            if not ok:
                out.append(Problem(file, qid, f"choices/{i}", "choice must be a non-empty string or list of strings"))
        rendered = [render_choice(c).lower() for c in choices]
        dup = sorted(c for c, n in Counter(rendered).items() if n > 1)
        if dup and not any(p.column.startswith("choices/") for p in out):
            out.append(Problem(file, qid, "choices", f"duplicate choice(s) {dup}: the key would be ambiguous"))
    idx = rec.get("correct_idx")
    if not isinstance(idx, int) or isinstance(idx, bool):
        out.append(Problem(file, qid, "correct_idx", f"must be an integer, got {idx!r}"))
    elif choices is not None and not 0 <= idx < len(choices):
        out.append(Problem(file, qid, "correct_idx", f"{idx} is out of range for {len(choices)} choices"))
    return out


def _normalise(file: str, prototype: str, qid: str, rec: dict, from_sample: bool) -> dict:
    return {
        "source_file": file, "prototype": prototype, "qid": qid, "question": rec["question"].strip(),
        "choices": [render_choice(c) for c in rec["choices"]], "choices_raw": rec["choices"],
        "correct_idx": int(rec["correct_idx"]), "inputs": rec["inputs"],
        "metadata": rec.get("metadata"), "from_sample": from_sample,
    }


def _is_sample_shape(data: dict) -> bool:
    return bool(data) and all(isinstance(v, dict) and "sample" in v for v in data.values())


def read_vqa_file(path: Path | str) -> list[dict]:
    """Every question of one VQA benchmark file, validated; raises :class:`VqaFileError` listing all problems.

    Returns dicts with ``source_file`` (file name), ``prototype`` (file stem, or the sample's prototype key),
    ``qid``, ``question``, ``choices`` (rendered text), ``choices_raw``, ``correct_idx``, ``inputs``,
    ``metadata`` and ``from_sample``. The sample shape ``{prototype: {n_questions_in_file, sample: {qid: …}}}``
    is recognised (``from_sample`` = True); a file mixing both shapes is an error.
    """
    path = Path(path)
    name = path.name
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VqaFileError([Problem(name, "-", "-", f"cannot read JSON: {exc}")]) from None
    if not isinstance(data, dict) or not data:
        raise VqaFileError([Problem(name, "-", "-", "top level must be a non-empty object {question_id: question}")])
    problems: list[Problem] = []
    out: list[dict] = []
    if _is_sample_shape(data):
        for prototype, block in data.items():
            sample = block.get("sample")
            n = block.get("n_questions_in_file")
            if not isinstance(n, int) or isinstance(n, bool) or n < 0:
                problems.append(Problem(name, prototype, "n_questions_in_file", f"must be a non-negative integer, got {n!r}"))
            if not isinstance(sample, dict):
                problems.append(Problem(name, prototype, "sample", "must be an object {question_id: question}"))
                continue
            for qid, rec in sample.items():
                found = _record_problems(name, f"{prototype}/{qid}", rec)
                problems += found
                if not found:
                    out.append(_normalise(name, prototype, qid, rec, True))
    else:
        for qid, rec in data.items():
            if isinstance(rec, dict) and "sample" in rec:
                problems.append(Problem(name, qid, "sample", "sample-shaped entry in a per-question file (mixed shapes)"))
                continue
            found = _record_problems(name, qid, rec)
            problems += found
            if not found:
                out.append(_normalise(name, path.stem, qid, rec, False))
    if problems:
        raise VqaFileError(problems)
    return out


# --- step 1: can the question stand without its options? ------------------------------------------------
