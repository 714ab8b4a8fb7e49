"""The wire details of ``/v1/chat/completions`` that do not depend on a caller: structured output
(Gemini-style schemas as JSON Schema, ``response_format``) and reading the server's errors
(``Retry-After``, the message of an error body). Used by :mod:`.openai_compat`."""

from __future__ import annotations

import json
import re

import openai

from ..calls import parse_retry_after


# -- structured output ----------------------------------------------------------------------------

def json_schema_of(schema: dict) -> dict:
    """A Gemini-style schema (``{"type": "OBJECT", "properties": ..., "required": ...}``) as JSON
    Schema: types lower-cased, ``nullable`` folded into the type, objects closed
    (``additionalProperties: false``, which strict mode requires). Other keys pass through."""
    if not isinstance(schema, dict):
        return schema
    out: dict = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            out["type"] = value.lower()
        elif key == "properties" and isinstance(value, dict):
            out["properties"] = {k: json_schema_of(v) for k, v in value.items()}
        elif key == "items":
            out["items"] = json_schema_of(value)
        elif key == "nullable":
            continue
        else:
            out[key] = value
    if schema.get("nullable") and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    if out.get("type") == "object":
        out.setdefault("additionalProperties", False)
    return out


def _strict_ok(schema) -> bool:
    """Strict mode needs every object to list all its properties as required."""
    if not isinstance(schema, dict):
        return True
    props = schema.get("properties") or {}
    if props and set(schema.get("required") or []) != set(props):
        return False
    return all(_strict_ok(v) for v in props.values()) and _strict_ok(schema.get("items"))


STRUCTURED_OUTPUT = ("json_schema", "json_object", "none")


def response_format_of(settings: dict, form: str = "json_schema") -> tuple[dict | None, dict | None]:
    """``(response_format, schema to check the reply against)`` for a request's settings, in the structured
    output ``form`` the server takes (:data:`STRUCTURED_OUTPUT`): ``json_schema`` sends the schema; ``json_object``
    asks for a JSON object, carrying the schema as ``schema`` (llama.cpp's servers constrain the reply to it),
    and ``none`` for nothing; under both the schema is also stated in the prompt (:func:`schema_instruction`).
    The reply is checked against the schema in every form."""
    if form not in STRUCTURED_OUTPUT:
        raise ValueError(f"structured_output {form!r} is not one of {', '.join(STRUCTURED_OUTPUT)}")
    if settings.get("json_schema"):
        schema = settings["json_schema"]
    elif settings.get("response_schema"):
        schema = json_schema_of(settings["response_schema"])
    elif settings.get("response_mime_type") == "application/json":
        return (None if form == "none" else {"type": "json_object"}), None
    else:
        return None, None
    if form != "json_schema":
        return (None if form == "none" else {"type": "json_object", "schema": schema}), schema
    name = re.sub(r"[^A-Za-z0-9_-]", "_", str(settings.get("response_schema_name") or "reply"))[:64]
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema,
                                                   "strict": _strict_ok(schema)}}, schema


def schema_instruction(prompt: str, schema: dict) -> str:
    """``prompt`` with the JSON schema its reply must match stated after it (the ``json_object`` / ``none``
    forms), unless the prompt states that schema already (compact JSON, as the caption prompt writes it)."""
    stated = json.dumps(schema, separators=(",", ":"))
    if stated in prompt:
        return prompt
    return f"{prompt}\n\nReply with one JSON object only, matching this JSON schema: {stated}"


def json_in_text(text: str) -> str:
    """The JSON object in a reply that was asked for JSON without ``response_format`` (form ``none``): the text
    itself when it parses, else the span from its first ``{`` to its last ``}`` when that parses (a model's
    code fence or sentence around it), else the text unchanged (the schema check then says why)."""
    try:
        json.loads(text)
        return text
    except (json.JSONDecodeError, TypeError):
        pass
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        try:
            json.loads(text[start:end + 1])
            return text[start:end + 1]
        except json.JSONDecodeError:
            pass
    return text


# -- the request body ------------------------------------------------------------------------------

MEDIA_SLOT = "\x00epic-levels media parts\x00"  # stands for the media parts while a body is serialised


def chat_body(body: dict, media: bytes = b"") -> bytes:
    """The JSON bytes of a chat request as the SDK writes them (UTF-8, compact, no NaN), with ``media`` (the media
    parts' JSON, encoded once per clip window: :meth:`.openai_media.MediaParts.encoded`) in place of the
    :data:`MEDIA_SLOT` item of a content list, so the megabytes of base64 are not serialised again per request."""
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    if not media:
        return text.encode()
    head, slot, tail = text.partition(json.dumps(MEDIA_SLOT))
    if not slot:
        raise ValueError("the body holds no media slot")
    return b"".join((head.encode(), media, tail.encode()))


# -- errors ---------------------------------------------------------------------------------------

def retry_after_seconds(headers) -> float | None:
    """The wait a server asked for: ``retry-after-ms`` (OpenAI), else ``Retry-After`` (seconds or
    an HTTP date); None when absent or unreadable."""
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms:
            return max(0.0, float(ms) / 1000)
    except (TypeError, ValueError):
        pass
    return parse_retry_after(headers.get("retry-after"))


def short_message(message: str, limit: int = 240) -> str:
    """A server's error message on one line for a log or advice: any server-side traceback (from
    ``  File "…"`` on) dropped, whitespace collapsed, at most ``limit`` characters."""
    head = re.split(r'\n\s*File "', message, maxsplit=1)[0]
    text = " ".join(head.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def status_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(body.get("message"), str):
            return body["message"]
    return exc.message or type(exc).__name__


