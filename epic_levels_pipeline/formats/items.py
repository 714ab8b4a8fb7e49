"""A clip's items: every base question in each registered format (:data:`.registry.FORMATS`), with the checks
the items asset runs (every format present, open wording without list phrases, statement truths from the
solvers). The formats' rules (Step 1, balanced yes/no, statements): docs/design/formats-and-replies.md."""

from __future__ import annotations

import json
import random
import re

import pandas as pd

from ..annotations.catalogue import Catalogue, object_class
from ..annotations.clip_rows import audio_annotated
from ..bank.clip_view import ClipView
from ..records import records
from ..annotations.language import capitalise, cue_phrase
from ..seeding import DEFAULT_SEED, stable_seed
from ..bank.kinds import synonyms
from ..bank.solvers import solve
from .item_text import QuestionItems
from .prompts import open_prompt, yes_no_prompt
from .registry import FORMATS
LIST_DEPENDENT = ("which of the following", "of these", "listed", "options", "above", "below")

ITEM_COLUMNS = [
    "item_id", "question_id", "clip_key", "dataset", "video_id", "subtype", "level", "distractor_strategy", "format",
    "base_format", "prompt", "expected", "answer_type", "chance", "options", "option_values", "option_truth",
    "candidate_synonyms", "statements", "statement_value", "statement_true", "audio_annotated",
]


def list_dependent_phrases(prompt: str) -> list[str]:
    """List-dependent wording found in a prompt (whole words, case-insensitive)."""
    text = prompt.lower()  # (a phrase that is not a substring cannot match: the regex runs only where it is)
    return [p for p in LIST_DEPENDENT if p in text and re.search(rf"\b{re.escape(p)}\b", text)]


def leaked_options(prompt: str, options: list[str]) -> list[str]:
    """Options whose text appears in the prompt as a whole phrase (case-insensitive). Markup spans such as
    HD-EPIC's ``<TIME 00:01:02 video 1>`` are not wording and are masked first (a choice "1" is not leaked
    by "video 1")."""
    text = re.sub(r"<[^<>]*>", " ", prompt.lower())
    needles = [(o, o.strip().lower()) for o in options]
    return [o for o, n in needles if n and n in text and re.search(rf"(?<![a-z]){re.escape(n)}(?![a-z])", text)]


def open_problems(prompt: str, options: list[str]) -> list[str]:
    """Why an open prompt is unacceptable (empty list = acceptable)."""
    problems = [f"list-dependent wording {p!r}" for p in list_dependent_phrases(prompt)]
    problems += [f"leaks option {o!r}" for o in leaked_options(prompt, options)]
    return problems


# --- renderings --------------------------------------------------------------------------------------


def _statement(template: str, option: str) -> str:
    text = template.format(option=option)
    text = re.sub(r"\.\.$", ".", text)
    return capitalise(text)


def yes_no_truths(question_ids: list[str], seed: int, clip_key: str,
                  strata: dict[str, str] | None = None) -> dict[str, bool]:
    """Balanced per clip: questions in seeded-hash order alternate true/false from a seeded start.

    With ``strata`` (question id → stratum, e.g. subtype × distractor strategy) the alternation runs within
    each stratum, from a start seeded by clip and stratum, so every stratum is balanced to within one
    statement per clip. The audits read yes/no per subtype × strategy: a stratum whose statements are mostly
    true would move any rule that leans to "no" (a frequency prior on equally frequent options says "yes"
    once in four) away from chance by the imbalance alone."""
    groups: dict[str, list[str]] = {}
    for q in question_ids:
        groups.setdefault(strata[q] if strata is not None else "", []).append(q)
    out: dict[str, bool] = {}
    for stratum, ids in groups.items():
        ordered = sorted(ids, key=lambda q: stable_seed(seed, q))
        start = stable_seed(seed, clip_key, "yes_no", *([stratum] if stratum else [])) % 2 == 0
        out.update({q: (start if i % 2 == 0 else not start) for i, q in enumerate(ordered)})
    return out


def _statement_pool(questions: pd.DataFrame, view: ClipView, cat: Catalogue) -> tuple[list[dict], list[dict]]:
    """True and false statements available in this window, each with its source and solver truth."""
    trues, falses = [], []
    seen: set[str] = set()
    for q in records(questions):
        params = json.loads(q.params)
        values = list(q.option_values)
        truth = solve(q.subtype, view, params, values)
        for option, value, t in zip(q.options, values, truth):
            text = _statement(q.statement, option)
            if text.lower() in seen:
                continue
            seen.add(text.lower())
            entry = {"text": text, "truth": bool(t), "source": f"question:{q.question_id}", "value": value}
            (trues if t else falses).append(entry)
    # Presence statements (sounds for epic_sounds, moved objects for hd_epic), truth from the presence solvers.
    if view.clip.dataset == "epic_sounds":
        present = sorted(view.present_sound_classes)
        absent = [c for c in cat.sound_classes if c not in view.present_sound_classes and c not in view.possibly_heard]
        for c, is_true in [(c, True) for c in present] + [(c, False) for c in absent]:
            text = f"{capitalise(cue_phrase(c))} can be heard during this clip."
            t = solve("easy_sound_presence", view, {}, [f"sound:{c}"])[0]
            (trues if t else falses).append({"text": text, "truth": t, "source": "sound presence", "value": f"sound:{c}"})
    else:
        moved = sorted(n for n in view.present_objects if n in cat.objects)
        others = [n for n in cat.objects_by_video.get(view.clip.video_id, []) if n not in view.present_objects
                  and object_class(cat, n) not in {object_class(cat, m) for m in view.present_objects}]
        for n, is_true in [(n, True) for n in moved] + [(n, False) for n in others]:
            text = f"During this clip, the camera wearer moves the {n}."
            t = solve("easy_object", view, {}, [f"object:{n}"])[0]
            (trues if t else falses).append({"text": text, "truth": t, "source": "object presence", "value": f"object:{n}"})
    return trues, falses


def build_items(questions: pd.DataFrame, view: ClipView, cat: Catalogue, *, seed: int = DEFAULT_SEED) -> tuple[pd.DataFrame, list[str]]:
    """Every base question of one clip in the five formats; also the open prompts the checker rejected."""
    items: list[dict] = []
    rejected: list[str] = []
    if not len(questions):
        return pd.DataFrame(columns=ITEM_COLUMNS), rejected
    clip = view.clip
    strata = {q.question_id: f"{q.subtype}/{q.distractor_strategy}" for q in questions.itertuples(index=False)}
    yes_no = yes_no_truths(list(questions["question_id"]), seed, clip.key, strata)
    trues, falses = _statement_pool(questions, view, cat)
    heard = audio_annotated(clip.dataset, view.streams)  # the clip's, so every item of it is asked alike
    for q in records(questions):
        options, values = list(q.options), list(q.option_values)
        truth = solve(q.subtype, view, json.loads(q.params), values)
        syn = [synonyms(cat, view, v, o) for v, o in zip(values, options)]
        base = {"question_id": q.question_id, "clip_key": q.clip_key, "dataset": q.dataset, "video_id": q.video_id,
                "subtype": q.subtype, "level": q.level, "distractor_strategy": q.distractor_strategy,
                "answer_type": q.answer_type, "options": options, "option_values": values,
                "option_truth": [bool(t) for t in truth], "candidate_synonyms": json.dumps(syn),
                "statements": None, "statement_value": None, "statement_true": None, "audio_annotated": heard}
        rng = random.Random(stable_seed(seed, q.question_id, "formats"))
        # Step 1 by the generator, then the checker: an open wording that mentions an option cannot stand alone.
        stand_alone = bool(q.can_stand_alone)
        if stand_alone:
            problems = open_problems(open_prompt(q.open_question, q.answer_type), options)
            if problems:
                rejected.append(f"{q.question_id}: {'; '.join(problems)} → option_judgement")
                stand_alone = False
        asked = QuestionItems(
            q.question_id, base, q.question, options, values, [bool(t) for t in truth], q.answer_index, rng,
            yes_no[q.question_id], lambda i, q=q, options=options: yes_no_prompt(_statement(q.statement, options[i])),
            stand_alone, q.open_question, q.answer_type, q.answer, q.question, options,
            lambda q=q, options=options, truth=truth, rng=rng: _choose_statements(q, options, truth, trues, falses, rng))
        for entry in list(FORMATS.values()):
            if "bank" in entry.asked_of:
                items += entry.items(entry, asked)
    return pd.DataFrame(items, columns=ITEM_COLUMNS), rejected


def _choose_statements(q, options, truth, trues, falses, rng: random.Random) -> list[dict]:
    """Four statements: the key's (true), 0–2 more true ones, the rest false; shuffled, seeded."""
    key_text = _statement(q.statement, options[q.answer_index]).lower()
    own_false = [_statement(q.statement, o) for o, t in zip(options, truth) if not t]
    key = next(s for s in trues if s["text"].lower() == key_text)
    other_true = [s for s in trues if s["text"].lower() != key_text]
    n_true = 1 + rng.randint(0, min(2, len(other_true)))
    chosen = [key] + rng.sample(other_true, n_true - 1)
    pool_false = [s for s in falses if s["text"] in own_false] + \
                 [s for s in falses if s["text"] not in own_false and s["text"].lower() not in {c["text"].lower() for c in chosen}]
    first = pool_false[: len(own_false)]
    rest = pool_false[len(own_false):]
    rng.shuffle(first)
    rng.shuffle(rest)
    chosen += (first + rest)[: 4 - len(chosen)]
    rng.shuffle(chosen)
    return chosen


def format_problems(items: pd.DataFrame, questions: pd.DataFrame) -> list[str]:
    """Every question has yes_no, multiple_choice, statements, open or option_judgement, open_with_reason."""
    problems = []
    formats_of: dict = {}
    for qid, fmt in zip(items["question_id"], items["format"]):
        formats_of.setdefault(qid, set()).add(fmt)
    for qid in questions["question_id"]:
        have = formats_of.get(qid, set())
        missing = {"yes_no", "multiple_choice", "statements", "open_with_reason"} - have
        if not ({"open", "option_judgement"} & have):
            missing.add("open|option_judgement")
        if missing:
            problems.append(f"{qid}: missing {sorted(missing)}")
    return problems


def statement_truth_problems(items: pd.DataFrame, view: ClipView, questions: pd.DataFrame) -> list[str]:
    """Format-3 truths must agree with the solvers (re-run now), and each item has a true statement."""
    problems = []
    subtype_of = dict(zip(questions["question_id"], questions["subtype"]))
    params_of = dict(zip(questions["question_id"], questions["params"]))
    solved: dict[tuple[str, str], bool] = {}  # items share the clip's statements: each is solved once

    def truth_of(source: str, value: str) -> bool:
        if (source, value) not in solved:
            if source.startswith("question:"):
                qid = source.split(":", 1)[1]
                solved[source, value] = solve(subtype_of[qid], view, json.loads(params_of[qid]), [value])[0]
            elif source == "sound presence":
                solved[source, value] = solve("easy_sound_presence", view, {}, [value])[0]
            else:
                solved[source, value] = solve("easy_object", view, {}, [value])[0]
        return solved[source, value]

    for item in records(items.loc[(items["format"] == "statements").to_numpy(), ["item_id", "statements"]]):
        statements = json.loads(item.statements)
        if not any(s["truth"] for s in statements):
            problems.append(f"{item.item_id}: no true statement")
        for s in statements:
            truth = truth_of(s["source"], s["value"])
            if truth != s["truth"]:
                problems.append(f"{item.item_id} {s['letter']}: stored truth {s['truth']} but solver says {truth}")
    return problems
