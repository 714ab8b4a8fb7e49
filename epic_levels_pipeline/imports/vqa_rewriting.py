"""Step 1 of the VQA import: can a question stand without its options (answer type, wording rules,
fixed rewrites), and the yes/no declaratives. The rule in full: docs/design/hd-epic-vqa-import.md."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..formats import items as formats
from ..formats.prompts import open_prompt
from ..bank.subtypes import OPEN_FORMATS
from ..annotations.language import capitalise

OPEN_TYPES = ("number", "entity", "activity", "recipe_step")

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
    """Decide open vs 4b from the text alone (the rule: docs/design/hd-epic-vqa-import.md); runs the Step-2 checker too."""
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
    prompt = open_prompt(open_q, answer_type)
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


