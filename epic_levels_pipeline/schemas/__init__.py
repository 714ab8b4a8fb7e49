"""The warehouse tables' declared Arrow schemas, with the documentation of every column.

One :class:`pyarrow.Schema` per table (:data:`SCHEMAS`), each field's ``doc`` in its metadata. The tables
are written through :func:`conform`: a frame or an Arrow table is cast to its table's schema (columns in the
declared order), and a missing column or a value of another type fails with an error naming the table and
the column. Tables not declared here are written as they are inferred.

The schemas live by table family: :mod:`.annotations` (the annotation tables and a clip's rows of them),
:mod:`.bank` (questions, distractor pools), :mod:`.responses` (clip media, items, responses, verdicts),
:mod:`.scores` (the cross-clip tables), :mod:`.partials` (the per-clip partial sums), :mod:`.captions` (the
caption track) and :mod:`.imports` (HD-EPIC's VQA benchmark), declared with :mod:`.fields`' types and shared
columns; :mod:`.registry` holds :data:`SCHEMAS` and :func:`conform`. Every name is importable from here.
"""

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
