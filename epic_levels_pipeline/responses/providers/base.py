"""The provider interface: what the call runner needs from a model provider, the registry of providers,
and which provider answers a model name (names, endpoints, keys, identities).

A provider is an ``async (CallRequest) -> CallResult`` callable that also says who it is: ``provider``
(e.g. ``"gemini"``), ``model`` (the model its calls default to) and ``endpoint`` (the base URL it talks to;
a local test server in tests), and gives the ``generation_settings()`` its requests carry (which include its
identity, so they enter the cache key). :func:`.calls.run_calls` owns rate limits, concurrency, retries and
the cache; a provider owns only the wire: building the request, classifying errors as
:class:`.calls.RetryableError` or an ``error`` result, and reading the reply and token counts.

Adding a provider is one module here defining a class with these attributes and a ``make(model, *,
base_url, cache, provider)`` factory, plus its line in :data:`PROVIDERS`. Modules are imported only when their
provider is used, so a provider's SDK is needed only by runs that use it.

**Model names.** A model is named with its provider in front: ``gemini/gemini-2.5-flash``,
``openai/gpt-4o-mini``, ``vllm/Qwen/Qwen2.5-Omni-7B``, ``sglang/Qwen/Qwen2.5-VL-7B-Instruct``. Only
the first ``/`` separates the provider, so Hugging Face names with their own ``/`` stay whole.

Decisions and edge cases:

* **Bare Gemini names** (``gemini-2.5-flash``, no provider) keep working, with a
  :class:`DeprecationWarning` naming the spelling to use. Any other bare name is refused with a
  :class:`ValueError` that says which prefixes exist: guessing a provider for ``Qwen/Qwen2.5-Omni-7B``
  (vLLM? SGLang?) would file its answers under the wrong identity.
* **Endpoints**: an explicit endpoint (``--endpoint``) wins; else the provider's environment variable
  (``OPENAI_BASE_URL``, ``VLLM_BASE_URL``, ``SGLANG_BASE_URL``, ``GEMINI_BASE_URL``); else the
  provider's documented default (OpenAI's API; vLLM's ``http://localhost:8000/v1``; SGLang's
  ``http://localhost:30000/v1``; Google's Gemini endpoint).
* **Keys** come only from the environment (or the caller) and are never part of an identity, a log
  line, a row or a cache key. ``openai`` needs ``OPENAI_API_KEY``; ``vllm``/``sglang`` use
  ``VLLM_API_KEY``/``SGLANG_API_KEY``, else ``OPENAI_API_KEY``, else the placeholder ``EMPTY`` (a local
  server started without ``--api-key`` accepts any key, but the SDK refuses none).
* **Identity** (:class:`ProviderIdentity`): provider, model and endpoint. Its
  :meth:`~ProviderIdentity.cache_identity` goes into the call cache key, so a reply from a local
  fake or a proxy is never served later as the real service's reply. The endpoint is normalised
  first (:func:`normalise_endpoint`): user info and query string are dropped (they can carry
  credentials), the scheme and host are lower-cased, a trailing ``/`` is removed.
"""

from __future__ import annotations

import importlib
import ipaddress
import json
import os
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Protocol, runtime_checkable
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    from ..cache import CallCache
    from ..calls import CallRequest, CallResult

# provider name -> module under providers/
PROVIDERS = {"gemini": "gemini", "openai": "openai_compat", "vllm": "openai_compat", "sglang": "openai_compat"}
OPENAI_COMPATIBLE = ("openai", "vllm", "sglang")

ENDPOINT_ENV = {"gemini": "GEMINI_BASE_URL", "openai": "OPENAI_BASE_URL", "vllm": "VLLM_BASE_URL",
                "sglang": "SGLANG_BASE_URL"}
DEFAULT_ENDPOINT = {
    "gemini": "https://generativelanguage.googleapis.com",
    "openai": "https://api.openai.com/v1",
    "vllm": "http://localhost:8000/v1",
    "sglang": "http://localhost:30000/v1",
}
KEY_ENV = {
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "openai": ("OPENAI_API_KEY",),
    "vllm": ("VLLM_API_KEY", "OPENAI_API_KEY"),
    "sglang": ("SGLANG_API_KEY", "OPENAI_API_KEY"),
}
LOCAL_PLACEHOLDER_KEY = "EMPTY"
# The request-settings key under which the identity travels (and so enters the cache key).
IDENTITY_SETTING = "provider_identity"


def parse_model_name(name: str) -> tuple[str, str]:
    """``(provider, model)`` of a provider-qualified name (see the module docstring).

    ``"vllm/Qwen/Qwen2.5-Omni-7B" -> ("vllm", "Qwen/Qwen2.5-Omni-7B")``; a bare ``gemini-…`` name
    gives ``("gemini", name)`` with a DeprecationWarning; anything else without a known provider,
    or with an empty model part, raises ValueError.
    """
    text = (name or "").strip()
    if not text:
        raise ValueError("empty model name; use PROVIDER/MODEL, e.g. gemini/gemini-2.5-flash")
    head, sep, rest = text.partition("/")
    if sep and head.lower() in PROVIDERS:
        if not rest.strip():
            raise ValueError(f"model name {name!r} has no model after {head}/")
        return head.lower(), rest.strip()
    if not sep and text.lower().startswith("gemini"):
        warnings.warn(f"bare model name {text!r} is deprecated; write gemini/{text}",
                      DeprecationWarning, stacklevel=2)
        return "gemini", text
    raise ValueError(f"model name {name!r} does not say its provider; write PROVIDER/MODEL with "
                     f"PROVIDER one of {', '.join(PROVIDERS)} (e.g. vllm/{text})")


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


def resolve_endpoint(provider: str, explicit: str | None = None,
                     env: Mapping[str, str] | None = None) -> str:
    """The provider's endpoint, normalised: ``explicit``, else its environment variable, else its
    default (see the module docstring)."""
    _check_provider(provider)
    env = os.environ if env is None else env
    value = (explicit or "").strip() or (env.get(ENDPOINT_ENV[provider]) or "").strip()
    return normalise_endpoint(value or DEFAULT_ENDPOINT[provider])


def resolve_api_key(provider: str, env: Mapping[str, str] | None = None) -> str:
    """The key to send to ``provider``, from the environment only (see the module docstring).
    ValueError naming the variables to set when the provider needs a key and none is set."""
    value = api_key_from_env(provider, env)
    if value:
        return value
    if provider in ("vllm", "sglang"):
        return LOCAL_PLACEHOLDER_KEY
    raise ValueError(f"no API key for {provider}: set {' or '.join(KEY_ENV[provider])}")


def api_key_from_env(provider: str, env: Mapping[str, str] | None = None) -> str | None:
    """The first of the provider's key variables that is set (blank counts as unset), else None."""
    _check_provider(provider)
    env = os.environ if env is None else env
    for var in KEY_ENV[provider]:
        value = (env.get(var) or "").strip()
        if value:
            return value
    return None


def _check_provider(provider: str) -> None:
    if provider not in PROVIDERS:
        raise ValueError(f"unknown model provider {provider!r}; known: {', '.join(sorted(PROVIDERS))}")


@dataclass(frozen=True)
class ProviderIdentity:
    """Who answered: ``provider`` (one of :data:`PROVIDERS`), ``model`` (the name the service
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


def identify(name: str, endpoint: str | None = None,
             env: Mapping[str, str] | None = None) -> ProviderIdentity:
    """The identity of a model name (:func:`parse_model_name`) at its endpoint
    (:func:`resolve_endpoint`, ``endpoint`` being ``--endpoint``)."""
    provider, model = parse_model_name(name)
    return ProviderIdentity(provider, model, resolve_endpoint(provider, endpoint, env))


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


def key_for(provider: str, variables: tuple[str, ...], env: Mapping[str, str] | None = None,
            endpoint: str = "") -> str:
    """The key to send, read from ``variables`` (a models-file entry's ``api_key_env``, else the
    provider's usual ones); the placeholder for a local server (vLLM, SGLang, or any provider at a loopback
    endpoint) without one; ValueError naming the variables otherwise (never the key)."""
    env = os.environ if env is None else env
    for var in variables:
        value = (env.get(var) or "").strip()
        if value:
            return value
    if provider in ("vllm", "sglang") or is_loopback(endpoint):
        return LOCAL_PLACEHOLDER_KEY
    raise ValueError(f"no API key: set {' or '.join(variables)} (or serve it at a loopback endpoint, which needs none)")


def provider_for(spec, cache: "CallCache | None" = None, env: Mapping[str, str] | None = None) -> Provider:
    """The provider of a resolved models-file entry (:class:`..models_config.ModelSpec`): its module's
    ``from_spec(spec, cache, api_key)``; ValueError when its key is missing."""
    _check_provider(spec.provider)
    module = importlib.import_module(f"{__package__}.{PROVIDERS[spec.provider]}")
    return module.from_spec(spec, cache, key_for(spec.provider, tuple(spec.api_key_env), env, spec.endpoint))


def make_provider(name: str, model: str, *, base_url: str | None = None,
                  cache: "CallCache | None" = None) -> Provider:
    """The provider ``name`` for ``model``; ValueError naming the known providers for an unknown name."""
    _check_provider(name)
    module = importlib.import_module(f"{__package__}.{PROVIDERS[name]}")
    return module.make(model, base_url=base_url, cache=cache, provider=name)
