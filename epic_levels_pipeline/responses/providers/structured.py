"""Structured output and the judge, shared by every provider.

The judge asks for ``{"choice": "A".. | "none"}`` through each provider's own structured-output
mechanism (Gemini's ``response_schema``, OpenAI's ``response_format``); the schema is written once here
in Gemini's dialect (upper-case types) and providers translate it. :func:`check_json_reply` guards
against a server that returned JSON not matching the schema; :func:`parse_choice` reads the judge's
letter. :class:`JudgeCalls` gives a provider ``judge_request`` / ``judge_choice`` from its
``generation_settings()`` (which carry its identity, so judge calls are cached per provider, model
and endpoint too).
"""

from __future__ import annotations

import json
from dataclasses import replace

from ..cache import cache_key as make_cache_key
from ..calls import CallRequest, CallResult, run_calls
from ...annotations.language import LETTERS


def check_json_reply(text: str, schema: dict | None) -> str | None:
    """Why ``text`` is not an acceptable structured reply, or None when it is.

    Checks: valid JSON; when ``schema`` describes an object, a JSON object holding every ``required``
    key, and every top-level property with an ``enum`` holding one of its values. Deeper levels are
    not checked (the service enforces the schema; this only guards against a server that did not).
    """
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, TypeError) as exc:
        return f"reply is not valid JSON ({exc})"
    if not schema or str(schema.get("type", "")).upper() != "OBJECT":
        return None
    if not isinstance(value, dict):
        return "reply is not a JSON object"
    for key in schema.get("required") or []:
        if key not in value:
            return f"reply lacks required key {key!r}"
    for key, prop in (schema.get("properties") or {}).items():
        enum = prop.get("enum") if isinstance(prop, dict) else None
        if enum and key in value and value[key] not in enum:
            return f"reply {key}={value[key]!r} is not one of {enum}"
    return None


def choice_schema(n_candidates: int) -> dict:
    """Response schema (Gemini dialect): ``{"choice": one of "A".."<n-th letter>" or "none"}``."""
    if not 1 <= n_candidates <= len(LETTERS):
        raise ValueError(f"n_candidates must be in 1..{len(LETTERS)}, got {n_candidates}")
    return {
        "type": "OBJECT",
        "properties": {"choice": {"type": "STRING",
                                  "enum": [*LETTERS[:n_candidates], "none"]}},
        "required": ["choice"],
    }


def parse_choice(text: str, n_candidates: int) -> str | None:
    """The letter chosen in a judge reply, or None for ``"none"``; ValueError when the reply is not
    ``{"choice": <letter among the first n_candidates> | "none"}``. Letters are matched exactly
    (upper case): the schema's enum allows nothing else."""
    value = json.loads(text)
    if not isinstance(value, dict) or "choice" not in value:
        raise ValueError(f"judge reply has no 'choice': {text[:200]!r}")
    choice = value["choice"]
    if choice == "none":
        return None
    if isinstance(choice, str) and len(choice) == 1 and choice in LETTERS[:n_candidates]:
        return choice
    raise ValueError(f"judge choice {choice!r} is not among A..{LETTERS[n_candidates - 1]} or none")


class JudgeCalls:
    """``judge_request`` and ``judge_choice`` for a provider class that has ``model``, ``cache`` and
    ``generation_settings()`` (mixed in by every provider)."""

    def judge_request(self, prompt: str, n_candidates: int, *, cache_key: str | None = None,
                      model: str | None = None, responder: str = "judge",
                      condition: str = "judge", settings: dict | None = None) -> CallRequest:
        """A text-only request whose reply is ``{"choice": "A".. | "none"}`` (structured output).

        Its settings are the provider's :meth:`generation_settings` (identity included), the
        structured-output settings, then ``settings``. ``cache_key`` defaults to
        :func:`.cache.cache_key` of the request's fields. Use with ``run_calls`` to judge many items;
        read replies with :func:`parse_choice`.
        """
        merged = {**self.generation_settings(), "response_mime_type": "application/json",
                  "response_schema": choice_schema(n_candidates), **(settings or {})}
        model = model or self.model
        key = cache_key or make_cache_key(responder, model, prompt, None, condition, merged)
        return CallRequest(cache_key=key, responder=responder, model=model, condition=condition,
                           prompt=prompt, settings=merged)

    async def judge_choice(self, prompt: str, n_candidates: int, *, cache_key: str | None = None,
                           model: str | None = None, max_retries: int = 5,
                           base_delay: float = 0.5, max_delay: float = 30.0
                           ) -> tuple[str | None, str, CallResult]:
        """Ask one judge question: ``(choice, raw reply, result)``.

        ``choice`` is the letter, or None when the judge said ``"none"`` *or* the call failed —
        tell them apart by ``result.status`` (``ok`` vs ``error``). Goes through :func:`run_calls`
        with ``self.cache``: an ``ok`` answer under ``cache_key`` is reused without calling, and
        transient errors are retried. No rate limit applies to this single call; to judge many
        items under a limit, build :meth:`judge_request` s and run them with ``run_calls``.
        """
        req = self.judge_request(prompt, n_candidates, cache_key=cache_key, model=model)
        (result,), _ = await run_calls([req], self, self.cache, rpm=None, concurrency=1,
                                       max_retries=max_retries, base_delay=base_delay,
                                       max_delay=max_delay)
        if result.status != "ok":
            return None, result.reply, result
        try:
            return parse_choice(result.reply, n_candidates), result.reply, result
        except (ValueError, json.JSONDecodeError) as exc:
            return None, result.reply, replace(result, status="error", error=str(exc))
