"""Prices and media tokens of model calls, as each provider states them (pure core).

Each provider prices its own calls (its facts' ``prices`` and ``media_rates``, :mod:`.providers.registry`): the
built-in ones through :mod:`.providers.gemini_pricing` (Gemini's prices, video + audio tokens, context caching and
batch) and :mod:`.providers.openai_pricing` (OpenAI's prices; frames, ``input_audio`` and the ``video_url`` routes
of vLLM / SGLang). This module holds the table of every default price (:data:`DEFAULT_PRICES`, the built-in
providers' assumptions, plus :func:`default_prices` of providers registered from elsewhere), ``--price``
overrides, and :func:`media_rates` of a resolved model.
"""

from __future__ import annotations

import math

from .providers import gemini_pricing, openai_pricing, registry
from .providers.rates import MediaRates, Price, price_of

DEFAULT_PRICES: dict[str, Price] = {**gemini_pricing.PRICES, **openai_pricing.PRICES}


def default_prices() -> dict[str, Price]:
    """:data:`DEFAULT_PRICES` and the prices of the providers registered from elsewhere (whose modules are loaded)."""
    extra = [f.prices for name, f in registry.registered().items() if name not in registry.BUILTIN]
    return {**DEFAULT_PRICES, **{model: price for prices in extra for model, price in prices.items()}}


def media_rates(spec) -> MediaRates:
    """The route and media tokens of a resolved model's calls (:class:`.models_config.ModelSpec`), as its provider
    states them."""
    return registry.get(spec.provider).media_rates(spec)


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
    table = default_prices()
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


__all__ = ["DEFAULT_PRICES", "MediaRates", "Price", "default_prices", "media_rates", "parse_price", "price_of", "price_table_with"]
