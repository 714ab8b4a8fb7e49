"""The caption track's tables (``captions/track.py``): references, responses, alignments, the responses' scores,
the scores, each clip's share of the tIoU threshold sweep and the sweep."""

from __future__ import annotations

import pyarrow as pa

from .fields import BOOL, FLOAT, IDENTITY, INT, RESPONDER, STR, STRS, _f

SEMANTIC_KINDS = ("event", "action", "reference")  # the units the semantic layer scores (captions/semantic.py)


CAPTION_ALIGNMENTS = pa.schema([
    _f("clip_key", STR, "the clip (window): <dataset>__<video>__<start>-<end>"),
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("condition", STR, "clip, no_clip or silenced"),
    *RESPONDER,
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
    _f("semantic_precision", FLOAT, "semantic layer (greedy, aligned pairs): how much of the reply unit's description "
                                    "the reference supports, 1-5 (null: not scored)"),
    _f("semantic_recall", FLOAT, "semantic layer: how much of the reference unit's description the reply states, 1-5"),
    _f("judge_votes", STR, "JSON: every judge's label and semantic answers about the pair, when several judges are "
                           "asked"),
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
    *RESPONDER,
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
    *[_f(f"n_semantic_{k}", INT, f"aligned {k} pairs the semantic layer scored (greedy)") for k in SEMANTIC_KINDS],
    _f("n_semantic_unscored", INT, "aligned pairs the semantic judge could not score (failed, or could not tell)"),
    *[_f(f"semantic_{k}_{m}", FLOAT, f"semantic {'precision' if m == 'p' else 'recall'} of the aligned {k} pairs: "
                                     "mean 1-5 judge score (empty with no judge)")
      for k in SEMANTIC_KINDS for m in ("p", "r")],
])

CAPTION_JUDGE_PARTIALS = pa.schema([
    _f("clip_key", STR, "the clip (window): <dataset>__<video>__<start>-<end>"),
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("condition", STR, "clip, no_clip or silenced"),
    *RESPONDER,
    _f("judge", STR, "the judge whose answers alone made the value ('verdict': as scored)"),
    _f("metric", STR, "event/action/reference label F1, or a semantic metric"),
    _f("value", FLOAT, "the caption's metric under that judge"),
    _f("n", INT, "pairs behind a semantic value (1 for label F1)"),
])

CAPTION_JUDGE_VOTES = pa.schema([
    _f("track", STR, "caption_label (agree / disagree / none) or caption_semantic (a 1-5 score)"),
    _f("unit", STR, "what was judged: kind|reference text|reply text (|direction for semantic)"),
    _f("judge", STR, "the judge (NAME)"),
    _f("label", STR, "the judge's answer (null: its call failed)"),
    _f("clip_key", STR, "the clip the votes belong to"),
])

CAPTION_RESPONSES = pa.schema([
    _f("clip_key", STR, "the clip (window): <dataset>__<video>__<start>-<end>"),
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("condition", STR, "clip, no_clip or silenced"),
    *RESPONDER,
    _f("prompt", STR, "the prompt text sent"),
    _f("reply", STR, "the raw reply text"),
    _f("status", STR, "ok, error or skipped"),
    _f("error", STR, "the error message, when the call failed"),
    _f("cache_key", STR, "the reply cache's key"),
    _f("cached", BOOL, "was the reply read from the cache"),
    _f("prompt_tokens", INT, "input tokens billed"),
    _f("output_tokens", INT, "output tokens billed"),
    *IDENTITY,
])

CAPTION_SCORES = pa.schema([
    *RESPONDER,
    _f("condition", STR, "clip, no_clip or silenced"),
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("matcher", STR, "greedy or optimal unit matching"),
    _f("metric", STR, "metric name"),
    _f("n", INT, "rows counted"),
    _f("value", FLOAT, "the metric's value"),
])

CAPTION_THRESHOLD_PARTIALS = pa.schema([
    _f("clip_key", STR, "the clip (window): <dataset>__<video>__<start>-<end>"),
    _f("unit", STR, "event or action: the unit whose tIoU threshold is swept"),
    _f("threshold", FLOAT, "tIoU threshold"),
    _f("is_default", BOOL, "is this the default threshold"),
    _f("condition", STR, "clip, no_clip or silenced"),
    *RESPONDER,
    _f("event_f1", FLOAT, "F1 of event (greedy), at this setting"),
    _f("event_label_f1", FLOAT, "F1 of event label (greedy), at this setting"),
    _f("action_f1", FLOAT, "F1 of action (greedy), at this setting"),
    _f("action_label_f1", FLOAT, "F1 of action label (greedy), at this setting"),
    _f("reference_f1", FLOAT, "F1 of reference (greedy), at this setting"),
    _f("evsa_f1", FLOAT, "F1 of evsa (greedy), at this setting"),
    _f("ccc", FLOAT, "concordance correlation of counts, at this setting"),
])

CAPTION_THRESHOLD_SENSITIVITY = pa.schema([
    _f("unit", STR, "event or action"),
    _f("threshold", FLOAT, "tIoU threshold"),
    _f("is_default", BOOL, "is this the default threshold"),
    _f("condition", STR, "clip, no_clip or silenced"),
    _f("metric", STR, "metric name"),
    *RESPONDER,
    _f("value", FLOAT, "the metric's value"),
    _f("spearman_rho", FLOAT, "Spearman rho of the ranking against the default threshold's"),
    _f("n_ranked", INT, "count of ranked"),
])
