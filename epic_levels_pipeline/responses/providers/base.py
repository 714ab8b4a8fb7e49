"""The provider interface: what the call runner needs from a model provider's caller, and who answered
(identities, endpoints).

A provider's caller is an ``async (CallRequest) -> CallResult`` callable that also says who it is: ``provider``
(e.g. ``"gemini"``), ``model`` (the model its calls default to) and ``endpoint`` (the base URL it talks to;
a local test server in tests), and gives the ``generation_settings()`` its requests carry (which include its
identity, so they enter the cache key). :func:`.calls.run_calls` owns rate limits, concurrency, retries and
the cache; a provider owns only the wire: building the request, classifying errors as
:class:`.calls.RetryableError` or an ``error`` result, and reading the reply and token counts. Which providers
exist, and their facts (names, endpoints, keys, limits), is :mod:`.registry`'s.

Decisions and edge cases:

* **Identity** (:class:`ProviderIdentity`): provider, model and endpoint. Its
  :meth:`~ProviderIdentity.cache_identity` goes into the call cache key, so a reply from a local
  fake or a proxy is never served later as the real service's reply. The endpoint is normalised
  first (:func:`normalise_endpoint`): user info and query string are dropped (they can carry
  credentials), the scheme and host are lower-cased, a trailing ``/`` is removed.
* **Keys** are never part of an identity, a log line, a row or a cache key. A server started without
  ``--api-key`` accepts any key but the SDKs refuse none: :data:`LOCAL_PLACEHOLDER_KEY` is sent then.
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Protocol, runtime_checkable
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    from ..calls import CallRequest, CallResult

LOCAL_PLACEHOLDER_KEY = "EMPTY"
# The request-settings key under which the identity travels (and so enters the cache key).
IDENTITY_SETTING = "provider_identity"


def normalise_endpoint(url: str) -> str:
    """The endpoint as it goes into an identity: no user info, query or fragment; lower-case scheme
    and host; no trailing ``/``. ValueError when it is not an http(s) URL with a host."""
    parts = urlsplit((url or "").strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError(f"endpoint {url!r} is not an http(s) URL with a host "
                         "(e.g. http://127.0.0.1:8000/v1)")
    host = parts.hostname.lower()
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme.lower(), netloc, parts.path.rstrip("/"), "", ""))


@dataclass(frozen=True)
class ProviderIdentity:
    """Who answered: ``provider`` (a registered provider's name), ``model`` (the name the service
    knows, without the provider prefix) and ``endpoint`` (normalised, never holding a key)."""

    provider: str
    model: str
    endpoint: str

    @property
    def name(self) -> str:
        """The provider-qualified model name, e.g. ``vllm/Qwen/Qwen2.5-Omni-7B``."""
        return f"{self.provider}/{self.model}"

    def cache_identity(self) -> str:
        """A stable string for the call cache key: canonical JSON of provider, model, endpoint
        (unambiguous whatever characters a model name holds)."""
        return json.dumps({"endpoint": self.endpoint, "model": self.model,
                           "provider": self.provider}, sort_keys=True, separators=(",", ":"))

    def as_row(self) -> dict:
        """Columns for ``responses``/``verdicts`` rows: ``provider``, ``model``, ``endpoint``."""
        return {"provider": self.provider, "model": self.model, "endpoint": self.endpoint}


def with_identity(settings: Mapping, identity: ProviderIdentity) -> dict:
    """``settings`` plus the identity under :data:`IDENTITY_SETTING`: pass the result as the
    request's settings *and* to :func:`.call_cache.cache_key`, so the key tells endpoints apart.
    Callers ignore this key when they build the wire request."""
    return {**settings, IDENTITY_SETTING: identity.cache_identity()}


@runtime_checkable
class Provider(Protocol):
    """A model provider as the call runner sees it (see the module docstring)."""

    provider: str
    model: str
    endpoint: str

    def generation_settings(self) -> dict: ...

    async def __call__(self, request: "CallRequest") -> "CallResult": ...


def identity_of(provider: Provider) -> ProviderIdentity:
    """A provider's identity, its endpoint normalised (what goes into cache keys and rows)."""
    return ProviderIdentity(provider.provider, provider.model, normalise_endpoint(provider.endpoint))


def is_loopback(endpoint: str) -> bool:
    """Whether ``endpoint``'s host is this machine (``localhost`` or a loopback address)."""
    host = (urlsplit(endpoint or "").hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
