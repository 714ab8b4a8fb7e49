"""The registry of the declared tables (:data:`SCHEMAS`: table name -> schema, the one place a table's schema is
looked up), and casting a table to its schema (:func:`conform`)."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

from .annotations import (ACTIVITIES, CLIP_ANNOTATIONS, NARRATIONS, OBJECT_TRACKS, RECIPE_STEPS, SOUNDS, VIDEOS,
                          VOCABULARY)
from .bank import DISTRACTOR_POOLS, QUESTIONS
from .captions import (CAPTION_ALIGNMENTS, CAPTION_JUDGE_PARTIALS, CAPTION_JUDGE_VOTES, CAPTION_REFERENCES,
                       CAPTION_RESPONSE_SCORES, CAPTION_RESPONSES, CAPTION_SCORES, CAPTION_THRESHOLD_PARTIALS, CAPTION_THRESHOLD_SENSITIVITY)
from .imports import (HD_EPIC_VQA_IMPORT_REPORT, HD_EPIC_VQA_ITEMS, HD_EPIC_VQA_QUESTIONS, HD_EPIC_VQA_SKIPPED,
                      VQA_OFFICIAL_PARTIALS, VQA_OFFICIAL_SCORES)
from .partials import (JUDGE_PARTIALS, JUDGE_VOTE_PARTIALS, PAIR_PARTIALS, PRESENCE_PARTIALS, PRIOR_PARTIALS,
                       SCORE_PARTIALS)
from .responses import CLIP_MEDIA, ITEMS, MEDIA_INTEGRITY, RESPONSES, SPEND, VERDICTS
from .scores import JUDGE_AGREEMENT, JUDGE_AUDIT, JUDGE_SWAP, OVER_MARKING, PAIRED_COMPARISONS, SCORES, SHORTCUT_AUDIT


class SchemaError(ValueError):
    """A table does not fit its declared schema (the message names the table and the column)."""


SCHEMAS: dict[str, pa.Schema] = {
    "score_partials": SCORE_PARTIALS,
    "pair_partials": PAIR_PARTIALS,
    "prior_partials": PRIOR_PARTIALS,
    "presence_partials": PRESENCE_PARTIALS,
    "judge_partials": JUDGE_PARTIALS,
    "judge_vote_partials": JUDGE_VOTE_PARTIALS,
    "judge_agreement": JUDGE_AGREEMENT,
    "judge_swap": JUDGE_SWAP,
    "questions": QUESTIONS,
    "distractor_pools": DISTRACTOR_POOLS,
    "activities": ACTIVITIES,
    "caption_alignments": CAPTION_ALIGNMENTS,
    "caption_judge_partials": CAPTION_JUDGE_PARTIALS,
    "caption_judge_votes": CAPTION_JUDGE_VOTES,
    "caption_references": CAPTION_REFERENCES,
    "caption_response_scores": CAPTION_RESPONSE_SCORES,
    "caption_responses": CAPTION_RESPONSES,
    "caption_scores": CAPTION_SCORES,
    "caption_threshold_partials": CAPTION_THRESHOLD_PARTIALS,
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
    "spend": SPEND,
    "media_integrity": MEDIA_INTEGRITY,
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
    "hd_epic_vqa_official_partials": VQA_OFFICIAL_PARTIALS,
    "vqa_official_scores": VQA_OFFICIAL_SCORES,
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


def from_rows(name: str, rows: list[tuple]) -> pa.Table:
    """An Arrow table of table ``name`` from its rows (tuples of the declared columns' values, in order): the
    values converted as :func:`conform` converts a dict of columns (the declared types, NaN as null), in one
    conversion for all columns (the rows as one struct array) rather than one per column. When a value does
    not fit, the columns go through :func:`conform`, which names the column."""
    schema = SCHEMAS[name]
    try:
        table = pa.Table.from_arrays(pa.array(rows, type=pa.struct(schema), from_pandas=True).flatten(), schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError):
        return conform(name, {c: [row[i] for row in rows] for i, c in enumerate(schema.names)})
    _check_nulls(name, table)
    return table


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
    declared = set(schema.names)
    given = set(names)
    missing = [c for c in schema.names if c not in given]
    extra = [c for c in names if c not in declared]
    if missing or extra:
        said = "; ".join(p for p in (f"missing column(s) {', '.join(missing)}" if missing else "",
                                     f"undeclared column(s) {', '.join(extra)}" if extra else "") if p)
        raise SchemaError(f"table {name}: {said} (declared in epic_levels_pipeline/schemas/: "
                          f"{', '.join(schema.names)})")
    if isinstance(data, pd.DataFrame):
        try:
            table = pa.Table.from_pandas(data, schema=schema, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError):
            table = None  # (the column that does not fit is named below)
        if table is not None:
            _check_nulls(name, table)
            return table
    elif isinstance(data, dict):  # lists of values: every column at once (the common case), as _column converts them
        try:
            table = pa.Table.from_arrays([pa.array(data[f.name], type=f.type, from_pandas=True) for f in schema],
                                         schema=schema)
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
    for i, field in enumerate(table.schema):  # (a column is read only when declared not null)
        if not field.nullable and table.column(i).null_count:
            raise SchemaError(f"table {name}, column {field.name}: {table.column(i).null_count} null value(s) in a "
                              "column declared not null")
