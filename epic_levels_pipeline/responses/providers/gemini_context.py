"""Context caching of Gemini requests: one cached content per clip window (model, media, offsets, sampling,
resolution, instruction), created once, recorded in the call cache's ``context_caches`` table for later runs,
recreated once when it expires mid-run, deleted at the end of the run (see :mod:`.gemini`, "Context caching")."""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from google.genai import errors, types

from ..calls import CallRequest
from .gemini_tokens import media_tokens, min_cache_tokens
from .gemini_wire import _describe, _LoopState, duration


@dataclass(frozen=True)
class _ContextCache:
    """A cached content in use: its name, expiry (None: unknown) and cached token count."""

    name: str
    expire_time: datetime | None
    token_count: int = 0

    def expired(self, margin_s: float = 5.0) -> bool:
        if self.expire_time is None:
            return False
        when = self.expire_time if self.expire_time.tzinfo else self.expire_time.replace(
            tzinfo=timezone.utc)
        return when <= datetime.now(timezone.utc) + timedelta(seconds=margin_s)


def _cache_gone(exc: BaseException) -> bool:
    """The service says the referenced cached content does not exist (expired or deleted)."""
    if not isinstance(exc, errors.APIError) or exc.code not in (400, 403, 404):
        return False
    return exc.code in (403, 404) or "cached" in str(exc.message or "").lower()


class GeminiContextCaching:
    """The context-caching half of :class:`.gemini.GeminiCaller` (its ``settings``, ``cache``, ``_contexts``,
    ``_uncacheable`` and the creation counters)."""

    def context_identity(self, request: CallRequest, model: str, sha: str) -> str:
        """What a cached content holds: model, media file, window, sampling rate, resolution and
        instruction. Every item of one clip file × model × condition shares it."""
        o = request.settings or {}
        payload = {"model": model, "media_sha256": sha, "start": request.start_offset_s,
                   "end": request.end_offset_s, "fps": o.get("fps"),
                   "media_resolution": o.get("media_resolution"),
                   "system_instruction": o.get("system_instruction")}
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    async def _context_cache(self, state: _LoopState, request: CallRequest, model: str,
                             media: types.Part, sha: str, stale: str | None = None
                             ) -> tuple["_ContextCache | None", str]:
        """The live cached content for this request's clip window (created when needed), or
        (None, why it is sent uncached). ``stale`` names a cache the service said is gone."""
        ident = self.context_identity(request, model, sha)
        lock = state.locks.setdefault("context:" + ident, asyncio.Lock())
        async with lock:
            known = self._contexts.get(ident)
            if stale is not None and known is not None and known.name == stale:
                self._contexts.pop(ident, None)
                if self.cache is not None:
                    self.cache.delete_context_cache(ident, stale)
                known = None
            if known is not None and not known.expired():
                return known, ""
            if ident in self._uncacheable:
                return None, self._uncacheable[ident]
            found = None if stale is not None else await self._recorded_context(state, ident)
            if found is None:
                found, why = await self._create_context(state, request, model, media, sha, ident)
                if found is None:
                    self._uncacheable[ident] = why
                    return None, why
                if stale is not None:
                    self.context_recreations += 1
            self._contexts[ident] = found
            return found, ""

    async def _recorded_context(self, state: _LoopState, ident: str) -> "_ContextCache | None":
        """A live cache recorded by an earlier (e.g. killed) run, confirmed with ``caches.get``."""
        row = self.cache.get_context_cache(ident) if self.cache is not None else None
        if row is None:
            return None
        try:
            got = await state.client.aio.caches.get(name=row.name)
        except Exception:  # noqa: BLE001 - gone, expired or unreachable: make a new one
            self.cache.delete_context_cache(ident, row.name)
            return None
        found = _ContextCache(got.name or row.name, got.expire_time, row.token_count)
        if found.expired():
            self.cache.delete_context_cache(ident, row.name)
            return None
        return found

    async def _create_context(self, state: _LoopState, request: CallRequest, model: str,
                              media: types.Part, sha: str, ident: str
                              ) -> tuple["_ContextCache | None", str]:
        s, o = self.settings, request.settings or {}
        minimum = min_cache_tokens(model)
        if request.start_offset_s is not None and request.end_offset_s is not None:
            expected = media_tokens(request.end_offset_s - request.start_offset_s,
                                    o.get("media_resolution"), o.get("fps"))
            if expected < minimum:
                return None, f"~{expected} tokens is below the {minimum}-token minimum of {model}"
        try:
            created = await state.client.aio.caches.create(
                model=model, config=types.CreateCachedContentConfig(
                    contents=[types.Content(role="user", parts=[media])],
                    system_instruction=o.get("system_instruction"),
                    ttl=duration(s.context_cache_ttl_s),
                    display_name=f"epic-levels {ident[:12]}"))
        except Exception as exc:  # noqa: BLE001 - any failure: send uncached, say why
            return None, f"cache creation failed: {_describe(exc)}"
        if not created.name:
            return None, "cache creation returned no name"
        usage = created.usage_metadata
        found = _ContextCache(created.name, created.expire_time,
                              (usage.total_token_count or 0) if usage else 0)
        self.context_creations += 1
        if self.cache is not None:
            expire = found.expire_time.isoformat() if found.expire_time else ""
            self.cache.put_context_cache(ident, found.name, model, sha, found.token_count, expire)
        return found, ""

    async def release_context_caches(self) -> int:
        """Delete the cached contents this caller used (the run is over); returns how many. A cache
        that is already gone counts as deleted. Their rows leave the call cache database."""
        state = self._loop_state()
        deleted = 0
        for ident, found in list(self._contexts.items()):
            try:
                await state.client.aio.caches.delete(name=found.name)
            except errors.ClientError as exc:
                if exc.code not in (403, 404):
                    continue  # keep the row: its TTL still ends it, a later run may reuse it
            except Exception:  # noqa: BLE001
                continue
            deleted += 1
            self._contexts.pop(ident, None)
            if self.cache is not None:
                self.cache.delete_context_cache(ident, found.name)
        return deleted
