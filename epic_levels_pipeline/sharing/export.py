"""The benchmark as a Hugging Face dataset folder (``epic-levels export --out DIR``): one config per format, one split
per dataset, read from the materialized ``items`` (never recomputed). ``prompt`` is exactly what the pipeline sends
and ``answer`` a reply the rules score correct; the same bank exports the same bytes (docs/design/sharing.md)."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..annotations.clips import Clip
from ..formats.parsing import render_reply, reply_form
from ..formats.registry import entry_of, item_formats, reply_format
from ..responses.conditions import conditions_for
from ..storage.parquet import read_parquet
from ..storage.table_store import TableStore
from .card import dataset_card

# A reason line for the ``open_with_reason`` answers (the rules score the answer line; the reason is required
# by the stated form, not judged).
ANSWER_REASON = "This is what the clip shows."

EXPORT_SCHEMA = pa.schema([
    ("item_id", pa.string()), ("question_id", pa.string()), ("dataset", pa.string()), ("clip_id", pa.string()),
    ("video_id", pa.string()), ("start_s", pa.float64()), ("end_s", pa.float64()), ("level", pa.string()),
    ("subtype", pa.string()), ("strategy", pa.string()), ("format", pa.string()), ("base_format", pa.string()),
    ("answer_type", pa.string()), ("prompt", pa.string()), ("options", pa.list_(pa.string())),
    ("answer", pa.string()), ("expected", pa.string()), ("chance", pa.float64()),
    ("conditions", pa.list_(pa.string())),
])
EXPORT_COLUMNS = EXPORT_SCHEMA.names


class ExportError(ValueError):
    """The export cannot be made (nothing materialized); the message says which run to make."""


def answer_reply(item) -> str:
    """A reply to ``item`` (a row of ``items``) in its format's own terms that the rules score correct."""
    form = reply_form(reply_format(item))
    return render_reply(form.name, entry_of(item).answer_value(item), reason=ANSWER_REASON if form.needs_reason else None)


def shown_options(item) -> list[str]:
    """What the prompt lists: the options (multiple choice, option judgement), the statements (format 3), or
    nothing (yes/no, open)."""
    return entry_of(item).listed(item)


def export_rows(items: pd.DataFrame) -> pd.DataFrame:
    """The export's rows (``EXPORT_COLUMNS``) of an ``items`` table, sorted by item id."""
    rows = []
    for item in items.sort_values("item_id", kind="stable").itertuples(index=False):
        clip = Clip.from_key(item.clip_key)
        rows.append({
            "item_id": item.item_id, "question_id": item.question_id, "dataset": item.dataset,
            "clip_id": item.clip_key, "video_id": item.video_id, "start_s": float(clip.start_s),
            "end_s": float(clip.end_s), "level": item.level, "subtype": item.subtype,
            "strategy": item.distractor_strategy, "format": item.format, "base_format": item.base_format,
            "answer_type": item.answer_type, "prompt": item.prompt, "options": shown_options(item),
            "answer": answer_reply(item), "expected": str(item.expected), "chance": float(item.chance),
            "conditions": list(conditions_for(item.audio_annotated)),
        })
    return pd.DataFrame(rows, columns=EXPORT_COLUMNS)


def materialized_items(store: TableStore) -> pd.DataFrame:
    """Every clip's materialized ``items`` (ExportError naming the run to make when there are none)."""
    files = store.partition_files("items")
    if not files:
        raise ExportError(f"no materialized items under {store.folder('items')}; run `epic-levels run` first")
    items = read_parquet(files)
    if not len(items):
        raise ExportError(f"the materialized items under {store.folder('items')} have no rows")
    stale = sorted(set(items["clip_key"] if "audio_annotated" not in items.columns
                       else items.loc[items["audio_annotated"].isna(), "clip_key"]))
    if stale:
        raise ExportError(f"{len(stale)} clip(s) of the materialized items under {store.folder('items')} have no "
                          f"audio_annotated column (written before items said their conditions), e.g. {stale[0]}; "
                          "run `epic-levels run` again")
    return items


@dataclass
class ExportSummary:
    out: Path
    rows: int
    rows_by_config: dict[str, dict[str, int]]  # format -> dataset -> rows
    files: list[Path]


def _write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _arrow(frame: pd.DataFrame) -> pa.Table:
    return pa.Table.from_pylist(frame.to_dict("records"), schema=EXPORT_SCHEMA)


def _parquet_bytes(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue()


def _jsonl_bytes(frame: pd.DataFrame) -> bytes:
    lines = [json.dumps(r, ensure_ascii=False, sort_keys=False) for r in frame.to_dict("records")]
    return ("\n".join(lines) + "\n").encode()


def _clips_bytes(rows: pd.DataFrame) -> bytes:
    clips = rows[["dataset", "video_id", "start_s", "end_s", "clip_id"]].drop_duplicates("clip_id")
    clips = clips.sort_values(["dataset", "video_id", "start_s", "end_s"], kind="stable")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["dataset", "video_id", "start", "end", "clip_id"])
    for c in clips.itertuples(index=False):
        writer.writerow([c.dataset, c.video_id, f"{c.start_s:g}", f"{c.end_s:g}", c.clip_id])
    return out.getvalue().encode()


def config_files(rows: pd.DataFrame) -> dict[str, dict[str, str]]:
    """format -> dataset -> the split's Parquet path inside the export (formats in registry order)."""
    out: dict[str, dict[str, str]] = {}
    for fmt in item_formats():
        datasets = sorted(rows.loc[rows["format"] == fmt, "dataset"].unique())
        if datasets:
            out[fmt] = {d: f"{fmt}/{d}.parquet" for d in datasets}
    return out


def write_export(items: pd.DataFrame, out: Path) -> ExportSummary:
    """Write the dataset folder for ``items`` into ``out`` (created; files of an earlier export replaced)."""
    out = Path(out)
    rows = export_rows(items)
    files: list[Path] = []
    by_config: dict[str, dict[str, int]] = {}
    sizes: dict[str, dict[str, int]] = {}
    configs = config_files(rows)
    for fmt, splits in configs.items():
        for dataset, rel in splits.items():
            part = rows[(rows["format"] == fmt) & (rows["dataset"] == dataset)].reset_index(drop=True)
            table = _arrow(part)
            by_config.setdefault(fmt, {})[dataset] = len(part)
            sizes.setdefault(fmt, {})[dataset] = table.nbytes
            for path, data in ((out / rel, _parquet_bytes(table)),
                               (out / "jsonl" / fmt / f"{dataset}.jsonl", _jsonl_bytes(part))):
                _write_bytes(path, data)
                files.append(path)
    _write_bytes(out / "clips.csv", _clips_bytes(rows))
    _write_bytes(out / "README.md", dataset_card(rows, configs, by_config, sizes).encode())
    files += [out / "clips.csv", out / "README.md"]
    return ExportSummary(out, len(rows), by_config, files)


def export_from_store(store: TableStore, out: Path) -> ExportSummary:
    """The export of a run's materialized items (``TableStore``)."""
    return write_export(materialized_items(store), out)


def load_export(out: Path) -> pd.DataFrame:
    """Every row of an export folder (all configs and splits), sorted by item id: what a harness reads."""
    files = sorted(Path(out).glob("*/*.parquet"))
    if not files:
        raise ExportError(f"{out}: no export here (expected <format>/<dataset>.parquet files)")
    frame = pd.concat([pq.read_table(f).to_pandas() for f in files], ignore_index=True)
    return frame.sort_values("item_id", kind="stable").reset_index(drop=True)
