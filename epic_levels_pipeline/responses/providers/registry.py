"""The providers a model can be served by: each provider module declares its facts and registers them here;
everything else asks the registry (names, endpoints, keys, limits, routes, pricing, callers).

A provider is a :class:`ProviderFacts` subclass, instantiated once and passed to :func:`register` by its own
module: its name, endpoint and key variables, whether it is a local server, its default routes and the
models-file keys it takes, its default limits and prices, how it asks for structured output, and
:meth:`ProviderFacts.caller`, which makes its ``async (CallRequest) -> CallResult`` caller (:class:`.base.Provider`)
for a resolved models-file entry. Differences between providers are methods a provider overrides.

Decisions:

* **Built-in providers** (:data:`BUILTIN`: ``gemini``, ``openai``, ``vllm``, ``sglang``) are imported on first
  use, so a provider's SDK is loaded only by the runs that use it; their names are known without importing.
* **Other providers** register by being imported (a test module, a user's module), or through the entry point
  group :data:`ENTRY_POINT_GROUP` (``epic_levels.providers``): an installed package that names its module there
  is imported the first time its provider name is asked for, in every process (the CLI, the UI's code server,
  the daemon's runs). A name is registered once; a built-in name only by its own module.
* **Model names** (:func:`parse_model_name`): the provider in front (``vllm/Qwen/Qwen2.5-Omni-7B``; only the
  first ``/`` separates it). A bare name is refused, except a provider's deprecated bare spelling
  (:attr:`ProviderFacts.bare_prefix`: ``gemini-2.5-flash``), which works with a DeprecationWarning.
* **Endpoints** (:func:`resolve_endpoint`): an explicit one wins, else the provider's variable, else its
  default. **Keys** (:func:`key_for`) come only from the environment, never into an identity, row, log or cache
  key; a provider that needs none (a local server) or any provider at a loopback endpoint gets the placeholder
  :data:`.base.LOCAL_PLACEHOLDER_KEY` when none is set.
"""

from __future__ import annotations

import functools
import importlib
import os
import warnings
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Mapping

from .base import LOCAL_PLACEHOLDER_KEY, ProviderIdentity, is_loopback, normalise_endpoint
from .rates import MediaRates, Price

if TYPE_CHECKING:
    from ..cache import CallCache
    from .base import Provider

# provider name -> its module under providers/ (imported on first use)
BUILTIN = {"gemini": "gemini", "openai": "openai_compat", "vllm": "openai_compat", "sglang": "openai_compat"}
ENTRY_POINT_GROUP = "epic_levels.providers"
LOCAL_CONCURRENCY = 16
HOSTED_CONCURRENCY = 32
# The models-file keys a provider may or may not take (the others apply to every provider).
OPTIONAL_KEYS = ("video", "audio", "fps", "max_frames", "extra_body", "media_resolution", "structured_output")


class ProviderFacts:
    """What a provider is, for everything outside its module. Subclass it, set the facts, override what
    differs, and :func:`register` one instance (the class attributes' defaults suit a local server speaking an
    OpenAI-compatible API)."""

    name: str = ""                      # as written in `provider = "…"` and in PROVIDER/MODEL names
    endpoint_env: str = ""              # the variable that sets its endpoint (e.g. VLLM_BASE_URL)
    default_endpoint: str = ""          # its usual address
    key_env: tuple[str, ...] = ()       # the variables its key is read from, in order
    needs_key: bool = True              # False: a server that takes any key (the placeholder when none is set)
    local: bool | None = None           # True: always a local server; False: never; None: when at a loopback address
    endpoint_required: bool = False     # a models-file entry must name its endpoint (no canonical address)
    default_routes: tuple[str, str] = ("video_url", "separate")  # (video, audio) when the entry sets none
    takes: frozenset[str] = frozenset({"video", "audio", "fps", "max_frames", "extra_body", "structured_output"})
    declines: Mapping[str, str] = {}    # why a key of OPTIONAL_KEYS it does not take does not apply (optional)
    hosted_rpm: Mapping[str, float] = {}  # model -> its lowest paid tier's requests a minute ("*": the others)
    prices: Mapping[str, Price] = {}    # model -> published price (assumptions; --price overrides)
    bare_prefix: str = ""               # a bare model name starting with this is its own (deprecated spelling)
    checks_served_model: bool = False   # its server lists the one model it serves: the pre-flight checks the name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def caller(self, spec, cache: "CallCache | None", api_key: str) -> "Provider":
        """The caller of a resolved models-file entry (:class:`..models_config.ModelSpec`)."""
        raise NotImplementedError(f"provider {self.name} makes no caller")

    def make(self, model: str, *, base_url: str | None = None, cache: "CallCache | None" = None) -> "Provider":
        """A caller for ``model`` at ``base_url`` with the provider's defaults (:func:`make_provider`)."""
        raise NotImplementedError(f"provider {self.name}: name its models in the models file")

    def is_local(self, endpoint: str) -> bool:
        """Whether a server at ``endpoint`` is a local one (its limits are then a local server's)."""
        return self.local if self.local is not None else is_loopback(endpoint)

    def default_limits(self, model: str, endpoint: str) -> tuple[int, float, str]:
        """``(max_concurrency, rpm, why)`` for a model with nothing configured: a local server 16 in flight and no
        rate limit; a hosted one 32 and its :attr:`hosted_rpm` (0, no limit, when it has none)."""
        if self.is_local(endpoint):
            return LOCAL_CONCURRENCY, 0.0, f"default for a local {self.name} server"
        rpm = self.hosted_rpm.get(model, self.hosted_rpm.get("*", 0.0))
        return HOSTED_CONCURRENCY, float(rpm), f"assumed {self.name} tier-1 limit for {model}"

    def check_entry(self, entry) -> list[tuple[str, str]]:
        """``(key, message)`` of the values of a models-file entry (:class:`..models_config.ModelEntry`) it cannot
        send, beyond the keys it does not take (:attr:`takes`, checked by the models file)."""
        if self.endpoint_required and not entry.endpoint:
            return [("endpoint", f"required for provider {self.name} (the server's base URL, e.g. "
                                 "http://127.0.0.1:8000/v1)")]
        return []

    def route_notes(self, video: str | None, audio: str | None) -> list[tuple[str, str]]:
        """``(key, why)`` of the routes an entry leaves to the provider's defaults (printed once per run)."""
        notes = []
        if video is None and "video" in self.takes:
            notes.append(("video", f"default for {self.name}"))
        if audio is None and "audio" in self.takes:
            notes.append(("audio", f"default for {self.name}"))
        return notes

    def request_settings(self, spec) -> dict:
        """What every request of a resolved model carries beyond its caller's generation settings (so its cache
        key): nothing unless the provider takes settings per request."""
        return {}

    def structured_settings(self, schema: dict, name: str) -> dict:
        """The request settings that ask for a reply matching the JSON Schema ``schema`` (named ``name``)."""
        return {"json_schema": schema, "response_schema_name": name}

    def media_rates(self, spec) -> MediaRates:
        """The route and media tokens a resolved model's calls cost (none known unless the provider says)."""
        return MediaRates(f"{spec.video}+{spec.audio}")

    def for_probe(self, caller: "Provider") -> "Provider":
        """The caller as ``epic-levels probe`` uses it (one request per route, nothing kept between them)."""
        return caller


_registered: dict[str, ProviderFacts] = {}


def register(facts: ProviderFacts) -> ProviderFacts:
    """Make ``facts`` the provider of its name; ValueError when the name is taken (a built-in name can only be
    registered by its own module) or is not a lower-case word."""
    name = facts.name
    if not name or name != name.strip().lower() or "/" in name:
        raise ValueError(f"provider name {name!r} must be a non-empty lower-case name without '/'")
    if name in BUILTIN and type(facts).__module__ != f"{__package__}.{BUILTIN[name]}":
        raise ValueError(f"provider {name} is built in; register yours under another name")
    if name in _registered and _registered[name] is not facts:
        raise ValueError(f"provider {name} is already registered ({_registered[name]!r})")
    _registered[name] = facts
    return facts


def unregister(name: str) -> None:
    """Forget a provider registered from outside (a test's); built-in providers stay."""
    if name not in BUILTIN:
        _registered.pop(name, None)


@functools.cache
def _entry_points() -> dict:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def names() -> tuple[str, ...]:
    """Every provider name a models file may use: the built-in ones, those registered, those of entry points."""
    return tuple(dict.fromkeys([*BUILTIN, *_registered, *_entry_points()]))


def get(name: str) -> ProviderFacts:
    """The facts of provider ``name`` (importing its module on first use); ValueError naming the known ones."""
    facts = _registered.get(name)
    if facts is not None:
        return facts
    if name in BUILTIN:
        importlib.import_module(f"{__package__}.{BUILTIN[name]}")
    elif name in _entry_points():
        loaded = _entry_points()[name].load()
        if isinstance(loaded, type) and issubclass(loaded, ProviderFacts):
            loaded = loaded()
        if isinstance(loaded, ProviderFacts) and loaded.name == name and name not in _registered:
            register(loaded)
    else:
        raise ValueError(f"unknown model provider {name!r}; known: {', '.join(sorted(names()))}")
    if name not in _registered:
        raise ValueError(f"provider {name}: its module was imported but registered no provider of that name")
    return _registered[name]


def registered() -> dict[str, ProviderFacts]:
    """The providers registered so far (their modules imported), by name; nothing is imported."""
    return dict(_registered)


def every() -> list[ProviderFacts]:
    """The facts of every provider (importing them all)."""
    return [get(name) for name in names()]


def taken_by(key: str) -> str:
    """Where models-file ``key`` applies, as a phrase: ``only to gemini`` or ``to openai, vllm and sglang``."""
    takers = [f.name for f in every() if key in f.takes]
    if len(takers) == 1:
        return f"only to {takers[0]}"
    return "to " + ", ".join(takers[:-1]) + f" and {takers[-1]}" if takers else "to no provider's"


def parse_model_name(name: str) -> tuple[str, str]:
    """``(provider, model)`` of a provider-qualified name (see the module docstring).

    ``"vllm/Qwen/Qwen2.5-Omni-7B" -> ("vllm", "Qwen/Qwen2.5-Omni-7B")``; a provider's bare spelling
    (``gemini-2.5-flash``) gives ``("gemini", name)`` with a DeprecationWarning; anything else without a known
    provider, or with an empty model part, raises ValueError.
    """
    text = (name or "").strip()
    if not text:
        raise ValueError("empty model name; use PROVIDER/MODEL, e.g. gemini/gemini-2.5-flash")
    head, sep, rest = text.partition("/")
    if sep and head.lower() in names():
        if not rest.strip():
            raise ValueError(f"model name {name!r} has no model after {head}/")
        return head.lower(), rest.strip()
    if not sep:
        owner = bare_owner(text)
        if owner is not None:
            warnings.warn(f"bare model name {text!r} is deprecated; write {owner}/{text}",
                          DeprecationWarning, stacklevel=2)
            return owner, text
    raise ValueError(f"model name {name!r} does not say its provider; write PROVIDER/MODEL with "
                     f"PROVIDER one of {', '.join(names())} (e.g. vllm/{text})")


def bare_owner(text: str) -> str | None:
    """The provider whose deprecated bare spelling ``text`` is (``gemini-2.5-flash``: gemini), else None."""
    return next((f.name for f in every() if f.bare_prefix and text.lower().startswith(f.bare_prefix)), None)


def is_inline_name(name: str) -> bool:
    """Whether ``name`` is an inline ``PROVIDER/MODEL`` name (or a provider's bare, deprecated spelling)."""
    head, sep, _ = name.partition("/")
    return bool(sep) and head.lower() in names() or not sep and bare_owner(name) is not None


def resolve_endpoint(provider: str, explicit: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """The provider's endpoint, normalised: ``explicit``, else its variable, else its default."""
    facts = get(provider)
    env = os.environ if env is None else env
    from_env = (env.get(facts.endpoint_env) or "") if facts.endpoint_env else ""
    value = (explicit or "").strip() or from_env.strip()
    return normalise_endpoint(value or facts.default_endpoint)


def api_key_from_env(provider: str, env: Mapping[str, str] | None = None) -> str | None:
    """The first of the provider's key variables that is set (blank counts as unset), else None."""
    return _first_set(get(provider).key_env, env)


def _first_set(variables, env: Mapping[str, str] | None) -> str | None:
    env = os.environ if env is None else env
    for var in variables:
        value = (env.get(var) or "").strip()
        if value:
            return value
    return None


def resolve_api_key(provider: str, env: Mapping[str, str] | None = None) -> str:
    """The key to send to ``provider``, from the environment only: ValueError naming the variables to set when it
    needs a key and none is set; the placeholder for a server that needs none."""
    value = api_key_from_env(provider, env)
    if value:
        return value
    facts = get(provider)
    if not facts.needs_key:
        return LOCAL_PLACEHOLDER_KEY
    raise ValueError(f"no API key for {provider}: set {' or '.join(facts.key_env)}")


def key_for(provider: str, variables: tuple[str, ...], env: Mapping[str, str] | None = None,
            endpoint: str = "") -> str:
    """The key to send, read from ``variables`` (a models-file entry's ``api_key_env``, else the provider's usual
    ones); the placeholder for a server that needs none (vLLM, SGLang, or any provider at a loopback endpoint)
    without one; ValueError naming the variables otherwise (never the key)."""
    value = _first_set(variables, env)
    if value:
        return value
    if not get(provider).needs_key or is_loopback(endpoint):
        return LOCAL_PLACEHOLDER_KEY
    raise ValueError(f"no API key: set {' or '.join(variables)} (or serve it at a loopback endpoint, which needs none)")


def is_local(provider: str, endpoint: str) -> bool:
    """Whether ``provider`` at ``endpoint`` is a local server, as its provider says (False for an unknown name)."""
    return provider in names() and get(provider).is_local(endpoint)


def identify(name: str, endpoint: str | None = None, env: Mapping[str, str] | None = None) -> ProviderIdentity:
    """The identity of a model name (:func:`parse_model_name`) at its endpoint (:func:`resolve_endpoint`,
    ``endpoint`` being ``--endpoint``)."""
    provider, model = parse_model_name(name)
    return ProviderIdentity(provider, model, resolve_endpoint(provider, endpoint, env))


def provider_for(spec, cache: "CallCache | None" = None, env: Mapping[str, str] | None = None) -> "Provider":
    """The caller of a resolved models-file entry (:class:`..models_config.ModelSpec`): its provider's
    :meth:`ProviderFacts.caller` with the key :func:`key_for` finds; ValueError when its key is missing."""
    facts = get(spec.provider)
    return facts.caller(spec, cache, key_for(spec.provider, tuple(spec.api_key_env), env, spec.endpoint))


def make_provider(name: str, model: str, *, base_url: str | None = None,
                  cache: "CallCache | None" = None) -> "Provider":
    """The caller of provider ``name`` for ``model`` with its defaults; ValueError naming the known providers."""
    return get(name).make(model, base_url=base_url, cache=cache)


__all__ = ["BUILTIN", "ENTRY_POINT_GROUP", "OPTIONAL_KEYS", "ProviderFacts", "api_key_from_env", "every", "get",
           "identify", "is_inline_name", "is_local", "key_for", "make_provider", "names", "parse_model_name", "provider_for",
           "register", "registered", "resolve_api_key", "resolve_endpoint", "taken_by", "unregister"]
