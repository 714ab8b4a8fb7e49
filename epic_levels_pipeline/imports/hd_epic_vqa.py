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

from ..annotations.language import LETTERS  # noqa: F401  (the letters of the options, as before)
from ..formats.registry import multiple_choice_prompt, option_judgement_prompt  # noqa: F401
from .vqa_conversion import (DISTRACTOR_STRATEGY, EXTRA_ITEM_COLUMNS, ITEM_COLUMNS, QUESTION_COLUMNS,  # noqa: F401
                             REPORT_COLUMNS, SEED, convert, import_files)
from .vqa_reading import DATASET, SAMPLE_FILE, VqaFileError, read_vqa_file, render_choice  # noqa: F401
from .vqa_rewriting import (OPEN_TYPES, REASONS, UNIQUENESS_MARKERS, Step1, declarative,  # noqa: F401
                            infer_answer_type, proposed_answer_prompt, rewrite_stand_alone, singular, step1)
