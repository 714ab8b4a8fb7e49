"""A clip's tables from its items to their verdicts: the cut media, the items, the responses and the verdicts."""

from __future__ import annotations

import pyarrow as pa

from .fields import BOOL, BOOLS, FLOAT, IDENTITY, INT, JUDGE, MEDIA_USED, PROVIDER, RESPONDER, STR, STRS, _f


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
    _f("audio_annotated", BOOL, "is the clip's audio annotated (every epic_sounds clip; another clip with sound rows, "
                                "e.g. HD-EPIC Sounds): the item is also asked under silenced"),
])

#: The item asked and under which condition: the first columns of a response and of its verdict.
ASKED = [
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
]

RESPONSES = pa.schema([
    *ASKED,
    *RESPONDER,
    _f("reply", STR, "the raw reply text"),
    _f("status", STR, "ok, error or skipped"),
    _f("prompt_tokens", INT, "input tokens billed"),
    _f("output_tokens", INT, "output tokens billed"),
    _f("latency_s", FLOAT, "seconds the call took"),
    _f("cache_key", STR, "the reply cache's key"),
    _f("cached", BOOL, "was the reply read from the cache"),
    _f("error", STR, "the error message, when the call failed"),
    _f("media_sha256", STR, "sha256 of the media sent"),
    *PROVIDER,
    _f("route", STR, "how the call was sent (direct, batch, offline)"),
    _f("cached_tokens", INT, "input tokens served from the provider's cache"),
    _f("model_config", STR, "the model's resolved settings (models file or provider defaults) as JSON; never a key"),
    *IDENTITY,
    *MEDIA_USED,
])

VERDICTS = pa.schema([
    *ASKED,
    *RESPONDER,
    _f("reply", STR, "the raw reply text"),
    _f("parsed", STR, "the answer parsed from the reply"),
    _f("expected", STR, "the expected answer"),
    _f("correct", BOOL, "is the parsed answer the expected one"),
    _f("scored_by", STR, "rule, judge, unparsed, undecided, judge_failed (the judge failed: never wrong), skipped "
                         "or error"),
    _f("note", STR, "a note for readers"),
    _f("n_marked_true", INT, "count of marked true"),
    _f("judge_raw", STR, "the judge's raw reply"),
    _f("chance", FLOAT, "chance accuracy"),
    *PROVIDER,
    *JUDGE,
    _f("self_judged", BOOL, "was the verdict's judge the model that replied"),
    _f("judge_votes", STR, "JSON: every judge asked about the reply (judge NAME, outcome chose/none/failed, option "
                           "index, correct); empty when no judge was asked"),
    *IDENTITY,
    *MEDIA_USED,
])

SPEND = pa.schema([
    _f("run_id", STR, "the Dagster run that spent it; '*': every run's, summed"),
    _f("recorded_at", STR, "when its first step ended (UTC); for '*' the latest run's"),
    _f("purpose", STR, "answers, captions, judge, judge_audit or caption_judge: what the calls were for"),
    *RESPONDER,
    _f("provider", STR, "the model provider"),
    _f("served_model", STR, "the name the model's server answers to"),
    _f("endpoint", STR, "the provider's base URL"),
    _f("requests", INT, "requests made (identical requests included)"),
    _f("cached", INT, "requests served from the call cache (nothing spent)"),
    _f("calls", INT, "distinct requests sent to the server"),
    _f("attempts", INT, "invocations of the server, retries included"),
    _f("failed", INT, "distinct requests that ended in an error"),
    _f("prompt_tokens", INT, "input tokens the server reported for the calls sent"),
    _f("output_tokens", INT, "output tokens the server reported for the calls sent"),
    _f("cached_tokens", INT, "input tokens the server had cached (context caching)"),
    _f("wall_s", FLOAT, "seconds the calls took"),
    _f("cost_usd", FLOAT, "USD at the pricing table (input and output price per 1M tokens); empty: unknown, as for "
                          "every local server"),
])

MEDIA_INTEGRITY = pa.schema([
    *RESPONDER,
    _f("served_model", STR, "the name the model's server answers to"),
    _f("clip_key", STR, "the clip (window): <dataset>__<video>__<start>-<end>"),
    *MEDIA_USED,
])
