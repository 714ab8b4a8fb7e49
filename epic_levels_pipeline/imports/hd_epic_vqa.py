"""External multiple-choice import: HD-EPIC's own VQA benchmark as base questions of dataset ``hd_epic_vqa``.

Input files (``vqa-benchmark/*.json``) map a question id to
``{"inputs": {"video 1": {"id": ..., "start_time"?, "end_time"?} | "image N": {"id", "time"}},
"question": str, "choices": [5 strings, or 5 lists of strings], "correct_idx": int, "metadata"?: ...}``.
Each question becomes one base question and four items: ``yes_no``, ``multiple_choice`` (A–E), ``open`` or
``option_judgement`` (4b), and ``open_with_reason``. There is no ``statements`` item (format 3): its true
statements must come from other verified questions about the same window, and these questions carry no
annotations to verify anything with, so :func:`formats.format_problems` would report it missing — on purpose.

Step 1 — *can the question stand without its options?* — is decided from the text alone (there are no
annotations to solve). The rule, checked in this order, first match decides (reason codes in brackets):

1. The answer type is inferred from the choices:
   - a choice refers to other choices or to list positions ("all of the above", "none of these",
     "both A and B", "option C", a bare "none") → 4b ``[choice_cross_reference]``;
   - a choice holds a timestamp or time range (``<TIME …>``, ``12:34``) → type ``time``, 4b ``[time_choices]``;
   - the choices are lists (orderings of the same items) → type ``ordering``, 4b ``[ordering_choices]``;
   - every choice is a whole number → type ``number`` (goes on to the wording checks);
   - every choice is a number with a unit (``113 g``, ``2 tbsp``) or a decimal → type ``quantity``, 4b
     ``[quantity_with_unit]``: an open reply would need the annotation's exact unit and precision, and the
     number parser (:func:`parsing.parse_number`) reads whole counts only;
   - every choice is a clock direction (``3 o'clock``) → type ``direction``, 4b ``[clock_direction]``: no fixed
     output-format sentence exists for it and neighbouring hours are near-misses a free reply cannot settle;
   - the question asks *where* → type ``location``, 4b ``[location]``: places are named with the dataset's
     relative descriptors ("cupboard bottom left from sink") and no fixed output format exists for places;
   - a choice is a long sentence (more than 12 words, or inner ``, ; : ! ?`` or ``. ``) → type ``activity`` /
     ``recipe_step`` / ``description`` (by the question's wording), 4b ``[long_choices]``;
   - a choice starts with a preposition (``At the fridge.``) → type ``location``, 4b ``[location]``;
   - a choice is sentence-like (more than 6 words, or ends with a full stop) → 4b ``[long_choices]``;
   - otherwise (short noun phrases) → type ``activity`` if the question speaks of an activity, ``recipe_step``
     if of a step, else ``entity``.
2. Only types with a fixed open template in :data:`subtypes.OPEN_FORMATS` (``number``, ``entity``,
   ``activity``, ``recipe_step``) can go open. Then the wording:
   - the question treats the inputs as the candidate set ("which of the ingredients in *these images*") →
     4b ``[input_set_selection]``: a free reply could answer by position ("image 3"), which no choice names;
   - a selection with negation ("which of these is *not* used") → 4b ``[negated_selection]``: the answer is
     defined only relative to the set;
   - list-dependent selection ("which of these X", "which of the following X", "which option"): if the
     question also has a uniqueness marker (highest, first, last, most, only, exact, …) it is rewritten with
     a fixed rewrite ("Which of the following objects did I …" → "Which object did I …"; a plural verb right
     after the noun made singular; "which option/one" has no rewrite → 4b); without a marker → 4b
     ``[set_selection]``: several X may satisfy it, and only the set makes it single-answer (e.g. "which of
     these ingredients were added");
   - a name question (not ``number``) without a uniqueness marker → 4b ``[no_uniqueness_marker]``
     (conservative: an open item must have exactly one clear answer, and the text alone cannot promise it);
   - a ``number`` question needs no marker (a count has one value) → open ``[count]``; a name question with
     a marker → open ``[unique_name]``.
3. Step 2: the open prompt is :func:`formats.open_prompt` (fixed output-format sentence per answer type). If
   :func:`formats.open_problems` still finds list-dependent wording or an option's text in it, the question is
   kept as 4b and counted as *rejected by the checker* ``[rejected_by_checker]``. The checker is used as is;
   note that it matches a digit choice inside ``<TIME …>``/``<BBOX …>`` markup ("video 1", coordinates), so
   counting questions about marked-up inputs are rejected — ``checker_markup_only`` records when every
   problem disappears with the markup masked, for the lead to judge.

``yes_no``: the correct or a seeded wrong choice filled into a fixed declarative template per question
pattern (e.g. "How many times did I close X in T?" → "I closed X 3 times in T."). Where no declarative
rewrite exists (objects' locations, recipe names, activities, prep/multi-step times, image nutrition), the
prompt is "Question: … / Proposed answer: <choice>. / Is the proposed answer correct?" (``yes_no_style`` =
``proposed_answer``). True/false is balanced per source file with :func:`formats.yes_no_truths`. The truth of a
wrong choice relies on the benchmark's own claim that only ``correct_idx`` is right (the same claim the
multiple-choice and 4b keys rest on).

Prompts are the format registry's own templates (:mod:`..formats.registry`); options are lettered from
the shared :data:`..annotations.language.LETTERS`, so choices beyond D need nothing of their own.

Edge cases: ``vqa_benchmark_sample.json`` has the shape ``{prototype: {n_questions_in_file, sample: {qid:
…}}}``; :func:`read_vqa_file` reads it, and :func:`import_files` skips its questions that are also read from a
per-prototype file (after checking they are identical — a differing copy is an error), so passing the whole
folder imports each question once; alone, it is imported. A duplicate question id across other files, a
bad shape or a duplicate choice is an error ``FILE:QID:FIELD: message``. Unknown extra fields (``metadata``)
are kept as JSON. HD-EPIC items have no clip: ``clip_key`` and ``level`` are empty (levels are derived from
annotation evidence, which this import does not have); ``video_id`` is the first input's id and
``input_ids`` lists all.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..formats import items as formats
from ..formats.registry import multiple_choice_prompt, option_judgement_prompt
from ..bank.subtypes import OPEN_FORMATS
from ..errors import AnnotationError, Problem
from ..annotations.language import LETTERS, capitalise
from ..seeding import DEFAULT_SEED, stable_seed

DATASET = "hd_epic_vqa"
SEED = DEFAULT_SEED
DISTRACTOR_STRATEGY = "hd_epic_vqa"
SAMPLE_FILE = "vqa_benchmark_sample.json"
OPEN_TYPES = ("number", "entity", "activity", "recipe_step")

EXTRA_ITEM_COLUMNS = ["source_file", "prototype", "source_qid", "step1_reason_code", "yes_no_style", "input_ids"]
ITEM_COLUMNS = formats.ITEM_COLUMNS + EXTRA_ITEM_COLUMNS
QUESTION_COLUMNS = [
    "question_id", "dataset", "source_file", "prototype", "source_qid", "video_id", "input_ids", "inputs",
    "question", "options", "choices_raw", "answer", "answer_index", "answer_type", "can_stand_alone",
    "stand_alone_reason_code", "stand_alone_reason", "open_question", "rewrites", "base_format",
    "rejected_by_checker", "checker_problems", "checker_markup_only", "yes_no_style", "metadata",
]
REPORT_COLUMNS = ["file", "n_questions", "n_skipped_duplicates", "n_imported", "n_open", "n_option_judgement",
                  "n_rejected_by_checker", "n_rejected_markup_only", "top_reasons", "note"]

REASONS = {
    "choice_cross_reference": "a choice refers to other choices or to list positions",
    "time_choices": "choices are timestamps or time ranges",
    "ordering_choices": "choices are orderings of the same items",
    "quantity_with_unit": "choices are measured amounts (unit, decimals): no whole-count open answer",
    "clock_direction": "choices are clock directions: no fixed open format, neighbouring hours are near-misses",
    "location": "the answer is a place named with the dataset's relative descriptors; no open format for places",
    "long_choices": "choices are sentence-like: a free reply cannot reproduce them",
    "no_open_format": "no fixed output-format sentence for this answer type",
    "input_set_selection": "the inputs are the candidate set; a free reply could answer by position",
    "negated_selection": "negated selection: the answer is defined only relative to the set",
    "set_selection": "'which of these X' without a uniqueness marker: the set is what makes it single-answer",
    "no_uniqueness_marker": "name question without a uniqueness marker: one clear answer is not assured",
    "count": "a count has exactly one value",
    "unique_name": "short names and a uniqueness marker: one clear, nameable answer",
    "rejected_by_checker": "the open prompt failed formats.open_problems",
}


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

_TIME_MARK = re.compile(r"<TIME [^>]*>")
_BBOX_MARK = re.compile(r"<BBOX [^>]*>")
_CLOCK_TIME = re.compile(r"\b\d{1,2}:\d{2}(?::\d{1,2})?(?:\.\d+)?\b")
_INT = re.compile(r"^\d+$")
_DECIMAL = re.compile(r"^\d*[.,]\d+$")
_QUANTITY = re.compile(r"^\d+(?:[.,]\d+)?\s*[a-zµ%][a-z%.]*(?:\s+[a-z]+)?$", re.I)
_CLOCK_DIR = re.compile(r"^\d{1,2}\s*o['’]\s*clock$", re.I)
_CROSS_REF = [
    re.compile(r"\b(all|none|both|neither|any|either)\s+of\s+(the\s+)?(above|below|these|those|them|options|choices|answers)\b", re.I),
    re.compile(r"^(all|none|both|neither)(\s+of\s+(the\s+)?(above|below))?\.?$", re.I),
    re.compile(r"\b(?i:option|choice|answer)s?\s+[A-Z]\b"),
    re.compile(r"^\(?[A-Z]\)?(\s*(,|and|or|&)\s*\(?[A-Z]\)?)+\.?$"),
    re.compile(r"^(both|neither)\s+[A-Z]\b"),
]
_PREPOSITION = re.compile(r"^(at|in|on|under|inside|into|onto|near|next to|behind|beside|above|below|from|to)\b", re.I)
_INPUT_SET = re.compile(r"\bthese\s+(images|videos|pictures|photos|frames|clips|segments)\b", re.I)
_NEGATION = re.compile(r"\b(not|never|no)\b|n['’]t\b", re.I)
_SELECTION = re.compile(r"\bwhich\s+(?:one\s+)?of\s+(?:these|those|the\s+following|the\s+listed)\b", re.I)
_OPTION_WORDING = re.compile(r"\bwhich\s+(option|choice|answer|one)\b", re.I)
UNIQUENESS_MARKERS = (
    "highest", "lowest", "largest", "smallest", "biggest", "heaviest", "lightest", "longest", "shortest",
    "earliest", "latest", "closest", "nearest", "furthest", "farthest", "most", "least", "first", "last", "final",
    "only", "best", "worst", "greatest", "exact",
)
_MARKER = re.compile(rf"\b({'|'.join(UNIQUENESS_MARKERS)})\b", re.I)
_SINGULAR_VERB = {"are": "is", "were": "was", "have": "has", "do": "does", "belong": "belongs",
                  "contain": "contains", "appear": "appears", "show": "shows", "showcase": "showcases"}
_VERBS = set(_SINGULAR_VERB) | set(_SINGULAR_VERB.values()) | {"did", "can", "could", "will", "would", "should", "was"}
_REMOVALS = [
    re.compile(r"\s*\((?:choose|select|pick)\s+(?:one|from[^)]*)\)", re.I),
    re.compile(r",?\s+(?:from|among)\s+(?:the\s+)?(?:options|choices|following|list)(?:\s+(?:above|below|given|provided|listed))?(?=\s*[?.,]|$)", re.I),
]


@dataclass
class Step1:
    """Step 1's decision for one question (``open_question`` is the rewritten stand-alone text, if any)."""

    can_stand_alone: bool
    answer_type: str
    reason_code: str
    reason: str
    open_question: str | None = None
    rewrites: list[str] = field(default_factory=list)
    checker_problems: list[str] = field(default_factory=list)
    rejected_by_checker: bool = False
    checker_markup_only: bool = False


def singular(word: str) -> str:
    """A plural noun made singular by suffix rules (``ingredients`` → ``ingredient``, ``boxes`` → ``box``,
    ``tomatoes`` → ``tomato``, ``berries`` → ``berry``); words that do not look plural are returned unchanged."""
    w = word
    low = w.lower()
    if low.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if low.endswith(("sses", "ches", "shes", "xes", "oes")):
        return w[:-2]
    if low.endswith("s") and not low.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def rewrite_stand_alone(question: str) -> tuple[str | None, list[str]]:
    """Remove list-dependent wording with fixed rewrites; ``(None, notes)`` when no fixed rewrite applies.

    ``Which [one] of these|those|the following|the listed <noun phrase> <verb> …`` → ``Which <singular noun
    phrase> <singular verb> …`` (noun phrase of up to three words, ending before the first verb); phrases such
    as ``from the options below`` and ``(choose one)`` are removed. ``which option/choice/answer/one`` has no
    fixed rewrite (the noun it stands for is unknown). A question without a final ``?`` gets one.
    """
    text, notes = question.strip(), []
    for pattern in _REMOVALS:
        new = pattern.sub("", text)
        if new != text:
            notes.append(f"removed {pattern.search(text).group(0).strip()!r}")
            text = new
    m = _SELECTION.search(text)
    if m:
        words = text[m.end():].split()
        verb_at = next((i for i, w in enumerate(words[:4]) if w.lower().strip(",") in _VERBS), None)
        if verb_at is None or verb_at == 0:
            return None, notes + ["no noun phrase + verb after the selection wording"]
        phrase = words[:verb_at]
        phrase[-1] = singular(phrase[-1])
        verb = words[verb_at]
        verb = _SINGULAR_VERB.get(verb.lower(), verb)
        which = "Which" if m.group(0)[0].isupper() else "which"
        new = f"{text[:m.start()]}{which} {' '.join(phrase + [verb] + words[verb_at + 1:])}"
        notes.append(f"{m.group(0)!r} {' '.join(words[:verb_at + 1])!r} → {which + ' ' + ' '.join(phrase + [verb])!r}")
        text = new
    if _OPTION_WORDING.search(text):
        return None, notes + [f"{_OPTION_WORDING.search(text).group(0)!r} has no fixed rewrite"]
    if text and text[-1].isalnum():
        text += "?"
        notes.append("added '?'")
    return text, notes


def _mask_markup(text: str) -> str:
    return _BBOX_MARK.sub("<BBOX>", _TIME_MARK.sub("<TIME>", text))


def infer_answer_type(question: str, choices: list[str], choices_raw: list | None = None) -> tuple[str, str | None]:
    """``(answer_type, reason_code_for_4b or None)`` from the choices (and the question for places/kinds)."""
    raw = choices_raw if choices_raw is not None else choices
    if any(p.search(c) for c in choices for p in _CROSS_REF):
        return "description", "choice_cross_reference"
    if any(_TIME_MARK.search(c) or _CLOCK_TIME.search(c) for c in choices):
        return "time", "time_choices"
    if any(isinstance(c, list) for c in raw):
        return "ordering", "ordering_choices"
    if all(_INT.match(c) for c in choices):
        return "number", None
    if all(_INT.match(c) or _DECIMAL.match(c) or _QUANTITY.match(c) for c in choices) and \
            any(c[:1].isdigit() or c[:1] in ".," for c in choices):
        return "quantity", "quantity_with_unit"
    if all(_CLOCK_DIR.match(c) for c in choices):
        return "direction", "clock_direction"
    kind = "activity" if re.search(r"\bactivit(y|ies)\b", question, re.I) else \
        "recipe_step" if re.search(r"\bsteps?\b", question, re.I) else None
    if re.search(r"\bwhere\b", question, re.I):
        return "location", "location"
    if any(len(c.split()) > 12 or re.search(r"[,;:!?]|\.\s", c) for c in choices):
        return kind or "description", "long_choices"
    if any(_PREPOSITION.match(c) for c in choices):
        return "location", "location"
    if any(len(c.split()) > 6 or c.endswith(".") for c in choices):
        return kind or "description", "long_choices"
    return kind or "entity", None


def step1(question: str, choices: list[str], choices_raw: list | None = None) -> Step1:
    """Decide open vs 4b from the text alone (rule in the module docstring); runs the Step-2 checker too."""
    answer_type, code = infer_answer_type(question, choices, choices_raw)

    def no(c: str, extra: str = "", **kw) -> Step1:
        return Step1(False, answer_type, c, REASONS[c] + (f" ({extra})" if extra else ""), **kw)

    if code:
        return no(code)
    if answer_type not in OPEN_TYPES or answer_type not in OPEN_FORMATS:
        return no("no_open_format", answer_type)
    is_selection = bool(_SELECTION.search(question) or _OPTION_WORDING.search(question))
    if _INPUT_SET.search(question):
        return no("input_set_selection", _INPUT_SET.search(question).group(0))
    if answer_type != "number" and _NEGATION.search(question) and \
            (is_selection or re.match(r"\s*(which|what)\b", question, re.I)):
        return no("negated_selection")
    has_marker = bool(_MARKER.search(question))
    if is_selection and not has_marker:
        return no("set_selection")
    if answer_type != "number" and not has_marker:
        return no("no_uniqueness_marker")
    open_q, notes = rewrite_stand_alone(question)
    if open_q is None:
        return no("set_selection", "; ".join(notes))
    prompt = formats.open_prompt(open_q, answer_type)
    problems = formats.open_problems(prompt, choices)
    if problems:
        markup_only = not formats.open_problems(_mask_markup(prompt), choices)
        return no("rejected_by_checker", "; ".join(problems), open_question=open_q, rewrites=notes,
                  checker_problems=problems, rejected_by_checker=True, checker_markup_only=markup_only)
    code = "count" if answer_type == "number" else "unique_name"
    return Step1(True, answer_type, code, REASONS[code], open_question=open_q, rewrites=notes)


# --- yes/no statements ------------------------------------------------------------------------------------

_T = r"(<TIME [^>]*>)"
_PAST = {"open": "opened", "close": "closed"}


def _times(n: str) -> str:
    return f"{n} time" if n == "1" else f"{n} times"


def _strip_stop(text: str) -> str:
    return text[:-1] if text.endswith(".") else text


# (pattern over the whole question, statement builder (match, choice) → text or None when it does not fit)
DECLARATIVES: list[tuple[re.Pattern, object]] = [
    (re.compile(rf"How many times did I (open|close) (.+) in {_T}\?"),
     lambda m, c: f"I {_PAST[m[1]]} {m[2]} {_times(c)} in {m[3]}." if _INT.match(c) else None),
    (re.compile(rf"Given the direction I am looking at {_T}, where is the (.+) located\?"),
     lambda m, c: f"Given the direction I am looking at {m[1]}, the {m[2]} is located at {c}."),
    (re.compile(r"What is the person looking at in this video segment\?"),
     lambda m, c: f"In this video segment, the person is looking at {_strip_stop(c)[3:]}."
     if re.match(r"At ", c) else None),
    (re.compile(r"What was the exact quantity of (.+) used in (.+?)\??"),
     lambda m, c: f"The exact quantity of {m[1]} used in {m[2]} was {c}."),
    (re.compile(r"How much did the participant weigh of (.+) in this video\?"),
     lambda m, c: f"In this video, the participant weighed {c} of {m[1]}."),
    (re.compile(r"When was ingredient (.+) added to recipe (.+)\?"),
     lambda m, c: f"Ingredient {m[1]} was added to recipe {m[2]} from {c[5:]}." if c.startswith("From ") else None),
    (re.compile(r"Which of these ingredients is (not )?used in (.+?)\??"),
     lambda m, c: f"The ingredient {c} is {m[1] or ''}used in {m[2]}."),
    (re.compile(rf"Between {_T} and {_T}, which of these ingredients were added to the dish being prepared\?"),
     lambda m, c: f"Between {m[1]} and {m[2]}, the ingredient {c} was added to the dish being prepared."),
    (re.compile(r"What is the order of ingredients added to the dish in this video\?"),
     lambda m, c: f"In this video, the ingredients were added to the dish in this order: {c}."),
    (re.compile(rf"From {_T} to {_T}, what changed in the nutrition values of the dish with recipe (.+)\?"),
     lambda m, c: f"From {m[1]} to {m[2]}, the nutrition values of the dish with recipe {m[3]} changed as follows: {c}."),
    (re.compile(r"What is the ingredient with highest (\w+) in this recipe\?"),
     lambda m, c: f"The ingredient with highest {m[1]} in this recipe is {c}."),
    (re.compile(rf"What step did the participant do between {_T} and {_T} in this video\?"),
     lambda m, c: f"Between {m[1]} and {m[2]} in this video, the participant did the step \"{_strip_stop(c)}\"."),
    (re.compile(r"When did the participant perform step (.+) from recipe (.+)\?"),
     lambda m, c: f"The participant performed step \"{m[1]}\" from recipe {m[2]} at these times: {c}."),
    (re.compile(r"Which of these time segments belongs to the (.+?) recipe step (.+) in this video\?"),
     lambda m, c: f"The time segment {c} belongs to the {m[1]} recipe step \"{m[2]}\" in this video."),
]


def declarative(question: str, choice: str) -> str | None:
    """The question as a statement with ``choice`` filled in, or None when no fixed template fits."""
    for pattern, build in DECLARATIVES:
        m = pattern.fullmatch(question.strip())
        if m:
            text = build(m, choice)
            if text:
                return capitalise(re.sub(r"\.\.$", ".", text))
    return None


def proposed_answer_prompt(question: str, choice: str) -> str:
    """Yes/no fallback when no declarative rewrite exists: the question, one proposed answer, yes or no."""
    return (f"Question: {question}\nProposed answer: {_strip_stop(choice)}.\n\nIs the proposed answer correct?\n"
            "Reply in exactly this format:\nAnswer: <yes/no>")


# --- conversion -------------------------------------------------------------------------------------------


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
    shown = idx if want_true else rng.choice([i for i in range(n) if i != idx])
    statement = declarative(question["question"], options[shown])
    yes_no_style = "statement" if statement else "proposed_answer"
    yes_no_text = formats.yes_no_prompt(statement) if statement else proposed_answer_prompt(question["question"], options[shown])
    truth = [i == idx for i in range(n)]
    ids = _input_ids(question["inputs"])
    base_format = "open" if decision.can_stand_alone else "option_judgement"
    common = {
        "question_id": question_id, "clip_key": None, "dataset": DATASET, "video_id": ids[0],
        "subtype": question["prototype"], "level": None, "distractor_strategy": DISTRACTOR_STRATEGY,
        "answer_type": decision.answer_type, "options": options, "option_values": [f"choice:{i}" for i in range(n)],
        "option_truth": truth, "candidate_synonyms": json.dumps([[o] for o in options]), "statements": None,
        "statement_value": None, "statement_true": None, "source_file": question["source_file"],
        "prototype": question["prototype"], "source_qid": qid, "step1_reason_code": decision.reason_code,
        "yes_no_style": yes_no_style, "input_ids": ids,
    }
    items = [
        {**common, "item_id": f"{question_id}#yes_no", "format": "yes_no", "base_format": "yes_no",
         "prompt": yes_no_text, "expected": "yes" if truth[shown] else "no", "chance": formats.chance("yes_no"),
         "statement_value": f"choice:{shown}", "statement_true": truth[shown]},
        {**common, "item_id": f"{question_id}#multiple_choice", "format": "multiple_choice",
         "base_format": "multiple_choice", "prompt": multiple_choice_prompt(question["question"], options),
         "expected": LETTERS[idx], "chance": formats.chance("multiple_choice", n_options=n)},
    ]
    if decision.can_stand_alone:
        expected = str(int(options[idx])) if decision.answer_type == "number" else options[idx]
        for fmt, reason in (("open", False), ("open_with_reason", True)):
            items.append({**common, "item_id": f"{question_id}#{fmt}", "format": fmt, "base_format": "open",
                          "prompt": formats.open_prompt(decision.open_question, decision.answer_type, reason),
                          "expected": expected, "chance": formats.chance("open")})
    else:
        expected = ",".join("true" if t else "false" for t in truth)
        for fmt, reason in (("option_judgement", False), ("open_with_reason", True)):
            items.append({**common, "item_id": f"{question_id}#{fmt}", "format": fmt, "base_format": "option_judgement",
                          "prompt": option_judgement_prompt(question["question"], options, reason),
                          "expected": expected, "chance": formats.chance("option_judgement", n_options=n)})
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


def import_files(paths: list[Path], *, seed: int = SEED) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Read, validate and convert VQA files (folders are expanded to their ``*.json``).

    Returns ``(questions, items, report)``; the report has one row per file (:data:`REPORT_COLUMNS`, top
    reasons as ``code: count`` for the three commonest step-1 reasons). All files are validated before
    anything is converted; every problem of every file is raised together as :class:`VqaFileError`.
    Sample-shaped files are read last: a question also read from a per-prototype file is skipped (it must be
    identical there, else an error); a duplicate id between two per-prototype files is an error.
    """
    files = _expand(paths)
    problems: list[Problem] = []
    read: dict[Path, list[dict]] = {}
    for f in files:
        try:
            read[f] = read_vqa_file(f)
        except VqaFileError as exc:
            problems += exc.problems
    ordered = sorted(read, key=lambda f: (any(r["from_sample"] for r in read[f]), str(f)))
    seen: dict[str, tuple[str, dict]] = {}
    keep: dict[Path, list[dict]] = {}
    skipped: Counter = Counter()
    for f in ordered:
        keep[f] = []
        for r in read[f]:
            if r["qid"] in seen:
                other_file, other = seen[r["qid"]]
                same = all(other[k] == r[k] for k in ("question", "choices", "correct_idx", "inputs"))
                if r["from_sample"] and same:
                    skipped[f] += 1
                    continue
                why = "differs from" if r["from_sample"] else "duplicate question id, also in"
                problems.append(Problem(f.name, r["qid"], "-", f"{why} {other_file}"))
                continue
            seen[r["qid"]] = (f.name, r)
            keep[f].append(r)
    if problems:
        raise VqaFileError(problems)
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
            note = (f"sample file: {skipped[f]} of {len(read[f])} questions skipped as copies of per-prototype files"
                    if skipped[f] else "sample file imported (no per-prototype copies among the inputs)")
        report.append({
            "file": f.name, "n_questions": len(read[f]), "n_skipped_duplicates": skipped[f], "n_imported": len(converted),
            "n_open": sum(c["can_stand_alone"] for c in converted),
            "n_option_judgement": sum(not c["can_stand_alone"] for c in converted),
            "n_rejected_by_checker": sum(c["rejected_by_checker"] for c in converted),
            "n_rejected_markup_only": sum(c["checker_markup_only"] for c in converted),
            "top_reasons": "; ".join(f"{k}: {v}" for k, v in reasons.most_common(3)), "note": note,
        })
    return (pd.DataFrame(questions, columns=QUESTION_COLUMNS), pd.DataFrame(items, columns=ITEM_COLUMNS),
            pd.DataFrame(report, columns=REPORT_COLUMNS))


def default_vqa_dir(root: Path | None = None) -> Path:
    """``../shared/data/hd-epic/vqa-benchmark`` relative to the project root (:func:`settings.project_root`)."""
    from ..settings import project_root

    return ((root or project_root()) / ".." / "shared" / "data" / "hd-epic" / "vqa-benchmark").resolve()


def main_import(paths: list[Path], out_dir: Path | None = None) -> int:
    """CLI entry: import, print the per-file open / 4b / checker split, write Parquet + CSV; exit code.

    ``paths`` are files or folders (empty → :func:`default_vqa_dir`). Writes ``hd_epic_vqa_questions.parquet``,
    ``hd_epic_vqa_items.parquet`` and ``hd_epic_vqa_import_report.csv`` under ``out_dir`` (default
    ``data/assets/hd_epic_vqa/`` under the working directory). Returns 1 (nothing written) when a path is
    missing, no JSON file is found, or a file is invalid (problems printed to stderr as
    ``FILE:QID:FIELD: message``); else 0.
    """
    import sys

    from ..warehouse import write_parquet

    paths = [Path(p) for p in paths] or [default_vqa_dir()]
    missing = [p for p in paths if not p.exists()]
    for p in missing:
        print(f"{p}:-:-: no such file or folder", file=sys.stderr)
    if missing:
        return 1
    if not _expand(paths):
        print(f"no *.json files in {', '.join(map(str, paths))}", file=sys.stderr)
        return 1
    try:
        questions, items, report = import_files(paths)
    except VqaFileError as exc:
        for p in exc.problems:
            print(p, file=sys.stderr)
        print(f"{len(exc.problems)} problem(s); nothing written", file=sys.stderr)
        return 1
    out = Path(out_dir) if out_dir is not None else Path.cwd() / "data" / "assets" / DATASET
    write_parquet(questions, out / f"{DATASET}_questions.parquet")
    write_parquet(items, out / f"{DATASET}_items.parquet")
    out.mkdir(parents=True, exist_ok=True)
    report.to_csv(out / f"{DATASET}_import_report.csv", index=False)
    shown = report[["file", "n_imported", "n_open", "n_option_judgement", "n_rejected_by_checker",
                    "n_rejected_markup_only", "top_reasons"]]
    total = shown.drop(columns=["file", "top_reasons"]).sum()
    with pd.option_context("display.max_colwidth", 90, "display.width", 250):
        print(shown.to_string(index=False))
    print(f"\nTOTAL: {total['n_imported']} questions, {total['n_open']} open, {total['n_option_judgement']} option_judgement "
          f"(4b), of which {total['n_rejected_by_checker']} rejected by the checker "
          f"({total['n_rejected_markup_only']} only for option text inside <TIME>/<BBOX> markup); "
          f"{len(items)} items → {out}")
    for note in report.loc[report["note"] != "", ["file", "note"]].itertuples(index=False):
        print(f"{note.file}: {note.note}")
    return 0
