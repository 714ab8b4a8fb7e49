"""The provider interface: what the call runner needs from a model provider, and the registry of providers.

A provider is an ``async (CallRequest) -> CallResult`` callable that also says who it is: ``provider``
(e.g. ``"gemini"``), ``model`` (the model its calls default to) and ``endpoint`` (the base URL it talks to;
a local test server in tests). :func:`.calls.run_calls` owns rate limits, concurrency, retries and the cache;
a provider owns only the wire: building the request, classifying errors as
:class:`.calls.RetryableError` or an ``error`` result, and reading the reply and token counts.

Adding a provider is one module here defining a class with these attributes and a ``make(model, *,
base_url, cache)`` factory, plus its line in :data:`PROVIDERS`. Modules are imported only when their
provider is used, so a provider's SDK is needed only by runs that use it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..cache import CallCache
    from ..calls import CallRequest, CallResult

PROVIDERS = {"gemini": "gemini"}  # provider name -> module under providers/


@runtime_checkable
class Provider(Protocol):
    """A model provider as the call runner sees it (see the module docstring)."""

    provider: str
    model: str
    endpoint: str

    async def __call__(self, request: "CallRequest") -> "CallResult": ...


def make_provider(name: str, model: str, *, base_url: str | None = None,
                  cache: "CallCache | None" = None) -> Provider:
    """The provider ``name`` for ``model``; ValueError naming the known providers for an unknown name."""
    if name not in PROVIDERS:
        raise ValueError(f"unknown model provider {name!r}; known: {', '.join(sorted(PROVIDERS))}")
    module = importlib.import_module(f"{__package__}.{PROVIDERS[name]}")
    return module.make(model, base_url=base_url, cache=cache)
