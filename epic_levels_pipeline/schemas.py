"""The warehouse tables' declared Arrow schemas, with the documentation of every column.

One :class:`pyarrow.Schema` per table (:data:`SCHEMAS`), each field's ``doc`` in its metadata. The tables
are written through :func:`conform`: a frame or an Arrow table is cast to its table's schema (columns in the
declared order), and a missing column or a value of another type fails with an error naming the table and
the column. Tables not declared here are written as they are inferred.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa


class SchemaError(ValueError):
    """A table does not fit its declared schema (the message names the table and the column)."""


def _f(name: str, kind: pa.DataType, doc: str, nullable: bool = True) -> pa.Field:
    return pa.field(name, kind, nullable=nullable, metadata={"doc": doc})


STR, INT, FLOAT, BOOL = pa.large_string(), pa.int64(), pa.float64(), pa.bool_()
STRS, INTS, BOOLS = pa.list_(pa.large_string()), pa.list_(pa.int64()), pa.list_(pa.bool_())

QUESTIONS = pa.schema([
    _f("question_id", STR, "<clip key>/<subtype>/<strategy>/<digest of the draft>", False),
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("clip_key", STR, "the clip (window) the question is about"),
    _f("video_id", STR, "the source video"),
    _f("subtype", STR, "question subtype (bank/subtypes)"),
    _f("level", STR, "L1-L4, derived from the subtype's scope"),
    _f("scope", STR, "the subtype's declared evidence scope (presence, moment, sequence, beyond)"),
    _f("derived_scope", STR, "the scope recomputed from the provenance"),
    _f("question", STR, "the question text"),
    _f("options", STRS, "the four option texts, in the order shown"),
    _f("option_values", STRS, "the options' candidate values (kind:payload)"),
    _f("answer", STR, "the key's text"),
    _f("answer_value", STR, "the key's candidate value"),
    _f("answer_index", INT, "the key's position among the options (0-3)"),
    _f("distractor_strategy", STR, "how the wrong options were drawn (bank/pools.py)"),
    _f("provenance", STR, "JSON list of the evidence rows (stream, row_id, span, role, at_s, in_window, label)"),
    _f("can_stand_alone", BOOL, "can the question be asked without its options"),
    _f("stand_alone_reason", STR, "why it cannot stand alone (empty when it can)"),
    _f("open_question", STR, "the question's open-answer wording"),
    _f("statement", STR, "the key as a yes/no statement"),
    _f("answer_type", STR, "entity, sound, action, purpose, activity, recipe_step or number"),
    _f("params", STR, "the draft's parameters as sorted JSON"),
    _f("option_present", BOOLS, "does each option occur in the clip (null: presence cannot tell)"),
    _f("presence_pick", INT, "the option the presence oracle singles out, -1 for none"),
    _f("presence_rule", STR, "why the presence oracle picked it (or did not)"),
    _f("presence_correct", BOOL, "is the presence oracle's pick the key"),
    _f("caveats", STRS, "notes a reader should know about the question"),
    _f("option_frequency", INTS, "each option's corpus frequency (what a text-only prior sees)"),
])

DISTRACTOR_POOLS = pa.schema([
    _f("clip_key", STR, "the clip"),
    _f("question_id", STR, "the question the pool was drawn for (kept or dropped)"),
    _f("subtype", STR, "question subtype"),
    _f("distractor_strategy", STR, "the strategy that offered the candidates"),
    _f("value", STR, "candidate value (kind:payload)"),
    _f("text", STR, "option text"),
    _f("role", STR, "distractor or answer"),
    _f("present", BOOL, "does the candidate occur in the clip (null: cannot tell)"),
    _f("rows", STRS, "stream:row_id of the rows justifying the candidate"),
    _f("note", STR, "why it is a wrong option (or 'the key')"),
    _f("chosen", BOOL, "is it one of the question's options"),
    _f("offered", INT, "how many candidates the strategy offered for the draft"),
])

# The other tables, as a run of the bundled clips writes them (column order kept).
ACTIVITIES = pa.schema([
    _f("activity_id", STR, "HD-EPIC activity id"),
    _f("participant_id", STR, "the participant who recorded the video"),
    _f("video_id", STR, "the source video"),
    _f("recipe_id", STR, "HD-EPIC recipe id"),
    _f("label", STR, "the row's text label"),
    _f("start_s", FLOAT, "start, seconds from the video start"),
    _f("stop_s", FLOAT, "stop, seconds from the video start"),
    _f("stop_is_video_end", BOOL, "does the activity run to the video's end"),
    _f("source_file", STR, "the upstream file the row was read from"),
    _f("source_row", INT, "its row (line or index) in that file"),
])

CAPTION_ALIGNMENTS = pa.schema([
    _f("clip_key", STR, "the clip (window): <dataset>__<video>__<start>-<end>"),
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("condition", STR, "clip, no_clip or silenced"),
    _f("responder", STR, "offline responder or model family that answered"),
    _f("model", STR, "model name (empty for offline responders)"),
    _f("matcher", STR, "greedy or optimal unit matching"),
    _f("unit", STR, "event or action"),
    _f("ref_id", STR, "reference unit id"),
    _f("resp_id", STR, "response unit id"),
    _f("ref_start_s", FLOAT, "reference unit start (s from the window start)"),
    _f("ref_stop_s", FLOAT, "reference unit stop (s from the window start)"),
    _f("resp_start_s", FLOAT, "response unit start (s)"),
    _f("resp_stop_s", FLOAT, "response unit stop (s)"),
    _f("tiou", FLOAT, "temporal IoU of the matched pair"),
    _f("verdict", STR, "matched, missed or spurious"),
    _f("verdict_by", STR, "what decided the verdict"),
    _f("ref_label", STR, "reference unit's label"),
    _f("resp_label", STR, "response unit's label"),
    _f("ref_source_id", STR, "annotation row of the reference unit"),
])

CAPTION_REFERENCES = pa.schema([
    _f("clip_key", STR, "the clip (window): <dataset>__<video>__<start>-<end>"),
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("duration_s", FLOAT, "duration in seconds"),
    _f("kind", STR, "kind of row"),
    _f("unit_id", STR, "reference unit id"),
    _f("start_s", FLOAT, "start, seconds from the video start"),
    _f("stop_s", FLOAT, "stop, seconds from the video start"),
    _f("label", STR, "the row's text label"),
    _f("sound_class", STR, "EPIC-SOUNDS class"),
    _f("description", STR, "EPIC-SOUNDS free-text description"),
    _f("verb", STR, "the narration's verb"),
    _f("verb_class", INT, "EPIC-KITCHENS verb class"),
    _f("noun", STR, "the narration's main noun"),
    _f("noun_class", INT, "EPIC-KITCHENS noun class"),
    _f("object_name", STR, "object name shown (instance suffixes removed, typos fixed)"),
    _f("synonyms", STRS, "other names accepted for the unit"),
    _f("linked_ids", STRS, "ids of the units this one is linked to"),
    _f("source_stream", STR, "annotation stream the unit comes from"),
    _f("source_id", STR, "annotation row the unit comes from"),
])

CAPTION_RESPONSE_SCORES = pa.schema([
    _f("clip_key", STR, "the clip (window): <dataset>__<video>__<start>-<end>"),
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("condition", STR, "clip, no_clip or silenced"),
    _f("responder", STR, "offline responder or model family that answered"),
    _f("model", STR, "model name (empty for offline responders)"),
    _f("matcher", STR, "greedy or optimal unit matching"),
    _f("parsed", BOOL, "the answer parsed from the reply"),
    _f("parse_error", STR, "why the caption did not parse"),
    _f("n_undecided", INT, "count of undecided"),
    _f("n_judged", INT, "count of judged"),
    _f("n_missing_fields", INT, "count of missing fields"),
    _f("n_duplicate_ids", INT, "count of duplicate ids"),
    _f("n_times_out_of_range", INT, "count of times out of range"),
    _f("n_empty_spans", INT, "count of empty spans"),
    _f("n_dangling_links", INT, "count of dangling links"),
    _f("n_invalid_reference_use", INT, "count of invalid reference use"),
    _f("n_links_without_overlap", INT, "count of links without overlap"),
    _f("event_p", FLOAT, "precision of event"),
    _f("event_r", FLOAT, "recall of event"),
    _f("event_f1", FLOAT, "F1 of event"),
    _f("event_label_p", FLOAT, "precision of event label"),
    _f("event_label_r", FLOAT, "recall of event label"),
    _f("event_label_f1", FLOAT, "F1 of event label"),
    _f("action_p", FLOAT, "precision of action"),
    _f("action_r", FLOAT, "recall of action"),
    _f("action_f1", FLOAT, "F1 of action"),
    _f("action_label_p", FLOAT, "precision of action label"),
    _f("action_label_r", FLOAT, "recall of action label"),
    _f("action_label_f1", FLOAT, "F1 of action label"),
    _f("reference_p", FLOAT, "precision of reference"),
    _f("reference_r", FLOAT, "recall of reference"),
    _f("reference_f1", FLOAT, "F1 of reference"),
    _f("reference_label_p", FLOAT, "precision of reference label"),
    _f("reference_label_r", FLOAT, "recall of reference label"),
    _f("reference_label_f1", FLOAT, "F1 of reference label"),
    _f("reference_name_p", FLOAT, "precision of reference name"),
    _f("reference_name_r", FLOAT, "recall of reference name"),
    _f("reference_name_f1", FLOAT, "F1 of reference name"),
    _f("evsa_p", FLOAT, "precision of evsa"),
    _f("evsa_r", FLOAT, "recall of evsa"),
    _f("evsa_f1", FLOAT, "F1 of evsa"),
    _f("ccc", FLOAT, "concordance correlation of counts"),
    _f("parse_failure", FLOAT, "share of captions that did not parse"),
    _f("rate_missing_fields", FLOAT, "share of captions with missing fields"),
    _f("rate_duplicate_ids", FLOAT, "share of captions with duplicate ids"),
    _f("rate_times_out_of_range", FLOAT, "share of captions with times out of range"),
    _f("rate_empty_spans", FLOAT, "share of captions with empty spans"),
    _f("rate_dangling_links", FLOAT, "share of captions with dangling links"),
    _f("rate_invalid_reference_use", FLOAT, "share of captions with invalid reference use"),
    _f("rate_links_without_overlap", FLOAT, "share of captions with links without overlap"),
])

CAPTION_RESPONSES = pa.schema([
    _f("clip_key", STR, "the clip (window): <dataset>__<video>__<start>-<end>"),
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("condition", STR, "clip, no_clip or silenced"),
    _f("responder", STR, "offline responder or model family that answered"),
    _f("model", STR, "model name (empty for offline responders)"),
    _f("prompt", STR, "the prompt text sent"),
    _f("reply", STR, "the raw reply text"),
    _f("status", STR, "ok, error or skipped"),
    _f("error", STR, "the error message, when the call failed"),
    _f("cache_key", STR, "the reply cache's key"),
    _f("cached", BOOL, "was the reply read from the cache"),
    _f("prompt_tokens", INT, "input tokens billed"),
    _f("output_tokens", INT, "output tokens billed"),
])

CAPTION_SCORES = pa.schema([
    _f("responder", STR, "offline responder or model family that answered"),
    _f("model", STR, "model name (empty for offline responders)"),
    _f("condition", STR, "clip, no_clip or silenced"),
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("matcher", STR, "greedy or optimal unit matching"),
    _f("metric", STR, "metric name"),
    _f("n", INT, "rows counted"),
    _f("value", FLOAT, "the metric's value"),
])

CAPTION_THRESHOLD_SENSITIVITY = pa.schema([
    _f("unit", STR, "event or action"),
    _f("threshold", FLOAT, "tIoU threshold"),
    _f("is_default", BOOL, "is this the default threshold"),
    _f("condition", STR, "clip, no_clip or silenced"),
    _f("metric", STR, "metric name"),
    _f("responder", STR, "offline responder or model family that answered"),
    _f("model", STR, "model name (empty for offline responders)"),
    _f("value", FLOAT, "the metric's value"),
    _f("spearman_rho", FLOAT, "Spearman rho of the ranking against the default threshold's"),
    _f("n_ranked", INT, "count of ranked"),
])

CLIP_ANNOTATIONS = pa.schema([
    _f("clip_key", STR, "the clip (window): <dataset>__<video>__<start>-<end>"),
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("video_id", STR, "the source video"),
    _f("stream", STR, "annotation stream (sound, narration, activity, object_track, recipe_step)"),
    _f("row_id", STR, "the annotation row's id"),
    _f("label", STR, "the row's text label"),
    _f("start_s", FLOAT, "start, seconds from the video start"),
    _f("stop_s", FLOAT, "stop, seconds from the video start"),
    _f("start_clipped_s", FLOAT, "start clipped to the window"),
    _f("stop_clipped_s", FLOAT, "stop clipped to the window"),
    _f("in_window", BOOL, "does the row lie in the clip's window"),
    _f("description", STR, "EPIC-SOUNDS free-text description"),
    _f("sound_class", STR, "EPIC-SOUNDS class"),
    _f("class_id", INT, "the class's numeric id"),
    _f("categorised", BOOL, "is the sound segment in a class"),
    _f("narration", STR, "the narration text"),
    _f("verb", STR, "the narration's verb"),
    _f("verb_class", INT, "EPIC-KITCHENS verb class"),
    _f("noun", STR, "the narration's main noun"),
    _f("noun_class", INT, "EPIC-KITCHENS noun class"),
    _f("all_nouns", STRS, "every noun of the narration"),
    _f("all_noun_classes", INTS, "the classes of those nouns"),
    _f("labelled", BOOL, "has the narration a verb and noun class"),
    _f("recipe_id", STR, "HD-EPIC recipe id"),
    _f("recipe_key", STR, "recipe key (participant/recipe)"),
    _f("step_id", STR, "recipe step id"),
    _f("step_number", INT, "the step's number in its recipe"),
    _f("raw_name", STR, "object name as annotated"),
    _f("object_name", STR, "object name shown (instance suffixes removed, typos fixed)"),
    _f("association_id", STR, "HD-EPIC object association id"),
    _f("source_file", STR, "the upstream file the row was read from"),
    _f("source_row", STR, "its row (line or index) in that file"),
])

CLIP_MEDIA = pa.schema([
    _f("clip_key", STR, "the clip (window): <dataset>__<video>__<start>-<end>"),
    _f("status", STR, "ok, error or skipped"),
    _f("reason", STR, "why the media are missing"),
    _f("source", STR, "the source video file"),
    _f("clip_path", STR, "the cut clip's file"),
    _f("silenced_path", STR, "the silenced copy's file"),
    _f("clip_sha256", STR, "sha256 of the cut clip"),
    _f("silenced_sha256", STR, "sha256 of the silenced copy"),
    _f("duration_s", FLOAT, "duration in seconds"),
    _f("silenced_duration_s", FLOAT, "duration of the silenced copy"),
])

ITEMS = pa.schema([
    _f("item_id", STR, "<question id>/<format>"),
    _f("question_id", STR, "the base question"),
    _f("clip_key", STR, "the clip (window): <dataset>__<video>__<start>-<end>"),
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("video_id", STR, "the source video"),
    _f("subtype", STR, "question subtype"),
    _f("level", STR, "L1-L4, from the subtype's evidence scope"),
    _f("distractor_strategy", STR, "how the wrong options were drawn"),
    _f("format", STR, "answer format of the item"),
    _f("base_format", STR, "the format before its stand-alone variant"),
    _f("prompt", STR, "the prompt text sent"),
    _f("expected", STR, "the expected answer"),
    _f("answer_type", STR, "entity, sound, action, purpose, activity, recipe_step or number"),
    _f("chance", FLOAT, "chance accuracy"),
    _f("options", STRS, "option texts in the order shown"),
    _f("option_values", STRS, "the options' candidate values"),
    _f("option_truth", BOOLS, "is each option true"),
    _f("candidate_synonyms", STR, "JSON: other names of each option, for open answers"),
    _f("statements", STR, "JSON: the statements of a statements item"),
    _f("statement_value", STR, "candidate value the statement names"),
    _f("statement_true", BOOL, "is the statement true"),
])

JUDGE_AUDIT = pa.schema([
    _f("responder", STR, "offline responder or model family that answered"),
    _f("model", STR, "model name (empty for offline responders)"),
    _f("n", INT, "rows counted"),
    _f("judge_rule_agreement", FLOAT, "share where the judge agrees with the rules"),
    _f("judge_self_agreement", FLOAT, "share where the judge agrees with itself on the options reordered"),
    _f("judge_none_rate", FLOAT, "share of judge replies without a choice"),
    _f("judge_errors", INT, "judge calls that failed"),
    _f("note", STR, "a note for readers"),
    _f("judge_provider", STR, "provider of the judge model"),
    _f("judge_model", STR, "the judge model"),
    _f("judge_endpoint", STR, "the judge's base URL"),
    _f("self_judged", BOOL, "did the model judge its own replies (asked for explicitly: --judge self)"),
])

NARRATIONS = pa.schema([
    _f("narration_id", STR, "narration id"),
    _f("participant_id", STR, "the participant who recorded the video"),
    _f("video_id", STR, "the source video"),
    _f("start_s", FLOAT, "start, seconds from the video start"),
    _f("stop_s", FLOAT, "stop, seconds from the video start"),
    _f("narration", STR, "the narration text"),
    _f("verb", STR, "the narration's verb"),
    _f("verb_class", INT, "EPIC-KITCHENS verb class"),
    _f("noun", STR, "the narration's main noun"),
    _f("noun_class", INT, "EPIC-KITCHENS noun class"),
    _f("all_nouns", STRS, "every noun of the narration"),
    _f("all_noun_classes", INTS, "the classes of those nouns"),
    _f("labelled", BOOL, "has the narration a verb and noun class"),
    _f("label_source", STR, "where the narration's labels come from"),
    _f("source_file", STR, "the upstream file the row was read from"),
    _f("source_row", INT, "its row (line or index) in that file"),
])

OBJECT_TRACKS = pa.schema([
    _f("track_id", STR, "object track id"),
    _f("association_id", STR, "HD-EPIC object association id"),
    _f("video_id", STR, "the source video"),
    _f("raw_name", STR, "object name as annotated"),
    _f("object_name", STR, "object name shown (instance suffixes removed, typos fixed)"),
    _f("start_s", FLOAT, "start, seconds from the video start"),
    _f("stop_s", FLOAT, "stop, seconds from the video start"),
    _f("n_masks", INT, "count of masks"),
    _f("source_file", STR, "the upstream file the row was read from"),
    _f("source_row", STR, "its row (line or index) in that file"),
])

OVER_MARKING = pa.schema([
    _f("responder", STR, "offline responder or model family that answered"),
    _f("model", STR, "model name (empty for offline responders)"),
    _f("condition", STR, "clip, no_clip or silenced"),
    _f("n_wrong", INT, "count of wrong"),
    _f("n_wrong_over_marked", INT, "count of wrong over marked"),
    _f("share", FLOAT, "share of wrong answers over-marked"),
])

PAIRED_COMPARISONS = pa.schema([
    _f("responder", STR, "offline responder or model family that answered"),
    _f("model", STR, "model name (empty for offline responders)"),
    _f("level", STR, "L1-L4, from the subtype's evidence scope"),
    _f("kind", STR, "kind of row"),
    _f("condition", STR, "clip, no_clip or silenced"),
    _f("a", STR, "first side of the pair"),
    _f("b", STR, "second side of the pair"),
    _f("n_pairs", INT, "count of pairs"),
    _f("both", INT, "pairs both sides answered correctly"),
    _f("only_a", INT, "pairs only a answered correctly"),
    _f("only_b", INT, "pairs only b answered correctly"),
    _f("neither", INT, "pairs neither side answered correctly"),
    _f("mcnemar_p", FLOAT, "precision of mcnemar"),
    _f("diff", FLOAT, "accuracy of a minus accuracy of b"),
    _f("diff_ci_low", FLOAT, "lower 95 % bound of diff"),
    _f("diff_ci_high", FLOAT, "upper 95 % bound of diff"),
    _f("accuracy_a", FLOAT, "accuracy a"),
    _f("accuracy_b", FLOAT, "accuracy b"),
    _f("chance_corrected_a", FLOAT, "chance-corrected accuracy a"),
    _f("chance_corrected_b", FLOAT, "chance-corrected accuracy b"),
    _f("mcnemar_p_unclustered", FLOAT, "McNemar p without clustering by clip"),
])

RECIPE_STEPS = pa.schema([
    _f("recipe_key", STR, "recipe key (participant/recipe)"),
    _f("recipe_name", STR, "the recipe's name"),
    _f("step_id", STR, "recipe step id"),
    _f("step_text", STR, "the recipe step's text"),
    _f("step_number", INT, "the step's number in its recipe"),
    _f("video_id", STR, "the source video"),
    _f("start_s", FLOAT, "start, seconds from the video start"),
    _f("stop_s", FLOAT, "stop, seconds from the video start"),
    _f("span_index", INT, "which span of the step"),
    _f("source_file", STR, "the upstream file the row was read from"),
    _f("source_row", STR, "its row (line or index) in that file"),
])

RESPONSES = pa.schema([
    _f("item_id", STR, "<question id>/<format>"),
    _f("question_id", STR, "the base question"),
    _f("clip_key", STR, "the clip (window): <dataset>__<video>__<start>-<end>"),
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("level", STR, "L1-L4, from the subtype's evidence scope"),
    _f("subtype", STR, "question subtype"),
    _f("distractor_strategy", STR, "how the wrong options were drawn"),
    _f("format", STR, "answer format of the item"),
    _f("base_format", STR, "the format before its stand-alone variant"),
    _f("condition", STR, "clip, no_clip or silenced"),
    _f("responder", STR, "offline responder or model family that answered"),
    _f("model", STR, "model name (empty for offline responders)"),
    _f("reply", STR, "the raw reply text"),
    _f("status", STR, "ok, error or skipped"),
    _f("prompt_tokens", INT, "input tokens billed"),
    _f("output_tokens", INT, "output tokens billed"),
    _f("latency_s", FLOAT, "seconds the call took"),
    _f("cache_key", STR, "the reply cache's key"),
    _f("cached", BOOL, "was the reply read from the cache"),
    _f("error", STR, "the error message, when the call failed"),
    _f("media_sha256", STR, "sha256 of the media sent"),
    _f("provider", STR, "the model provider"),
    _f("endpoint", STR, "the provider's base URL (empty for offline responders)"),
    _f("route", STR, "how the call was sent (direct, batch, offline)"),
    _f("cached_tokens", INT, "input tokens served from the provider's cache"),
    _f("model_config", STR, "the model's resolved settings (models file or provider defaults) as JSON; never a key"),
])

SCORES = pa.schema([
    _f("responder", STR, "offline responder or model family that answered"),
    _f("model", STR, "model name (empty for offline responders)"),
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("level", STR, "L1-L4, from the subtype's evidence scope"),
    _f("subtype", STR, "question subtype"),
    _f("distractor_strategy", STR, "how the wrong options were drawn"),
    _f("format", STR, "answer format of the item"),
    _f("condition", STR, "clip, no_clip or silenced"),
    _f("n", INT, "rows counted"),
    _f("correct", INT, "is the parsed answer the expected one"),
    _f("accuracy", FLOAT, "share correct"),
    _f("chance", FLOAT, "chance accuracy"),
    _f("chance_corrected", FLOAT, "(accuracy - chance) / (1 - chance)"),
    _f("ci_low", FLOAT, "lower end of the clip-clustered 95 % bootstrap interval"),
    _f("ci_high", FLOAT, "upper end of that interval"),
    _f("accuracy_ci_low", FLOAT, "lower 95 % bound of accuracy"),
    _f("accuracy_ci_high", FLOAT, "upper 95 % bound of accuracy"),
    _f("accuracy_strict", FLOAT, "accuracy strict"),
    _f("chance_corrected_strict", FLOAT, "chance-corrected accuracy strict"),
    _f("n_undecided", INT, "count of undecided"),
    _f("n_unparsed", INT, "count of unparsed"),
    _f("n_skipped", INT, "count of skipped"),
    _f("n_error", INT, "count of error"),
    _f("n_judge", INT, "count of judge"),
    _f("n_clips", INT, "count of clips"),
    _f("n_self_judged", INT, "count of verdicts the model judged itself (--judge self)"),
])

SHORTCUT_AUDIT = pa.schema([
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("subtype", STR, "question subtype"),
    _f("level", STR, "L1-L4, from the subtype's evidence scope"),
    _f("distractor_strategy", STR, "how the wrong options were drawn"),
    _f("responder", STR, "offline responder or model family that answered"),
    _f("model", STR, "model name (empty for offline responders)"),
    _f("n", INT, "rows counted"),
    _f("singles_out_key", FLOAT, "share where the presence oracle singles out the key"),
    _f("only_absent_give_away", FLOAT, "share where only an absent option gives the key away"),
    _f("presence_oracle_rate", FLOAT, "accuracy of the presence oracle"),
    _f("chance", FLOAT, "chance accuracy"),
    _f("accuracy_clip", FLOAT, "accuracy clip"),
    _f("accuracy_no_clip", FLOAT, "accuracy no clip"),
    _f("accuracy_silenced", FLOAT, "accuracy silenced"),
    _f("blind_gap", FLOAT, "accuracy under clip minus under no_clip"),
    _f("silenced_gap", FLOAT, "accuracy under clip minus under silenced"),
    _f("prior_n_mc", INT, "multiple-choice items judged by the priors"),
    _f("anti_prior_rate_mc", FLOAT, "accuracy of picking the least frequent option (multiple choice)"),
    _f("anti_prior_ci_low_mc", FLOAT, "lower 95 % bound of the anti-prior rate (multiple choice)"),
    _f("anti_prior_ci_high_mc", FLOAT, "upper 95 % bound of the anti-prior rate (multiple choice)"),
    _f("blind_rate_mc", FLOAT, "accuracy of picking the most frequent option (multiple choice)"),
    _f("blind_ci_low_mc", FLOAT, "lower 95 % bound of the blind rate (multiple choice)"),
    _f("blind_ci_high_mc", FLOAT, "upper 95 % bound of the blind rate (multiple choice)"),
    _f("prior_n_yes_no", INT, "yes/no items judged by the priors"),
    _f("anti_prior_rate_yes_no", FLOAT, "accuracy of the least-frequent prior (yes/no)"),
    _f("anti_prior_ci_low_yes_no", FLOAT, "lower 95 % bound of the anti-prior rate (yes/no)"),
    _f("anti_prior_ci_high_yes_no", FLOAT, "upper 95 % bound of the anti-prior rate (yes/no)"),
    _f("blind_rate_yes_no", FLOAT, "accuracy of the most-frequent prior (yes/no)"),
    _f("blind_ci_low_yes_no", FLOAT, "lower 95 % bound of the blind rate (yes/no)"),
    _f("blind_ci_high_yes_no", FLOAT, "upper 95 % bound of the blind rate (yes/no)"),
])

SOUNDS = pa.schema([
    _f("annotation_id", STR, "EPIC-SOUNDS annotation id"),
    _f("participant_id", STR, "the participant who recorded the video"),
    _f("video_id", STR, "the source video"),
    _f("start_s", FLOAT, "start, seconds from the video start"),
    _f("stop_s", FLOAT, "stop, seconds from the video start"),
    _f("description", STR, "EPIC-SOUNDS free-text description"),
    _f("sound_class", STR, "EPIC-SOUNDS class"),
    _f("class_id", INT, "the class's numeric id"),
    _f("categorised", BOOL, "is the sound segment in a class"),
    _f("source_file", STR, "the upstream file the row was read from"),
    _f("source_row", INT, "its row (line or index) in that file"),
])

VERDICTS = pa.schema([
    _f("item_id", STR, "<question id>/<format>"),
    _f("question_id", STR, "the base question"),
    _f("clip_key", STR, "the clip (window): <dataset>__<video>__<start>-<end>"),
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("level", STR, "L1-L4, from the subtype's evidence scope"),
    _f("subtype", STR, "question subtype"),
    _f("distractor_strategy", STR, "how the wrong options were drawn"),
    _f("format", STR, "answer format of the item"),
    _f("base_format", STR, "the format before its stand-alone variant"),
    _f("condition", STR, "clip, no_clip or silenced"),
    _f("responder", STR, "offline responder or model family that answered"),
    _f("model", STR, "model name (empty for offline responders)"),
    _f("reply", STR, "the raw reply text"),
    _f("parsed", STR, "the answer parsed from the reply"),
    _f("expected", STR, "the expected answer"),
    _f("correct", BOOL, "is the parsed answer the expected one"),
    _f("scored_by", STR, "rule, judge or none"),
    _f("note", STR, "a note for readers"),
    _f("n_marked_true", INT, "count of marked true"),
    _f("judge_raw", STR, "the judge's raw reply"),
    _f("chance", FLOAT, "chance accuracy"),
    _f("provider", STR, "the model provider"),
    _f("endpoint", STR, "the provider's base URL (empty for offline responders)"),
    _f("judge_provider", STR, "provider of the judge model"),
    _f("judge_model", STR, "the judge model"),
    _f("judge_endpoint", STR, "the judge's base URL"),
    _f("self_judged", BOOL, "was the verdict's judge the model that replied"),
])

VIDEOS = pa.schema([
    _f("video_id", STR, "the source video"),
    _f("duration_s", FLOAT, "duration in seconds"),
    _f("fps", FLOAT, "frames per second"),
    _f("source_file", STR, "the upstream file the row was read from"),
])

VOCABULARY = pa.schema([
    _f("vocabulary", STR, "which vocabulary (verbs, nouns, sounds)"),
    _f("kind", STR, "kind of row"),
    _f("class_id", INT, "the class's numeric id"),
    _f("key", STR, "vocabulary key"),
    _f("instances", STRS, "the vocabulary entry's instance names"),
    _f("category", STR, "vocabulary category"),
    _f("source_file", STR, "the upstream file the row was read from"),
])


# The per-clip partial sums the cross-clip tables are combined from (scoring/metrics/partials.py).

SCORE_PARTIALS = pa.schema([
    _f("responder", STR, "offline responder or model family that answered"),
    _f("model", STR, "model name (empty for offline responders)"),
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("level", STR, "L1-L4 (or '*' for the sum over levels in pair_partials)"),
    _f("subtype", STR, "question subtype"),
    _f("distractor_strategy", STR, "how the wrong options were drawn"),
    _f("format", STR, "answer format"),
    _f("condition", STR, "clip, no_clip or silenced ('*' for condition pairs)"),
    _f("clip_key", STR, "the clip the partial sums belong to"),
    _f("chance", FLOAT, "the items' chance accuracy (one row per distinct chance)"),
    _f("n", INT, "verdicts counted (rule or judge)"),
    _f("correct", INT, "of them correct"),
    _f("n_undecided", INT, "undecided verdicts"),
    _f("correct_undecided", INT, "undecided verdicts whose reply holds the key (strict scores)"),
    _f("n_unparsed", INT, "unparsed verdicts"),
    _f("n_skipped", INT, "skipped responses"),
    _f("n_error", INT, "failed calls"),
    _f("n_judge", INT, "verdicts the judge decided"),
    _f("n_rule_wrong_4b", INT, "wrong option-judgement verdicts decided by rule"),
    _f("n_over_marked_4b", INT, "of them with more than one option marked true"),
    _f("n_self_judged", INT, "verdicts the model judged itself (--judge self)"),
])

PAIR_PARTIALS = pa.schema([
    _f("responder", STR, "offline responder or model family that answered"),
    _f("model", STR, "model name (empty for offline responders)"),
    _f("level", STR, "L1-L4 (or '*' for the sum over levels in pair_partials)"),
    _f("kind", STR, "format (two formats of one question) or condition (clip against another condition)"),
    _f("condition", STR, "clip, no_clip or silenced ('*' for condition pairs)"),
    _f("a", STR, "first of the pair"),
    _f("b", STR, "second of the pair"),
    _f("clip_key", STR, "the clip the partial sums belong to"),
    _f("n_pairs", INT, "pairs counted"),
    _f("both", INT, "pairs right in both"),
    _f("only_a", INT, "right only in a"),
    _f("only_b", INT, "right only in b"),
    _f("neither", INT, "wrong in both"),
    _f("chance_a_sum", FLOAT, "sum of a's chance over the pairs"),
    _f("chance_b_sum", FLOAT, "sum of b's chance over the pairs"),
])

PRIOR_PARTIALS = pa.schema([
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("subtype", STR, "question subtype"),
    _f("level", STR, "L1-L4 (or '*' for the sum over levels in pair_partials)"),
    _f("distractor_strategy", STR, "how the wrong options were drawn"),
    _f("format", STR, "answer format"),
    _f("prior", STR, "the text-only prior (blind or anti-prior)"),
    _f("clip_key", STR, "the clip the partial sums belong to"),
    _f("chance", FLOAT, "the items' chance accuracy (one row per distinct chance)"),
    _f("credit", FLOAT, "the prior's expected credit per item"),
    _f("n", INT, "verdicts counted (rule or judge)"),
])

PRESENCE_PARTIALS = pa.schema([
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("subtype", STR, "question subtype"),
    _f("level", STR, "L1-L4 (or '*' for the sum over levels in pair_partials)"),
    _f("distractor_strategy", STR, "how the wrong options were drawn"),
    _f("clip_key", STR, "the clip the partial sums belong to"),
    _f("n", INT, "verdicts counted (rule or judge)"),
    _f("correct", INT, "of them correct"),
    _f("absent_give_away", INT, "questions whose absent-from-clip options give the key away"),
    _f("expected", FLOAT, "sum of the presence oracle's expected rate"),
])

JUDGE_PARTIALS = pa.schema([
    _f("responder", STR, "offline responder or model family that answered"),
    _f("model", STR, "model name (empty for offline responders)"),
    _f("item_id", STR, "the item"),
    _f("condition", STR, "clip, no_clip or silenced ('*' for condition pairs)"),
    _f("format", STR, "answer format"),
    _f("base_format", STR, "the format the item renders"),
    _f("scored_by", STR, "rule, judge, unparsed or undecided"),
    _f("reply", STR, "the reply"),
    _f("parsed", STR, "the answer parsed from the reply"),
    _f("options", STR, "the options as shown (JSON)"),
    _f("prompt", STR, "the prompt sent"),
    _f("sample_key", INT, "the seeded key the judge audit samples by (smallest first)"),
    _f("clip_key", STR, "the clip the partial sums belong to"),
])


# HD-EPIC's VQA benchmark as a source (imports/vqa_source.py, defs/hd_epic_vqa): its import, and per video the
# clips' own tables (responses, verdicts and partial results have the clips' columns).

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


SCHEMAS: dict[str, pa.Schema] = {
    "score_partials": SCORE_PARTIALS,
    "pair_partials": PAIR_PARTIALS,
    "prior_partials": PRIOR_PARTIALS,
    "presence_partials": PRESENCE_PARTIALS,
    "judge_partials": JUDGE_PARTIALS,
    "questions": QUESTIONS,
    "distractor_pools": DISTRACTOR_POOLS,
    "activities": ACTIVITIES,
    "caption_alignments": CAPTION_ALIGNMENTS,
    "caption_references": CAPTION_REFERENCES,
    "caption_response_scores": CAPTION_RESPONSE_SCORES,
    "caption_responses": CAPTION_RESPONSES,
    "caption_scores": CAPTION_SCORES,
    "caption_threshold_sensitivity": CAPTION_THRESHOLD_SENSITIVITY,
    "clip_annotations": CLIP_ANNOTATIONS,
    "clip_media": CLIP_MEDIA,
    "items": ITEMS,
    "judge_audit": JUDGE_AUDIT,
    "narrations": NARRATIONS,
    "object_tracks": OBJECT_TRACKS,
    "over_marking": OVER_MARKING,
    "paired_comparisons": PAIRED_COMPARISONS,
    "recipe_steps": RECIPE_STEPS,
    "responses": RESPONSES,
    "scores": SCORES,
    "shortcut_audit": SHORTCUT_AUDIT,
    "sounds": SOUNDS,
    "verdicts": VERDICTS,
    "videos": VIDEOS,
    "vocabulary": VOCABULARY,
    "hd_epic_vqa_questions": HD_EPIC_VQA_QUESTIONS,
    "hd_epic_vqa_all_items": HD_EPIC_VQA_ITEMS,
    "hd_epic_vqa_items": HD_EPIC_VQA_ITEMS,
    "hd_epic_vqa_import_report": HD_EPIC_VQA_IMPORT_REPORT,
    "hd_epic_vqa_skipped": HD_EPIC_VQA_SKIPPED,
    "hd_epic_vqa_responses": RESPONSES,
    "hd_epic_vqa_verdicts": VERDICTS,
    "hd_epic_vqa_score_partials": SCORE_PARTIALS,
    "hd_epic_vqa_pair_partials": PAIR_PARTIALS,
}


def columns(name: str) -> list[str]:
    """The declared columns of table ``name``, in order."""
    return SCHEMAS[name].names


def doc(name: str) -> dict[str, str]:
    """The documentation of each column of table ``name``."""
    return {f.name: f.metadata[b"doc"].decode() for f in SCHEMAS[name]}


def from_columns(name: str, data: dict[str, list]) -> pa.Table:
    """An Arrow table of table ``name`` from its columns' values (Python lists, one per declared column)."""
    return conform(name, data)


def conform(name: str, data: pd.DataFrame | pa.Table | dict) -> pa.Table:
    """``data`` (a frame, an Arrow table or a dict of columns) as an Arrow table of ``name``'s declared schema:
    every declared column, in order, cast to its type (a frame keeps its pandas metadata, so reading the file
    gives back its dtypes). A missing or undeclared column, or a value that is not of its column's type,
    raises :class:`SchemaError` naming the table and the column. A table not declared here is converted as
    inferred (a frame without its index)."""
    schema = SCHEMAS.get(name)
    if isinstance(data, dict):
        names = list(data)
    else:
        names = list(data.column_names) if isinstance(data, pa.Table) else [str(c) for c in data.columns]
    if schema is None:
        if isinstance(data, pa.Table):
            return data
        return pa.Table.from_pandas(pd.DataFrame(data) if isinstance(data, dict) else data, preserve_index=False)
    missing = [c for c in schema.names if c not in names]
    extra = [c for c in names if c not in schema.names]
    if missing or extra:
        said = "; ".join(p for p in (f"missing column(s) {', '.join(missing)}" if missing else "",
                                     f"undeclared column(s) {', '.join(extra)}" if extra else "") if p)
        raise SchemaError(f"table {name}: {said} (declared in epic_levels_pipeline/schemas.py: "
                          f"{', '.join(schema.names)})")
    if isinstance(data, pd.DataFrame):
        try:
            table = pa.Table.from_pandas(data, schema=schema, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError):
            table = None  # (the column that does not fit is named below)
        if table is not None:
            _check_nulls(name, table)
            return table
    arrays = [_column(name, field, data.column(field.name) if isinstance(data, pa.Table) else data[field.name])
              for field in schema]
    table = pa.Table.from_arrays(arrays, schema=schema)
    _check_nulls(name, table)
    return table


def _column(name: str, field: pa.Field, values) -> pa.Array | pa.ChunkedArray:
    try:
        if isinstance(values, (pa.Array, pa.ChunkedArray)):
            return values.cast(field.type)
        return pa.array(values, type=field.type, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError) as e:
        raise SchemaError(f"table {name}, column {field.name}: values are not {field.type} ({e})") from e


def _check_nulls(name: str, table: pa.Table) -> None:
    for field, column in zip(table.schema, table.columns):
        if not field.nullable and column.null_count:
            raise SchemaError(f"table {name}, column {field.name}: {column.null_count} null value(s) in a column "
                              "declared not null")
