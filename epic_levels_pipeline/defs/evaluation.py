"""The evaluation resource: which responders and models run, how fast, and where media lives.

Its fields are run configuration: ``epic-levels run --responders/--models`` passes them as the run's
resource config (seen with each run in the UI). A field left unset falls back to the environment:
``EPIC_LEVELS_RESPONDERS`` (default ``oracle,chance,presence,blind``), ``EPIC_LEVELS_MODELS`` (Gemini
model names, default none), ``EPIC_LEVELS_JUDGE_MODEL``, ``GEMINI_BASE_URL`` (for a local test server),
``EPIC_LEVELS_RPM``, ``EPIC_LEVELS_CONCURRENCY``, ``EPIC_LEVELS_MEDIA_ROOT``,
``EPIC_LEVELS_CAPTION_RESPONDERS`` (default every caption responder; the oracle always runs). The API key is read only
from ``GEMINI_API_KEY`` / ``GOOGLE_API_KEY`` and never stored in config.
"""

import os
from pathlib import Path

import dagster as dg

from ..captions.models import caption_judge
from ..captions.responders import OFFLINE_RESPONDERS as CAPTION_RESPONDERS
from ..responses.cache import CallCache
from ..responses.providers.base import make_provider
from ..responses.providers.gemini import GeminiCaller, api_key_from_env, generation_settings
from ..responses.offline import OFFLINE_RESPONDERS
from ..responses.runner import ModelRun
from ..scoring.verdicts import gemini_judge
from ..settings import Paths


def _env(name: str, default: str) -> str:
    return os.environ.get(name, default)


class EvaluationResource(dg.ConfigurableResource):
    responders: str = ""
    models: str | None = None  # None: $EPIC_LEVELS_MODELS; "" runs no model
    judge_model: str = ""
    gemini_base_url: str = ""
    rpm: float = 0
    concurrency: int = 0
    media_root: str = ""
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
        return self.judge_model or _env("EPIC_LEVELS_JUDGE_MODEL", "")

    def limits(self) -> tuple[float, int]:
        return (self.rpm or float(_env("EPIC_LEVELS_RPM", "60")), self.concurrency or int(_env("EPIC_LEVELS_CONCURRENCY", "4")))

    def media_folder(self, paths: Paths) -> Path:
        root = self.media_root or _env("EPIC_LEVELS_MEDIA_ROOT", "")
        return Path(root) if root else paths.media

    def cache(self, paths: Paths) -> CallCache:
        return CallCache(paths.cache / "calls.sqlite")

    def caller(self, cache: CallCache, model: str) -> GeminiCaller:
        return make_provider("gemini", model, base_url=self.gemini_base_url or _env("GEMINI_BASE_URL", "") or None,
                             cache=cache)

    def model_runs(self, cache: CallCache) -> list[ModelRun]:
        names = self.model_names()
        if names and not api_key_from_env():
            raise dg.Failure(f"models {names} are configured but no GEMINI_API_KEY / GOOGLE_API_KEY is set")
        rpm, concurrency = self.limits()
        runs = []
        for m in names:
            caller = self.caller(cache, m)
            runs.append(ModelRun("gemini", m, caller, cache, rpm, concurrency, generation_settings(caller.settings)))
        return runs

    def judge_caller(self, cache: CallCache):
        """``(caller, model)`` of the judge, or ``(None, "")`` when none is configured (or no key is set)."""
        model = self.judge_model_name()
        if not model or not api_key_from_env():
            return None, ""
        return self.caller(cache, model), model

    def _judge_from(self, make, cache: CallCache):
        """``(make(caller, cache, model=…, rpm=…, concurrency=…), model)`` for the judge, or ``(None, "")``."""
        caller, model = self.judge_caller(cache)
        if caller is None:
            return None, ""
        rpm, concurrency = self.limits()
        return make(caller, cache, model=model, rpm=rpm, concurrency=concurrency), model

    def judge(self, cache: CallCache):
        return self._judge_from(gemini_judge, cache)

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
        return self._judge_from(caption_judge, cache)
