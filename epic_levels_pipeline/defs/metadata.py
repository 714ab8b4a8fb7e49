"""Materialization metadata an auditor reads in the UI: row counts, column schema, small samples."""

from __future__ import annotations

import dagster as dg
import pandas as pd


def _dtype(series: pd.Series) -> str:
    kind = str(series.dtype)
    if kind == "object" and len(series.dropna()):
        first = series.dropna().iloc[0]
        if isinstance(first, (list, tuple)) or hasattr(first, "tolist"):
            return "list"
    return kind


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
    """``table_metadata`` of one clip's frame. In a batch only what ``batch_metadata`` keeps of it is computed:
    the row count, and the column schema of the batch's first clip (samples of every clip would be dropped)."""
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


def batch_metadata(per_clip: dict[str, dict]) -> dict:
    """One materialization's metadata for the clips of its step: a single clip's as it is; for a batch (the
    metadata is shared by every partition of the step) the clip count, the summed row count and other
    integer counts, and a table of each clip's row count. Steps of a batch build only those parts of each
    clip's metadata (``clip_table_metadata``, and their other entries only for a single clip)."""
    if len(per_clip) == 1:
        return next(iter(per_clip.values()))

    def number(value):
        value = getattr(value, "value", value)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    first = next(iter(per_clip.values()), {})
    sums = {k: sum(number(m.get(k)) or 0 for m in per_clip.values()) for k, v in first.items() if number(v) is not None}
    rows = pd.DataFrame([{"clip": key, "rows": number(m.get("dagster/row_count"))} for key, m in per_clip.items()])
    out = {k: dg.MetadataValue.int(int(v)) for k, v in sums.items()}
    out.update({"clips_in_batch": dg.MetadataValue.int(len(per_clip)),
                "rows_by_clip": dg.MetadataValue.md(markdown_table(rows, 60))})
    if "dagster/column_schema" in first:
        out["dagster/column_schema"] = first["dagster/column_schema"]
    return out
