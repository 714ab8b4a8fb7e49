"""Reading HD-EPIC's VQA benchmark files: shapes, validation, and the problems that make a question
unconvertible (``FILE:QID:FIELD: message``). The whole import: docs/design/hd-epic-vqa-import.md."""

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


# Problems that make one upstream question unconvertible without making its file unusable: with ``strict`` off
# the question is skipped and counted under this reason (``SKIP_REASONS``); anything else refuses the file.
SKIP_REASONS = {
    "duplicate_choices": "two choices are the same after normalisation: the key would be ambiguous",
    "answer_not_among_choices": "correct_idx does not point at one of the choices",
    "malformed_times": "an input's start_time / end_time / time is not HH:MM:SS[.fff], or ends before it starts",
}
_HMS = re.compile(r"^(\d{1,2}):([0-5]\d):([0-5]\d(?:\.\d+)?)$")


def seconds(text) -> float | None:
    """``HH:MM:SS[.fff]`` as seconds (None when it is not one)."""
    m = _HMS.match(str(text).strip()) if isinstance(text, str) else None
    return int(m[1]) * 3600 + int(m[2]) * 60 + float(m[3]) if m else None


def _time_problems(file: str, qid: str, name: str, value: dict) -> list[Problem]:
    out, parsed = [], {}
    for key in ("start_time", "end_time", "time"):
        if key in value:
            parsed[key] = seconds(value[key])
            if parsed[key] is None:
                out.append(Problem(file, qid, f"inputs/{name}/{key}", f"malformed time {value[key]!r} (HH:MM:SS[.fff])"))
    if parsed.get("start_time") is not None and parsed.get("end_time") is not None \
            and parsed["end_time"] < parsed["start_time"]:
        out.append(Problem(file, qid, f"inputs/{name}/end_time", f"malformed times: ends {value['end_time']} "
                                                                   f"before it starts {value['start_time']}"))
    return out


def skip_reason(problem: Problem) -> str | None:
    """The ``SKIP_REASONS`` code of a question's problem, or None when it makes the file unusable."""
    if problem.column == "choices" and problem.message.startswith("duplicate choice"):
        return "duplicate_choices"
    if problem.column == "correct_idx" and "out of range" in problem.message:
        return "answer_not_among_choices"
    if problem.column.startswith("inputs/") and "time" in problem.message and problem.column.count("/") == 2:
        return "malformed_times"
    return None


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
                continue
            out += _time_problems(file, qid, name, value)
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


def _skippable(found: list[Problem], file: str, qid: str, skipped: list[dict] | None) -> tuple[list[Problem], bool]:
    """(the problems that refuse the file, whether the question is converted): a question whose problems all have
    a skip reason is recorded in ``skipped`` (when lenient) and not converted, refusing nothing."""
    if skipped is None or not found:
        return found, not found
    reasons = [skip_reason(p) for p in found]
    if any(r is None for r in reasons):
        return found, False
    skipped.append({"file": file, "qid": qid, "reason": reasons[0], "message": "; ".join(p.message for p in found)})
    return [], False


def _is_sample_shape(data: dict) -> bool:
    return bool(data) and all(isinstance(v, dict) and "sample" in v for v in data.values())


def read_vqa_file(path: Path | str, skipped: list[dict] | None = None) -> list[dict]:
    """Every question of one VQA benchmark file, validated; raises :class:`VqaFileError` listing all problems.

    Returns dicts with ``source_file`` (file name), ``prototype`` (file stem, or the sample's prototype key),
    ``qid``, ``question``, ``choices`` (rendered text), ``choices_raw``, ``correct_idx``, ``inputs``,
    ``metadata`` and ``from_sample``. The sample shape ``{prototype: {n_questions_in_file, sample: {qid: …}}}``
    is recognised (``from_sample`` = True); a file mixing both shapes is an error.

    With a ``skipped`` list (lenient), a question whose every problem has a :data:`SKIP_REASONS` code is left out
    and appended to it as ``{file, qid, reason, message}``; without one (strict) every problem refuses the file.
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
                found, good = _skippable(_record_problems(name, f"{prototype}/{qid}", rec), name, qid, skipped)
                problems += found
                if good:
                    out.append(_normalise(name, prototype, qid, rec, True))
    else:
        for qid, rec in data.items():
            if isinstance(rec, dict) and "sample" in rec:
                problems.append(Problem(name, qid, "sample", "sample-shaped entry in a per-question file (mixed shapes)"))
                continue
            found, good = _skippable(_record_problems(name, qid, rec), name, qid, skipped)
            problems += found
            if good:
                out.append(_normalise(name, path.stem, qid, rec, False))
    if problems:
        raise VqaFileError(problems)
    return out


# --- step 1: can the question stand without its options? ------------------------------------------------
