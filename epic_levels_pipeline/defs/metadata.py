"""Materialization metadata an auditor reads in the UI: row counts, column schema, small samples."""

from __future__ import annotations

import re

import dagster as dg
import pandas as pd

from ..schemas.registry import SCHEMAS
from .partitions import clip_keys

# Outside code spans, the characters Markdown would read as emphasis, links or HTML: escaped so that the UI shows
# a description as written ('*' roll-ups, <dataset>__<video> keys).
_CODE_SPAN = re.compile(r"(`[^`]*`)")
_ACTIVE = re.compile(r"([\\*_<>\[\]])")


def _dtype(series: pd.Series) -> str:
    kind = str(series.dtype)
    if kind == "object" and len(series.dropna()):
        first = series.dropna().iloc[0]
        if isinstance(first, (list, tuple)) or hasattr(first, "tolist"):
            return "list"
    return kind


def markdown_text(text: str | None) -> str | None:
    """``text`` escaped for the UI's Markdown, so it renders as written; code spans are kept as they are."""
    if not text:
        return text
    return "".join(part if part.startswith("`") else _ACTIVE.sub(r"\\\1", part) for part in _CODE_SPAN.split(text))


def declared_column_schema(table: str) -> dg.TableSchema | None:
    """The declared columns of warehouse table ``table`` (:data:`..schemas.registry.SCHEMAS`) with their types and
    descriptions, as the UI's Columns tab shows them; None for an asset that is not a declared table."""
    schema = SCHEMAS.get(table)
    if schema is None:
        return None
    return dg.TableSchema(columns=[
        dg.TableColumn(f.name, str(f.type), description=markdown_text(f.metadata[b"doc"].decode()),
                       constraints=dg.TableColumnConstraints(nullable=f.nullable))
        for f in schema])


def described(spec: dg.AssetSpec) -> dg.AssetSpec:
    """``spec`` with its description escaped for Markdown and, for a declared table, its column schema."""
    spec = spec.replace_attributes(description=markdown_text(spec.description))
    columns = declared_column_schema(spec.key.to_user_string())
    return spec.merge_attributes(metadata={SCHEMA: columns}) if columns is not None else spec


def markdown_table(frame: pd.DataFrame, max_rows: int = 20, max_width: int = 90) -> str:
    if frame is None or not len(frame):
        return "_(no rows)_"
    shown = frame.head(max_rows).copy()
    for column in shown.columns:
        shown[column] = shown[column].map(lambda v: (str(v)[: max_width - 1] + "…") if len(str(v)) > max_width else str(v))
    header = "| " + " | ".join(str(c) for c in shown.columns) + " |"
    rule = "|" + "|".join("---" for _ in shown.columns) + "|"
    body = ["| " + " | ".join(str(v).replace("|", "\\|").replace("\n", " ") for v in row) + " |"
            for row in shown.itertuples(index=False)]
    more = f"\n\n_{len(frame) - max_rows} more rows_" if len(frame) > max_rows else ""
    return "\n".join([header, rule, *body]) + more


def table_metadata(frame: pd.DataFrame, sample_columns: list[str] | None = None, sample_rows: int = 5) -> dict:
    schema = dg.TableSchema(columns=[dg.TableColumn(str(c), _dtype(frame[c])) for c in frame.columns])
    sample = frame[sample_columns] if sample_columns else frame
    return {
        "dagster/row_count": dg.MetadataValue.int(int(len(frame))),
        "dagster/column_schema": schema,
        "sample": dg.MetadataValue.md(markdown_table(sample, sample_rows)),
    }


def clip_table_metadata(frame: pd.DataFrame, sample_columns: list[str] | None = None, sample_rows: int = 5, *,
                        batch: bool, first: bool = True) -> dict:
    """``table_metadata`` of one clip's frame. In a batch only the row count is computed, and the column schema
    of the batch's first clip (``batch_metadata`` puts it in the batch's summary): samples of every clip of a
    batch would cost more than the step's work."""
    if not batch:
        return table_metadata(frame, sample_columns, sample_rows)
    meta = {"dagster/row_count": dg.MetadataValue.int(int(len(frame)))}
    if first:
        meta["dagster/column_schema"] = dg.TableSchema(
            columns=[dg.TableColumn(str(c), _dtype(frame[c])) for c in frame.columns])
    return meta


def counts_markdown(counts: dict, key: str = "reason", value: str = "count") -> str:
    if not counts:
        return "_(none)_"
    frame = pd.DataFrame(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])), columns=[key, value])
    return markdown_table(frame, max_rows=60, max_width=140)


SCHEMA = "dagster/column_schema"


def stored_last(keys: list[str]) -> str:
    """The clip partition whose materialization Dagster stores last of a batch's: it emits a step's events in
    the order of the output's partition subset, built as here."""
    from .partitions import clip_partitions

    return list(clip_partitions.empty_subset().with_partition_keys(keys).get_partition_keys())[-1]


# Assets whose every clip partition carries its own entries in any batch: the sensor reads each clip's
# ``content_hash`` from ``clip_annotations``' materialization, and ``clip_media``'s ``status`` and ``reason``
# say why a clip has no media (text, which the summary's ``rows_by_clip`` of counts does not hold).
OWN_ENTRIES_ALWAYS = frozenset({"clip_annotations", "clip_media"})
# Above this many partitions in the instance (of the step's dynamic partitions definition), the other assets'
# clips of a batch share the batch's output metadata (the summary's partition named) and only the summary
# partition gets its own entries: Dagster checks
# each ``add_asset_metadata(partition_key=…)`` call's key against every dynamic partition (one read of them
# all per call, ~22 ms at 5,799), which took 44 % of a full-dataset batch's time.
OWN_ENTRIES_MAX_PARTITIONS = 1000


def _partition_count(context) -> int:
    """How many partitions the step's dynamic partitions definition (clips, or an imported source's) holds."""
    partitions = context.assets_def.partitions_def
    if not isinstance(partitions, dg.DynamicPartitionsDefinition) or not partitions.name:
        return 0
    return len(context.instance.get_dynamic_partitions(partitions.name))


def batch_metadata(per_clip: dict[str, dict], context, asset_key: str | None = None) -> dict:
    """The metadata of a step's output for the clips of its run: a single clip's as it is. For a batch, the
    clip whose event Dagster stores last (the asset's latest materialization, named in the others'
    ``batch_summary``) gets the batch summary: ``rows_by_clip`` (each clip's row count and other counts), the
    column schema and the batch's totals (``batch_<count>``). Every other clip gets its own entries (row
    count, counts, status, hash: ``per_clip``) and ``clips_in_batch`` — while the instance holds at most
    ``OWN_ENTRIES_MAX_PARTITIONS`` clip partitions, and always for ``OWN_ENTRIES_ALWAYS``. Above that, the
    other clips carry only ``batch_summary`` and ``clips_in_batch`` (the returned output metadata, which
    Dagster copies onto every partition's event at no cost per clip); their counts are in ``rows_by_clip``.
    Otherwise nothing is repeated on every partition's event: the returned output metadata is empty."""
    if len(per_clip) == 1:
        return next(iter(per_clip.values()))

    def number(value):
        value = getattr(value, "value", value)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    keys = list(per_clip)
    last = stored_last(keys)
    schema = next((m[SCHEMA] for m in per_clip.values() if SCHEMA in m), None)
    counts = [k for k, v in per_clip[keys[0]].items() if number(v) is not None]
    rows = pd.DataFrame([{"clip": key, **{("rows" if k == "dagster/row_count" else k): number(m.get(k)) for k in counts}}
                         for key, m in per_clip.items()])
    name = asset_key or context.assets_def.key.to_user_string()
    own_entries = name in OWN_ENTRIES_ALWAYS or _partition_count(context) <= OWN_ENTRIES_MAX_PARTITIONS
    shared = {"clips_in_batch": dg.MetadataValue.int(len(keys)),
              "batch_summary": dg.MetadataValue.text(f"on partition {last}")}
    for key, meta in per_clip.items():
        if key != last and not own_entries:
            continue
        own = {k: v for k, v in meta.items() if k != SCHEMA}
        own["clips_in_batch"] = shared["clips_in_batch"]
        if key == last:
            own["rows_by_clip"] = dg.MetadataValue.md(markdown_table(rows, len(rows)))
            own.update({"batch_" + ("row_count" if k == "dagster/row_count" else k):
                        dg.MetadataValue.int(int(rows["rows" if k == "dagster/row_count" else k].sum())) for k in counts})
            if schema is not None:
                own[SCHEMA] = schema
        else:
            own["batch_summary"] = shared["batch_summary"]
        context.add_asset_metadata(own, asset_key=asset_key, partition_key=key)
    return {} if own_entries else shared


class ClipBatch:
    """The clips one per-clip step materializes (one partition, or a batch of consecutive ones): each output's
    table and metadata per clip, and the step's outputs with the batch's metadata (:func:`batch_metadata`).

    ``for key in clips`` visits the clips; :meth:`metadata` is :func:`clip_table_metadata` of one clip's frame
    (the batch's first clip of an output carries the column schema); :meth:`add` keeps a clip's table and
    metadata; :meth:`output` is the step's ``dg.Output`` of an output (``None``: a single asset's)."""

    def __init__(self, context, outputs: tuple[str | None, ...] = (None,)):
        self.context = context
        self.keys = clip_keys(context)
        self.batch = len(self.keys) > 1
        self.tables: dict = {name: {} for name in outputs}
        self.metas: dict = {name: {} for name in outputs}

    def __iter__(self):
        return iter(self.keys)

    def __len__(self) -> int:
        return len(self.keys)

    def metadata(self, frame: pd.DataFrame, sample_columns: list[str] | None = None, sample_rows: int = 5,
                 output: str | None = None) -> dict:
        return clip_table_metadata(frame, sample_columns, sample_rows, batch=self.batch, first=not self.metas[output])

    def add(self, key: str, table, meta: dict, output: str | None = None) -> None:
        self.tables[output][key] = table
        self.metas[output][key] = meta

    def output(self, output: str | None = None, extra: dict | None = None, **kwargs) -> dg.Output:
        meta = {**batch_metadata(self.metas[output], self.context, output), **(extra or {})}
        named = {"output_name": output} if output is not None else {}
        return dg.Output(self.tables[output], metadata=meta, **named, **kwargs)
