"""The warehouse tables' declared Arrow schemas (:data:`SCHEMAS`, every column documented), by table family in the
submodules. Tables are written through :func:`conform`: cast to the declared schema, a missing column or a value of
another type failing with the table and column named."""

from .annotations import (ACTIVITIES, CLIP_ANNOTATIONS, NARRATIONS, OBJECT_TRACKS, RECIPE_STEPS, SOUNDS, VIDEOS,
                          VOCABULARY)
from .bank import DISTRACTOR_POOLS, QUESTIONS
from .captions import (CAPTION_ALIGNMENTS, CAPTION_REFERENCES, CAPTION_RESPONSE_SCORES, CAPTION_RESPONSES,
                       CAPTION_SCORES, CAPTION_THRESHOLD_PARTIALS, CAPTION_THRESHOLD_SENSITIVITY)
from .fields import BOOL, BOOLS, FLOAT, INT, INTS, STR, STRS
from .imports import HD_EPIC_VQA_IMPORT_REPORT, HD_EPIC_VQA_ITEMS, HD_EPIC_VQA_QUESTIONS, HD_EPIC_VQA_SKIPPED
from .partials import JUDGE_PARTIALS, PAIR_PARTIALS, PRESENCE_PARTIALS, PRIOR_PARTIALS, SCORE_PARTIALS
from .registry import SCHEMAS, SchemaError, columns, conform, doc, from_columns, from_rows
from .responses import CLIP_MEDIA, ITEMS, RESPONSES, VERDICTS
from .scores import JUDGE_AUDIT, OVER_MARKING, PAIRED_COMPARISONS, SCORES, SHORTCUT_AUDIT

__all__ = [
    "SCHEMAS", "SchemaError", "columns", "conform", "doc", "from_columns", "from_rows",
    "STR", "INT", "FLOAT", "BOOL", "STRS", "INTS", "BOOLS",
    "ACTIVITIES", "CAPTION_ALIGNMENTS", "CAPTION_REFERENCES", "CAPTION_RESPONSE_SCORES", "CAPTION_RESPONSES",
    "CAPTION_SCORES", "CAPTION_THRESHOLD_PARTIALS", "CAPTION_THRESHOLD_SENSITIVITY", "CLIP_ANNOTATIONS", "CLIP_MEDIA", "DISTRACTOR_POOLS",
    "HD_EPIC_VQA_IMPORT_REPORT", "HD_EPIC_VQA_ITEMS", "HD_EPIC_VQA_QUESTIONS", "HD_EPIC_VQA_SKIPPED", "ITEMS",
    "JUDGE_AUDIT", "JUDGE_PARTIALS", "NARRATIONS", "OBJECT_TRACKS", "OVER_MARKING", "PAIRED_COMPARISONS",
    "PAIR_PARTIALS", "PRESENCE_PARTIALS", "PRIOR_PARTIALS", "QUESTIONS", "RECIPE_STEPS", "RESPONSES", "SCORES",
    "SCORE_PARTIALS", "SHORTCUT_AUDIT", "SOUNDS", "VERDICTS", "VIDEOS", "VOCABULARY",
]
