"""HD-EPIC's VQA benchmark as a source (``imports/vqa_source.py``, ``defs/hd_epic_vqa``): its import, and per video
the clips' own tables (responses, verdicts and partial results have the clips' columns)."""

from __future__ import annotations

import pyarrow as pa

from .fields import BOOL, FLOAT, INT, RESPONDER, STR, STRS, _f
from .responses import ITEMS


HD_EPIC_VQA_QUESTIONS = pa.schema([
    _f("question_id", STR, "hd_epic_vqa/<upstream question id>", False),
    _f("dataset", STR, "hd_epic_vqa"),
    _f("source_file", STR, "the VQA benchmark file the question was read from"),
    _f("prototype", STR, "the question prototype (the file's name, e.g. ingredient_ingredient_weight)"),
    _f("source_qid", STR, "the upstream question id"),
    _f("video_id", STR, "the first input's video"),
    _f("input_ids", STRS, "every input's video id, in input order"),
    _f("inputs", STR, "JSON: the upstream inputs (videos with times, images)"),
    _f("question", STR, "the upstream question text"),
    _f("options", STRS, "the choices as text, in the upstream order"),
    _f("choices_raw", STR, "JSON: the upstream choices as given (lists for orderings)"),
    _f("answer", STR, "the key's text"),
    _f("answer_index", INT, "the key's position among the choices (upstream correct_idx)"),
    _f("answer_type", STR, "inferred answer type (number, entity, activity, recipe_step, time, ordering, ...)"),
    _f("can_stand_alone", BOOL, "can the question be asked without its choices (step 1)"),
    _f("stand_alone_reason_code", STR, "step 1's reason code"),
    _f("stand_alone_reason", STR, "step 1's reason"),
    _f("open_question", STR, "the stand-alone rewrite (open items), if any"),
    _f("rewrites", STRS, "the fixed rewrites applied to get the open question"),
    _f("base_format", STR, "open or option_judgement"),
    _f("rejected_by_checker", BOOL, "was the open prompt rejected by formats.open_problems"),
    _f("checker_problems", STRS, "what the checker found"),
    _f("checker_markup_only", BOOL, "would every checker problem vanish with <TIME>/<BBOX> markup masked"),
    _f("yes_no_style", STR, "statement (declarative rewrite) or proposed_answer"),
    _f("metadata", STR, "JSON: upstream extra fields, if any"),
    _f("clip_key", STR, "the partition and bootstrap cluster: hd_epic_vqa__<video id>"),
    _f("level", STR, "imported:<HD-EPIC category>: not levelled by evidence"),
])

HD_EPIC_VQA_ITEMS = pa.schema(list(ITEMS) + [
    _f("source_file", STR, "the VQA benchmark file the question was read from"),
    _f("prototype", STR, "the question prototype"),
    _f("source_qid", STR, "the upstream question id"),
    _f("step1_reason_code", STR, "why the question can (or cannot) stand without its choices"),
    _f("yes_no_style", STR, "statement (declarative rewrite) or proposed_answer"),
    _f("input_ids", STRS, "every input's video id, in input order"),
    _f("levelled_by", STR, "imported: the level is the source's category, not derived from evidence"),
])

HD_EPIC_VQA_IMPORT_REPORT = pa.schema([
    _f("file", STR, "the VQA benchmark file"),
    _f("n_questions", INT, "questions in the file"),
    _f("n_skipped_duplicates", INT, "questions of a sample file skipped as copies of a per-prototype file"),
    _f("n_skipped_duplicate_choices", INT, "skipped: two choices are the same after normalisation"),
    _f("n_skipped_answer_not_among_choices", INT, "skipped: correct_idx points at no choice"),
    _f("n_skipped_malformed_times", INT, "skipped: an input's time is malformed or ends before it starts"),
    _f("n_imported", INT, "questions imported"),
    _f("n_open", INT, "of them asked open"),
    _f("n_option_judgement", INT, "of them asked as option judgement (4b)"),
    _f("n_rejected_by_checker", INT, "open rewrites the checker rejected (kept as 4b)"),
    _f("n_rejected_markup_only", INT, "of them rejected only for option text inside <TIME>/<BBOX> markup"),
    _f("top_reasons", STR, "the three commonest step-1 reasons, code: count"),
    _f("note", STR, "a note for readers (sample files)"),
])

HD_EPIC_VQA_SKIPPED = pa.schema([
    _f("file", STR, "the VQA benchmark file"),
    _f("qid", STR, "the upstream question id"),
    _f("reason", STR, "duplicate_choices, answer_not_among_choices or malformed_times"),
    _f("message", STR, "the problem, FILE:QID:FIELD: message"),
])

VQA_OFFICIAL_PARTIALS = pa.schema([
    *RESPONDER,
    _f("condition", STR, "clip or no_clip"),
    _f("prototype", STR, "the question type (the VQA file's name, e.g. recipe_step_recognition)"),
    _f("clip_key", STR, "the video's partition: hd_epic_vqa__<video id>"),
    _f("chance", FLOAT, "chance of the items (1 / number of choices)"),
    _f("n", INT, "official_mcq replies asked (failed calls included: they count wrong)"),
    _f("correct", INT, "right by the authors' letter rule (the first A–Z character as written)"),
    _f("n_unreadable", INT, "replies with no readable letter by the authors' rule (wrong)"),
    _f("n_failed", INT, "calls that failed or were blocked (status error; wrong, as the authors count them)"),
    _f("n_skipped", INT, "items not asked (no media for the condition): left out of n"),
    _f("correct_lmms", INT, "right by lmms-eval's reading (the reply upper-cased, then its first A–Z)"),
    _f("n_unreadable_lmms", INT, "replies with no readable letter by lmms-eval's reading"),
])

VQA_OFFICIAL_SCORES = pa.schema([
    *RESPONDER,
    _f("condition", STR, "clip or no_clip (the paper's 'blind' rows are text only)"),
    _f("aggregate", STR, "type (one question type), category (mean of its types), headline (mean of the "
                         "categories: the paper's Avg.) or pooled (every question once)"),
    _f("category", STR, "HD-EPIC category (recipe, ingredient, nutrition, fine_grained, 3d_perception, "
                        "object_motion, gaze); '*' for headline and pooled"),
    _f("question_type", STR, "the question type (prototype); '*' for category, headline and pooled rows"),
    _f("n", INT, "questions asked (failed calls included)"),
    _f("correct", INT, "right by the authors' letter rule"),
    _f("accuracy", FLOAT, "accuracy by the authors' rule; category: unweighted mean of its types; headline: "
                          "unweighted mean of the categories"),
    _f("ci_low", FLOAT, "95 % bootstrap interval of accuracy, resampling videos: low end"),
    _f("ci_high", FLOAT, "95 % bootstrap interval of accuracy, resampling videos: high end"),
    _f("chance", FLOAT, "chance (1/5 for five choices)"),
    _f("n_unreadable", INT, "replies without a readable letter by the authors' rule (counted wrong)"),
    _f("n_failed", INT, "failed or blocked calls (counted wrong)"),
    _f("n_skipped", INT, "items not asked (no media for the condition), left out"),
    _f("accuracy_lmms", FLOAT, "the same aggregate by lmms-eval's reading of the replies (upper-cased first letter)"),
    _f("n_unreadable_lmms", INT, "replies without a readable letter by lmms-eval's reading"),
    _f("n_types", INT, "question types averaged (or pooled)"),
    _f("n_categories", INT, "categories averaged (or pooled)"),
    _f("n_clips", INT, "videos with asked questions"),
    _f("note", STR, "what is missing from an average (types or categories not imported), or what a row is"),
])
