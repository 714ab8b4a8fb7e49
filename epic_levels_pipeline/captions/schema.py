"""The JSON a model is asked for: a pydantic model, and its schema in the two forms providers take. Kept flat (no
recursive references, unions or defaults) so that both Gemini's and the OpenAI-compatible structured outputs
accept it."""

from __future__ import annotations

import copy

from pydantic import BaseModel, ConfigDict, Field

from ..responses.providers import registry


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CaptionReference(_Strict):
    id: str = Field(description="Short id, e.g. R1; used by links.")
    name: str = Field(description="What the entity is, a noun (e.g. 'knife', 'blueberries').")


class CaptionEvent(_Strict):
    id: str = Field(description="Short id, e.g. E1.")
    start_s: float = Field(description="Start, seconds from the clip start.")
    stop_s: float = Field(description="End, seconds from the clip start.")
    sound: str = Field(description="What is heard (e.g. 'running water', 'chopping').")


class CaptionAction(_Strict):
    id: str = Field(description="Short id, e.g. A1.")
    start_s: float = Field(description="Start, seconds from the clip start.")
    stop_s: float = Field(description="End, seconds from the clip start.")
    verb: str = Field(description="The action's verb, base form (e.g. 'wash', 'take').")
    noun: str = Field(description="The main object acted on (e.g. 'plate').")
    description: str = Field(description="The action in a few words (e.g. 'wash the blueberries').")


class CaptionLink(_Strict):
    source: str = Field(description="An event id (event→action) or an action id (action→reference).")
    target: str = Field(description="An action id (event→action) or a reference id (action→reference).")


class Caption(_Strict):
    references: list[CaptionReference]
    events: list[CaptionEvent]
    actions: list[CaptionAction]
    links: list[CaptionLink]


def caption_json_schema() -> dict:
    """The caption's JSON schema with every ``$ref`` inlined (some providers reject ``$defs``)."""
    schema = Caption.model_json_schema()
    defs = schema.pop("$defs", {})

    def inline(node):
        if isinstance(node, dict):
            if "$ref" in node:
                return inline(copy.deepcopy(defs[node["$ref"].rsplit("/", 1)[-1]]))
            return {k: inline(v) for k, v in node.items()}
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    return inline(schema)


def openai_response_format() -> dict:
    """``response_format`` for an OpenAI-compatible chat completion (strict JSON schema)."""
    return {"type": "json_schema", "json_schema": {"name": "caption", "strict": True, "schema": caption_json_schema()}}


def gemini_generation_config() -> dict:
    """Fields of a Gemini ``GenerateContentConfig``: JSON reply constrained by the caption schema."""
    return {"response_mime_type": "application/json", "response_schema": Caption}


# Captions are long replies: the QA track's short-answer budget would cut them off.
CAPTION_MAX_OUTPUT_TOKENS = 8192


def request_settings(provider: str) -> dict:
    """The structured-output settings of a caption request to ``provider`` (part of its cache key): the caption
    schema in the form its provider takes (:meth:`..responses.providers.registry.ProviderFacts.structured_settings`:
    Gemini's ``response_schema``; an OpenAI-compatible server's ``json_schema``, sent as
    ``response_format={"type": "json_schema", ...}``)."""
    schema = registry.get(provider).structured_settings(caption_json_schema(), "caption")
    return {"response_mime_type": "application/json", "max_output_tokens": CAPTION_MAX_OUTPUT_TOKENS, **schema}
