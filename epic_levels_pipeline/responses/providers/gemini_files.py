"""Media of Gemini requests through the Files API: uploaded once per content hash (concurrent requests wait on
one upload), reused across runs from the call cache's ``uploads`` table, polled until ACTIVE, failures
remembered for the process; and the request's media part (see :mod:`.gemini`, "Media" and "Parts")."""

from __future__ import annotations

import asyncio
import os
import time

from google import genai
from google.genai import errors, types

from ..calls import CallRequest, CallResult
from .gemini_wire import _classify, _describe, _LoopState, _state, duration, guess_mime_type, sha256_file


class _MediaError(Exception):
    """The media file cannot be used; becomes an ``error`` result."""


class GeminiFiles:
    """The media half of :class:`.gemini.GeminiCaller` (its ``settings``, ``cache``, ``_active``, ``_failed`` and
    ``_fail``)."""

    async def _ensure_file(self, state: _LoopState, path: str, sha: str) -> tuple[str, str]:
        """(uri, mime type) of an ACTIVE provider file holding ``path``; raises _MediaError or
        RetryableError."""
        if sha in self._active:
            return self._active[sha]
        if sha in self._failed:
            raise _MediaError(self._failed[sha])
        lock = state.locks.setdefault(sha, asyncio.Lock())
        async with lock:
            if sha in self._active:
                return self._active[sha]
            if sha in self._failed:
                raise _MediaError(self._failed[sha])
            try:
                found = await self._upload_or_reuse(state.client, path, sha)
            except _MediaError as exc:
                self._failed[sha] = str(exc)
                raise
            self._active[sha] = found
            return found

    async def _upload_or_reuse(self, client: genai.Client, path: str, sha: str) -> tuple[str, str]:
        file: types.File | None = None
        row = self.cache.get_upload(sha) if self.cache is not None else None
        mime = row.mime_type if row is not None else None
        if row is not None and row.state != "FAILED":
            try:
                file = await client.aio.files.get(name=row.file_name)
            except errors.ClientError as exc:
                if exc.code not in (403, 404):
                    raise _MediaError(f"checking uploaded file {row.file_name}: {_describe(exc)}")
                file = None  # expired or deleted: upload again
            except Exception as exc:  # noqa: BLE001
                raise self._media_failure(exc, f"checking uploaded file {row.file_name}")
            if file is not None and _state(file) == "FAILED":
                file = None
        if file is None:
            if not os.path.isfile(path):
                raise _MediaError(f"media file not found: {path}")
            mime = guess_mime_type(path)
            if mime is None:
                raise _MediaError(f"unknown mime type for media file {path}")
            try:
                file = await client.aio.files.upload(
                    file=path, config=types.UploadFileConfig(mime_type=mime,
                                                             display_name=os.path.basename(path)))
            except Exception as exc:  # noqa: BLE001
                raise self._media_failure(exc, f"uploading {path}")
            if not file.name or not file.uri:
                raise _MediaError(f"upload of {path} returned no file name/uri")
            self._record(sha, file, mime)
        return await self._wait_active(client, file, sha, mime)

    def _media_failure(self, exc: Exception, doing: str) -> Exception:
        retry = _classify(exc)
        if retry is not None:
            return retry
        return _MediaError(f"{doing}: {_describe(exc)}")

    def _record(self, sha: str, file: types.File, mime: str | None) -> None:
        if self.cache is not None:
            self.cache.put_upload(sha, file.name or "", file.uri or "",
                                  file.mime_type or mime or "", _state(file))

    async def _wait_active(self, client: genai.Client, file: types.File, sha: str,
                           mime: str | None) -> tuple[str, str]:
        s = self.settings
        deadline = time.monotonic() + s.file_wait_timeout_s
        state = _state(file)
        while state not in ("ACTIVE", "FAILED"):
            if time.monotonic() >= deadline:
                raise _MediaError(f"file {file.name} still {state} after "
                                  f"{s.file_wait_timeout_s:g} s")
            await asyncio.sleep(s.file_poll_interval_s)
            try:
                file = await client.aio.files.get(name=file.name)
            except Exception as exc:  # noqa: BLE001
                raise self._media_failure(exc, f"polling file {file.name}")
            if _state(file) != state:
                state = _state(file)
                self._record(sha, file, mime)
        if state == "FAILED":
            why = file.error.message if file.error is not None and file.error.message else "no reason"
            raise _MediaError(f"file {file.name} processing FAILED: {why}")
        return file.uri or "", file.mime_type or mime or ""

    async def _media_part(self, state: _LoopState, request: CallRequest
                          ) -> tuple[types.Part | None, str | None, CallResult | None]:
        """(media part, media sha256, None), or (None, None, an error result); (None, None, None)
        for a text-only request."""
        if not request.media_path:
            return None, None, None
        start, end = request.start_offset_s, request.end_offset_s
        if (start is not None and start < 0) or (end is not None and end < 0) or (
                start is not None and end is not None and end <= start):
            return None, None, self._fail(request, f"invalid offsets start={start} end={end}")
        try:
            sha = request.media_sha256 or await asyncio.to_thread(sha256_file, request.media_path)
        except OSError as exc:
            return None, None, self._fail(request, f"media file unreadable: {exc}")
        try:
            uri, mime = await self._ensure_file(state, request.media_path, sha)
        except _MediaError as exc:
            return None, None, self._fail(request, str(exc))
        fps = (request.settings or {}).get("fps")
        meta = None
        if start is not None or end is not None or fps is not None:
            meta = types.VideoMetadata(
                start_offset=duration(start) if start is not None else None,
                end_offset=duration(end) if end is not None else None,
                fps=fps)
        return types.Part(file_data=types.FileData(file_uri=uri, mime_type=mime),
                          video_metadata=meta), sha, None
