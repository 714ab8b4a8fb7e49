"""Replies made by any harness, scored like a model called here (``epic-levels import-replies FILE --model NAME``). A
file is checked whole (every bad line one ``FILE:LINE: message``, nothing stored unless all are good), then kept in
the replies store, ``data/replies/<NAME>.parquet``, which the ``responses`` asset reads as responder ``external``."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..records import records
from ..responses.conditions import conditions_for, items_by_condition
from ..responses.runner import RESPONSE_COLUMNS
from ..schemas.fields import EXTERNAL
from ..storage.parquet import read_parquet, write_parquet

FIELDS = ("item_id", "condition", "reply")
STORE_COLUMNS = ["item_id", "clip_key", "condition", "reply", "source", "source_sha256", "line"]
MODEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class RepliesError(ValueError):
    """A replies file that cannot be imported; ``problems`` are its ``FILE:LINE: message`` lines."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass
class Replies:
    """A checked replies file: its rows (``STORE_COLUMNS``), its name and digest."""

    frame: pd.DataFrame
    source: str
    sha256: str


def store_folder(data: Path) -> Path:
    """The replies store of a project (``data/replies``)."""
    return Path(data) / "replies"


def _lines(path: Path, text: str) -> list[tuple[int, dict | None, str]]:
    """(line number, record or None, problem) of every non-blank line of a JSONL or CSV file."""
    out: list[tuple[int, dict | None, str]] = []
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(io.StringIO(text))
        missing = [f for f in FIELDS if f not in (reader.fieldnames or [])]
        if missing:
            return [(1, None, f"header lacks {', '.join(missing)} (needs {', '.join(FIELDS)})")]
        for row in reader:
            out.append((reader.line_num, dict(row), ""))
        return out
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            out.append((number, None, f"not JSON: {exc.msg}"))
            continue
        if not isinstance(value, dict):
            out.append((number, None, "not a JSON object"))
            continue
        out.append((number, value, ""))
    return out


def check_replies(records_: list[tuple[int, dict | None, str]], items: pd.DataFrame, source: str,
                  sha256: str) -> Replies:
    """The rows of numbered records checked against ``items`` (RepliesError listing every bad line)."""
    clip_of = dict(zip(items["item_id"], items["clip_key"]))
    heard_of = dict(zip(items["item_id"], items["audio_annotated"]))
    problems: list[str] = []
    seen: dict[tuple[str, str], int] = {}
    rows: list[dict] = []
    for number, record, problem in records_:
        where = f"{source}:{number}"
        if record is None:
            problems.append(f"{where}: {problem}")
            continue
        missing = [f for f in FIELDS if record.get(f) is None or (f != "reply" and not str(record.get(f)).strip())]
        if missing:
            problems.append(f"{where}: missing {', '.join(missing)}")
            continue
        item_id, condition, reply = str(record["item_id"]).strip(), str(record["condition"]).strip(), record["reply"]
        if not isinstance(reply, str):
            problems.append(f"{where}: reply is not text")
            continue
        if item_id not in clip_of:
            problems.append(f"{where}: unknown item_id {item_id!r}")
            continue
        allowed = conditions_for(heard_of[item_id])
        if condition not in allowed:
            problems.append(f"{where}: condition {condition!r} not asked for this item (one of {', '.join(allowed)})")
            continue
        if (item_id, condition) in seen:
            problems.append(f"{where}: duplicate reply to {item_id} under {condition} (first on line "
                            f"{seen[item_id, condition]})")
            continue
        seen[item_id, condition] = number
        rows.append({"item_id": item_id, "clip_key": clip_of[item_id], "condition": condition, "reply": reply,
                     "source": source, "source_sha256": sha256, "line": number})
    if not rows and not problems:
        problems.append(f"{source}:1: no replies")
    if problems:
        raise RepliesError(problems)
    return Replies(pd.DataFrame(rows, columns=STORE_COLUMNS), source, sha256)


def read_replies(path: Path, items: pd.DataFrame) -> Replies:
    """A JSONL or CSV replies file checked against ``items`` (RepliesError with ``FILE:LINE: message`` lines)."""
    path = Path(path)
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RepliesError([f"{path}:1: not UTF-8 text ({exc.reason})"]) from None
    return check_replies(_lines(path, text), items, str(path), hashlib.sha256(data).hexdigest())


def store_replies(data: Path, model: str, replies: Replies) -> Path:
    """Write a checked file into the replies store as model ``model`` (replacing its earlier replies)."""
    if not MODEL_NAME.match(model):
        raise ValueError(f"model name {model!r}: letters, digits, '.', '_' and '-' only")
    path = store_folder(data) / f"{model}.parquet"
    write_parquet(replies.frame, path)
    return path


def stored_models(data: Path) -> dict[str, pd.DataFrame]:
    """Every model in the replies store with its rows, by name (sorted)."""
    folder = store_folder(data)
    files = sorted(folder.glob("*.parquet")) if folder.is_dir() else []
    return {f.stem: read_parquet([f]) for f in files}


def external_responses(clip_key: str, items: pd.DataFrame, stored: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """``responses`` rows of one clip for every stored model: its reply where the file has one (``ok``), else
    ``skipped`` with the reason; ``cache_key`` names the file's digest and line."""
    out: list[dict] = []
    if not len(items):
        return pd.DataFrame(out, columns=RESPONSE_COLUMNS)
    for model, replies in stored.items():
        mine = replies[replies["clip_key"] == clip_key]
        by_key = {(r.item_id, r.condition): r for r in records(mine)}
        source = f"{replies['source'].iloc[0]} (sha256 {replies['source_sha256'].iloc[0]})" if len(replies) else model
        for condition, asked in items_by_condition(records(items)):
            for item in asked:
                r = by_key.get((item.item_id, condition))
                base = {"item_id": item.item_id, "question_id": item.question_id, "clip_key": item.clip_key,
                        "dataset": item.dataset, "level": item.level, "subtype": item.subtype,
                        "distractor_strategy": item.distractor_strategy, "format": item.format,
                        "base_format": item.base_format, "condition": condition, "responder": EXTERNAL,
                        "model": model, "prompt_tokens": 0, "output_tokens": 0, "latency_s": 0.0, "cached": False,
                        "media_sha256": None, "provider": EXTERNAL, "endpoint": "", "route": "imported",
                        "cached_tokens": 0, "served_model": model,
                        "model_digest": str(replies["source_sha256"].iloc[0])[:12] if len(replies) else ""}
                if r is None:
                    out.append({**base, "reply": "", "status": "skipped", "cache_key": "",
                                "error": f"no reply in the imported file {source}"})
                    continue
                out.append({**base, "reply": r.reply, "status": "ok", "error": "",
                            "cache_key": f"replies:{r.source_sha256}:{r.line}"})
    return pd.DataFrame(out, columns=RESPONSE_COLUMNS)
