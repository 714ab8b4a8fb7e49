"""Persistent cache of model calls and of uploaded media files (one SQLite file, pure core).

Tables: ``calls`` (the latest outcome per cache key; an ``ok`` row is never replaced by a failure), ``uploads``
(provider files by media sha256), ``context_caches`` (Gemini context caches by what they hold), ``spend`` (the
runs' ledger, appended) and ``batch_jobs`` (submitted batch jobs, written before waiting on them so a killed
process resumes and submits nothing twice). Each put is its own committed WAL transaction; one connection behind
a lock serves asyncio tasks and threads alike. Why: docs/design/model-calls.md."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from .calls import CallRequest, CallResult

CACHE_KEY_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    cache_key TEXT PRIMARY KEY,
    responder TEXT,
    model TEXT,
    condition TEXT,
    reply TEXT,
    status TEXT,
    prompt_tokens INT,
    output_tokens INT,
    latency_s REAL,
    error TEXT,
    attempts INT,
    created_at TEXT,
    route TEXT,
    cached_tokens INT
);
CREATE TABLE IF NOT EXISTS context_caches (
    identity TEXT PRIMARY KEY,
    name TEXT,
    model TEXT,
    media_sha256 TEXT,
    token_count INT,
    expire_time TEXT,
    created_at TEXT
);
CREATE TABLE IF NOT EXISTS batch_jobs (
    name TEXT PRIMARY KEY,
    model TEXT,
    state TEXT,
    items TEXT,
    source TEXT,
    done INT DEFAULT 0,
    submitted_at TEXT,
    updated_at TEXT
);
CREATE TABLE IF NOT EXISTS spend (
    run_id TEXT,
    recorded_at TEXT,
    asset TEXT,
    purpose TEXT,
    responder TEXT,
    model TEXT,
    provider TEXT,
    served_model TEXT,
    endpoint TEXT,
    requests INT,
    cached INT,
    calls INT,
    attempts INT,
    failed INT,
    prompt_tokens INT,
    output_tokens INT,
    cached_tokens INT,
    wall_s REAL,
    cost_usd REAL
);
CREATE TABLE IF NOT EXISTS uploads (
    sha256 TEXT PRIMARY KEY,
    file_name TEXT,
    uri TEXT,
    mime_type TEXT,
    state TEXT,
    created_at TEXT
);
"""

_CONTEXT_COLUMNS = "identity, name, model, media_sha256, token_count, expire_time, created_at"

# Columns added after the first version of the ``calls`` table, with their declarations (see
# :meth:`CallCache._migrate`).
_ADDED_COLUMNS = {"route": "TEXT DEFAULT ''", "cached_tokens": "INT DEFAULT 0"}


def cache_key(responder: str, model: str, prompt: str, media_sha256: str | None, condition: str,
              settings: dict) -> str:
    """sha256 (hex) of a canonical JSON of everything that determines an answer.

    Canonical: keys sorted at every depth, no whitespace, UTF-8 kept as is (``ensure_ascii=False``),
    and a format version so a change of recipe cannot collide with old keys. ``settings`` must be
    JSON-serialisable (``TypeError`` otherwise — deliberately no ``default=str``, which would make two
    different objects hash alike). Tuples and lists hash alike; ``1`` and ``1.0`` do not (JSON writes
    them differently), so pass numbers with a stable type. ``media_sha256=None`` (text only) differs
    from every real hash.
    """
    payload = {
        "v": CACHE_KEY_VERSION,
        "responder": responder,
        "model": model,
        "prompt": prompt,
        "media_sha256": media_sha256,
        "condition": condition,
        "settings": settings,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class UploadRecord:
    """A media file known to the provider: ``file_name`` (e.g. ``files/abc123``) is what the Files
    API's ``get`` takes; ``uri`` is what a prompt part references; ``state`` is the last one seen
    (``PROCESSING``, ``ACTIVE``, ``FAILED``)."""

    sha256: str
    file_name: str
    uri: str
    mime_type: str
    state: str
    created_at: str


@dataclass(frozen=True)
class ContextCacheRecord:
    """A provider-side cached content: ``name`` (e.g. ``cachedContents/abc``) is what requests
    reference; ``expire_time`` is ISO 8601 UTC as the provider reported it."""

    identity: str
    name: str
    model: str
    media_sha256: str
    token_count: int
    expire_time: str
    created_at: str


@dataclass(frozen=True)
class BatchJobRecord:
    """A submitted batch job: ``items`` are ``{"key", "responder", "model", "condition"}`` dicts in
    submission order; ``source`` is ``inline`` or the input file's name."""

    name: str
    model: str
    state: str
    items: list
    source: str
    done: bool
    submitted_at: str


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class CallCache:
    """The SQLite cache file at ``path`` (parent directories are created).

    Usable as a context manager (closes the connection). See the module docstring for durability and
    threading.
    """

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30.0,
                                     isolation_level=None)
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA busy_timeout=30000")
            self._conn.executescript(_SCHEMA)
            self._migrate()

    def _migrate(self) -> None:
        """Add the columns later versions introduced to a file an older version created (existing
        rows get their defaults: empty route, 0 cached tokens)."""
        have = {row[1] for row in self._conn.execute("PRAGMA table_info(calls)")}
        for name, decl in _ADDED_COLUMNS.items():
            if name not in have:
                self._conn.execute(f"ALTER TABLE calls ADD COLUMN {name} {decl}")

    # -- calls -----------------------------------------------------------------------------------

    def get(self, key: str) -> CallResult | None:
        """The stored result for ``key`` (any status) with ``cached=True``, or None."""
        with self._lock:
            row = self._conn.execute(
                "SELECT reply, status, prompt_tokens, output_tokens, latency_s, error, attempts, route, "
                "cached_tokens FROM calls WHERE cache_key = ?", (key,)).fetchone()
        if row is None:
            return None
        reply, status, ptok, otok, lat, err, attempts, route, ctok = row
        return CallResult(cache_key=key, reply=reply or "", status=status, prompt_tokens=ptok or 0,
                          output_tokens=otok or 0, latency_s=lat or 0.0, error=err or "",
                          attempts=attempts or 0, cached=True, route=route or "",
                          cached_tokens=ctok or 0)

    def put(self, result: CallResult, request: CallRequest | None = None) -> None:
        """Store ``result`` and commit at once.

        ``request`` fills the responder/model/condition columns (empty strings without it).
        Decision: an existing ``ok`` row is only replaced by another ``ok`` result — a later failure
        (a forced re-run that hit a 500, say) must not destroy a good answer.
        """
        responder = request.responder if request is not None else ""
        model = request.model if request is not None else ""
        condition = request.condition if request is not None else ""
        with self._lock:
            self._conn.execute(
                """
                INSERT INTO calls (cache_key, responder, model, condition, reply, status,
                                   prompt_tokens, output_tokens, latency_s, error, attempts, created_at,
                                   route, cached_tokens)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(cache_key) DO UPDATE SET
                    responder = excluded.responder, model = excluded.model,
                    condition = excluded.condition, reply = excluded.reply,
                    status = excluded.status, prompt_tokens = excluded.prompt_tokens,
                    output_tokens = excluded.output_tokens, latency_s = excluded.latency_s,
                    error = excluded.error, attempts = excluded.attempts,
                    created_at = excluded.created_at, route = excluded.route,
                    cached_tokens = excluded.cached_tokens
                WHERE calls.status != 'ok' OR excluded.status = 'ok'
                """,
                (result.cache_key, responder, model, condition, result.reply, result.status,
                 int(result.prompt_tokens), int(result.output_tokens), float(result.latency_s),
                 result.error, int(result.attempts), _now(), result.route, int(result.cached_tokens)),
            )

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0]

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return self._conn.execute("SELECT 1 FROM calls WHERE cache_key = ?",
                                      (key,)).fetchone() is not None

    def status_counts(self) -> dict[str, int]:
        """Rows per status, e.g. ``{"ok": 58, "error": 2}``."""
        with self._lock:
            rows = self._conn.execute("SELECT status, COUNT(*) FROM calls GROUP BY status").fetchall()
        return dict(rows)

    def rows(self) -> list[dict]:
        """Every row of ``calls`` as a dict (for audit and tests), ordered by key."""
        with self._lock:
            cur = self._conn.execute("SELECT * FROM calls ORDER BY cache_key")
            names = [d[0] for d in cur.description]
            return [dict(zip(names, r)) for r in cur.fetchall()]

    # -- uploads ---------------------------------------------------------------------------------

    def get_upload(self, sha256: str) -> UploadRecord | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT sha256, file_name, uri, mime_type, state, created_at FROM uploads "
                "WHERE sha256 = ?", (sha256,)).fetchone()
        return UploadRecord(*row) if row is not None else None

    def put_upload(self, sha256: str, file_name: str, uri: str, mime_type: str, state: str) -> None:
        """Insert or replace the row for ``sha256``; ``created_at`` is kept when only the state of
        the same provider file changes, and reset when ``file_name`` changes (a re-upload)."""
        with self._lock:
            self._conn.execute(
                """
                INSERT INTO uploads (sha256, file_name, uri, mime_type, state, created_at)
                VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(sha256) DO UPDATE SET
                    created_at = CASE WHEN uploads.file_name = excluded.file_name
                                      THEN uploads.created_at ELSE excluded.created_at END,
                    file_name = excluded.file_name, uri = excluded.uri,
                    mime_type = excluded.mime_type, state = excluded.state
                """,
                (sha256, file_name, uri, mime_type, state, _now()),
            )

    def delete_upload(self, sha256: str) -> None:
        with self._lock:
            self._conn.execute("DELETE FROM uploads WHERE sha256 = ?", (sha256,))

    # -- context caches ---------------------------------------------------------------------------

    def get_context_cache(self, identity: str) -> ContextCacheRecord | None:
        with self._lock:
            row = self._conn.execute(f"SELECT {_CONTEXT_COLUMNS} FROM context_caches WHERE identity = ?",
                                     (identity,)).fetchone()
        return ContextCacheRecord(*row) if row is not None else None

    def put_context_cache(self, identity: str, name: str, model: str, media_sha256: str,
                          token_count: int, expire_time: str) -> None:
        with self._lock:
            self._conn.execute(
                f"INSERT OR REPLACE INTO context_caches ({_CONTEXT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (identity, name, model, media_sha256, int(token_count), expire_time, _now()))

    def delete_context_cache(self, identity: str, name: str | None = None) -> None:
        """Forget the row for ``identity`` (only if it still names ``name``, when given)."""
        with self._lock:
            if name is None:
                self._conn.execute("DELETE FROM context_caches WHERE identity = ?", (identity,))
            else:
                self._conn.execute("DELETE FROM context_caches WHERE identity = ? AND name = ?",
                                   (identity, name))

    def context_caches(self) -> list[ContextCacheRecord]:
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_CONTEXT_COLUMNS} FROM context_caches ORDER BY created_at, identity").fetchall()
        return [ContextCacheRecord(*r) for r in rows]

    # -- batch jobs -------------------------------------------------------------------------------

    def put_batch_job(self, name: str, model: str, state: str, items: list[dict], source: str) -> None:
        """Record a just-submitted job and the requests it carries (see the module docstring)."""
        now = _now()
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO batch_jobs (name, model, state, items, source, done, "
                "submitted_at, updated_at) VALUES (?, ?, ?, ?, ?, 0, ?, ?)",
                (name, model, state, json.dumps(items, separators=(",", ":")), source, now, now))

    def set_batch_state(self, name: str, state: str, *, done: bool = False) -> None:
        with self._lock:
            self._conn.execute("UPDATE batch_jobs SET state = ?, done = ?, updated_at = ? WHERE name = ?",
                               (state, int(done), _now(), name))

    def batch_jobs(self, *, open_only: bool = False) -> list[BatchJobRecord]:
        """Recorded jobs in submission order (only those whose results are not stored yet, with
        ``open_only``)."""
        query = "SELECT name, model, state, items, source, done, submitted_at FROM batch_jobs"
        if open_only:
            query += " WHERE done = 0"
        with self._lock:
            rows = self._conn.execute(query + " ORDER BY submitted_at, rowid").fetchall()
        return [BatchJobRecord(n, m, st, json.loads(items), src, bool(d), at)
                for n, m, st, items, src, d, at in rows]

    # -- lifecycle -------------------------------------------------------------------------------

    # -- spend ------------------------------------------------------------------------------------

    def add_spend(self, rows: list[dict]) -> None:
        """Append ledger rows (:data:`.spend.SPEND_COLUMNS`) in one committed transaction."""
        if not rows:
            return
        columns = list(rows[0])
        with self._lock:
            self._conn.execute("BEGIN")
            self._conn.executemany(f"INSERT INTO spend ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                                   [tuple(r[c] for c in columns) for r in rows])
            self._conn.execute("COMMIT")

    def spend_rows(self, run_ids: list[str] | None = None) -> list[dict]:
        """The ledger's rows (of ``run_ids`` only, when given), in the order they were recorded."""
        query, args = "SELECT * FROM spend", ()
        if run_ids is not None:
            query, args = f"SELECT * FROM spend WHERE run_id IN ({', '.join('?' * len(run_ids))})", tuple(run_ids)
        with self._lock:
            cursor = self._conn.execute(query + " ORDER BY rowid", args)
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row)) for row in cursor.fetchall()]

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> "CallCache":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
