"""The evaluation resource: which responders and models run, who judges, how fast, and where media lives.

Its fields are run configuration: ``epic-levels run --responders/--models/--endpoint/--judge`` passes them as
the run's resource config (seen with each run in the UI). A field left unset falls back to the environment:
``EPIC_LEVELS_RESPONDERS`` (default ``oracle,chance,presence,blind``), ``EPIC_LEVELS_MODELS`` (provider-qualified
model names, default none), ``EPIC_LEVELS_JUDGE_MODEL``, the providers' endpoint variables (``GEMINI_BASE_URL``,
``OPENAI_BASE_URL``, ``VLLM_BASE_URL``, ``SGLANG_BASE_URL``), ``EPIC_LEVELS_RPM``, ``EPIC_LEVELS_CONCURRENCY``,
``EPIC_LEVELS_MEDIA_ROOT``, ``EPIC_LEVELS_CAPTION_RESPONDERS`` (default every caption responder; the oracle
always runs). API keys are read only from the providers' key variables (``GEMINI_API_KEY`` /
``GOOGLE_API_KEY``, ``OPENAI_API_KEY``, ``VLLM_API_KEY``, ``SGLANG_API_KEY``) and never stored in config.

``models`` are ``PROVIDER/MODEL`` names (``gemini/gemini-2.5-flash``, ``vllm/Qwen/Qwen2.5-Omni-7B``); bare
Gemini names still work, with a deprecation warning. ``endpoint`` is the base URL of every model in
``models`` (so they must share a provider) and of the judge when it has that provider too. ``judge_model``
defaults to the first model.

``batch`` sends the model calls through the provider's batch mode (Gemini's Batch API; ``epic-levels run
--batch``); ``media_resolution`` (low/medium/high) and ``fps`` go into every Gemini model request's settings
(and so its cache key) when set (``--media-resolution``/``--fps``).
"""

import os
import warnings
from pathlib import Path

import dagster as dg

from ..captions.models import caption_judge
from ..captions.responders import OFFLINE_RESPONDERS as CAPTION_RESPONDERS
from ..responses.cache import CallCache
from ..responses.offline import OFFLINE_RESPONDERS
from ..responses.providers.base import Provider, api_key_from_env, make_provider, parse_model_name
from ..responses.providers.gemini_tokens import resolution_name
from ..responses.runner import ModelRun
from ..scoring.verdicts import model_judge
from ..settings import Paths


def _env(name: str, default: str) -> str:
    return os.environ.get(name, default)


def _parse(name: str) -> tuple[str, str]:
    """``(provider, model)`` of a model name; a deprecated bare Gemini name is logged as such, a bad name is a Failure."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            parsed = parse_model_name(name)
        except ValueError as exc:
            raise dg.Failure(str(exc)) from None
    for w in caught:
        dg.get_dagster_logger().warning(str(w.message))
    return parsed


class EvaluationResource(dg.ConfigurableResource):
    responders: str = ""
    models: str | None = None  # None: $EPIC_LEVELS_MODELS; "" runs no model
    judge_model: str = ""      # PROVIDER/MODEL; default: $EPIC_LEVELS_JUDGE_MODEL, else the first model
    endpoint: str = ""         # base URL of the models (one provider) and of a judge of that provider
    gemini_base_url: str = ""
    rpm: float = 0
    concurrency: int = 0
    media_root: str = ""
    batch: bool = False
    media_resolution: str = ""
    fps: float = 0
    caption_responders: str = ""  # "": $EPIC_LEVELS_CAPTION_RESPONDERS, else every caption responder

    def offline(self) -> list[str]:
        names = [n.strip() for n in (self.responders or _env("EPIC_LEVELS_RESPONDERS", ",".join(OFFLINE_RESPONDERS))).split(",") if n.strip()]
        unknown = [n for n in names if n not in OFFLINE_RESPONDERS]
        if unknown:
            raise dg.Failure(f"unknown offline responders {unknown}; known: {', '.join(OFFLINE_RESPONDERS)}")
        return names

    def model_names(self) -> list[str]:
        models = _env("EPIC_LEVELS_MODELS", "") if self.models is None else self.models
        return [m.strip() for m in models.split(",") if m.strip()]

    def judge_model_name(self) -> str:
        names = self.model_names()
        return self.judge_model or _env("EPIC_LEVELS_JUDGE_MODEL", "") or (names[0] if names else "")

    def limits(self) -> tuple[float, int]:
        return (self.rpm or float(_env("EPIC_LEVELS_RPM", "60")), self.concurrency or int(_env("EPIC_LEVELS_CONCURRENCY", "4")))

    def media_folder(self, paths: Paths) -> Path:
        return Path(self.media_root) if self.media_root else paths.source_media  # env, epic-levels.toml, data/media

    def cache(self, paths: Paths) -> CallCache:
        return CallCache(paths.cache / "calls.sqlite")

    def _endpoint_for(self, provider: str) -> str | None:
        """The explicit endpoint for ``provider`` (None: the provider's environment variable or default)."""
        models = {_parse(m)[0] for m in self.model_names()}
        if self.endpoint and len(models) > 1:
            raise dg.Failure(f"endpoint {self.endpoint} is given for models of several providers "
                             f"({', '.join(sorted(models))}); set each provider's *_BASE_URL instead")
        if self.endpoint and provider in models:
            return self.endpoint
        if provider == "gemini":
            return self.gemini_base_url or _env("GEMINI_BASE_URL", "") or None
        return None

    def caller(self, cache: CallCache, name: str) -> Provider:
        """The provider for a model name, at its endpoint; a Failure naming what is missing (never the key)."""
        provider, model = _parse(name)
        if provider in ("gemini", "openai") and not api_key_from_env(provider):
            variables = "GEMINI_API_KEY / GOOGLE_API_KEY" if provider == "gemini" else "OPENAI_API_KEY"
            raise dg.Failure(f"model {name} is configured but no {variables} is set")
        try:
            return make_provider(provider, model, base_url=self._endpoint_for(provider), cache=cache)
        except ValueError as exc:
            raise dg.Failure(f"model {name}: {exc}") from None

    def model_runs(self, cache: CallCache) -> list[ModelRun]:
        rpm, concurrency = self.limits()
        runs = []
        for m in self.model_names():
            caller = self.caller(cache, m)
            # media_resolution / fps are Gemini request settings; other providers sample frames their own way.
            media = self.media_settings() if caller.provider == "gemini" else {}
            runs.append(ModelRun.of(caller, cache, rpm, concurrency, media, batch=self.batch))
        return runs

    def media_settings(self) -> dict:
        """``media_resolution`` / ``fps`` request settings, only those set (unset ones leave cache keys as they were)."""
        try:
            resolution = resolution_name(self.media_resolution)
        except ValueError as exc:
            raise dg.Failure(str(exc)) from None
        out = {}
        if resolution:
            out["media_resolution"] = resolution
        if self.fps:
            if self.fps <= 0:
                raise dg.Failure(f"fps must be positive, got {self.fps}")
            out["fps"] = float(self.fps)
        return out

    def judge(self, cache: CallCache):
        """``(judge function, its PROVIDER/MODEL name)``, or ``(None, "")`` when no model is configured."""
        name = self.judge_model_name()
        if not name:
            return None, ""
        rpm, concurrency = self.limits()
        caller = self.caller(cache, name)
        return model_judge(caller, cache, rpm=rpm, concurrency=concurrency), f"{caller.provider}/{caller.model}"

    def caption_offline(self) -> list[str]:
        """The caption track's offline responders; the ``oracle`` always runs (it is the track's self-test)."""
        names = [n.strip() for n in (self.caption_responders or _env("EPIC_LEVELS_CAPTION_RESPONDERS", "")).split(",")
                 if n.strip()] or list(CAPTION_RESPONDERS)
        unknown = [n for n in names if n not in CAPTION_RESPONDERS]
        if unknown:
            raise dg.Failure(f"unknown caption responders {unknown}; known: {', '.join(CAPTION_RESPONDERS)}")
        return ["oracle", *[n for n in names if n != "oracle"]]

    def caption_judge(self, cache: CallCache):
        """The caption track's judge (the QA judge's provider and model), or ``(None, "")``."""
        name = self.judge_model_name()
        if not name:
            return None, ""
        rpm, concurrency = self.limits()
        caller = self.caller(cache, name)
        return (caption_judge(caller, cache, model=caller.model, rpm=rpm, concurrency=concurrency),
                f"{caller.provider}/{caller.model}")
