"""Prices and media tokens of model calls, gathered from each provider's pricing module (pure core).

Each provider prices its own calls: :mod:`.providers.gemini_pricing` (Gemini's prices, video + audio tokens,
context caching and batch), :mod:`.providers.openai_pricing` (OpenAI's prices; frames, ``input_audio`` and the
``video_url`` routes of vLLM / SGLang). This module holds the table of every default price
(:data:`DEFAULT_PRICES`, assumptions), ``--price`` overrides, and :func:`media_rates` of a resolved model.
"""

from __future__ import annotations

import math

from .providers import gemini_pricing, openai_pricing
from .providers.rates import MediaRates, Price, price_of

PRICING = {"gemini": gemini_pricing, "openai": openai_pricing, "vllm": openai_pricing, "sglang": openai_pricing}
DEFAULT_PRICES: dict[str, Price] = {**gemini_pricing.PRICES, **openai_pricing.PRICES}


def media_rates(spec) -> MediaRates:
    """The route and media tokens of a resolved model's calls (:class:`.models_config.ModelSpec`)."""
    return PRICING[spec.provider].media_rates(spec)


def parse_price(text: str) -> tuple[str, Price]:
    """``MODEL=IN,OUT[,AUDIO_IN]`` (USD per 1M tokens) → (model, Price); ValueError with the reason."""
    model, sep, values = text.partition("=")
    parts = [p.strip() for p in values.split(",")] if sep else []
    if not model.strip() or len(parts) not in (2, 3):
        raise ValueError(f"--price {text!r}: expected MODEL=IN,OUT or MODEL=IN,OUT,AUDIO_IN (USD per 1M tokens)")
    try:
        numbers = [float(p) for p in parts]
    except ValueError:
        raise ValueError(f"--price {text!r}: prices must be numbers") from None
    if any(n < 0 or not math.isfinite(n) for n in numbers):
        raise ValueError(f"--price {text!r}: prices must be finite and non-negative")
    return model.strip(), Price(*numbers)


def price_table_with(overrides: dict[str, Price | tuple] | list[str] | None) -> dict[str, Price]:
    """The default table updated by overrides (a dict, or ``MODEL=IN,OUT`` strings)."""
    table = dict(DEFAULT_PRICES)
    if not overrides:
        return table
    if isinstance(overrides, dict):
        for model, price in overrides.items():
            table[model] = price if isinstance(price, Price) else Price(*price)
    else:
        for text in overrides:
            model, price = parse_price(text)
            table[model] = price
    return table


__all__ = ["DEFAULT_PRICES", "MediaRates", "Price", "media_rates", "parse_price", "price_of", "price_table_with"]
