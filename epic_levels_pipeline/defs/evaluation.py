"""The evaluation resource: which responders and models run, how fast, and where media lives.

Its fields are run configuration: ``epic-levels run --responders/--models`` passes them as the run's
resource config (seen with each run in the UI). A field left unset falls back to the environment:
``EPIC_LEVELS_RESPONDERS`` (default ``oracle,chance,presence,blind``), ``EPIC_LEVELS_MODELS`` (Gemini
model names, default none), ``EPIC_LEVELS_JUDGE_MODEL``, ``GEMINI_BASE_URL`` (for a local test server),
``EPIC_LEVELS_RPM``, ``EPIC_LEVELS_CONCURRENCY``, ``EPIC_LEVELS_MEDIA_ROOT``. ``batch`` sends the model
calls through Gemini's Batch API (``epic-levels run --batch``); ``media_resolution`` (low/medium/high)
and ``fps`` go into every model request's settings (and so its cache key) when set. The API key is read only
from ``GEMINI_API_KEY`` / ``GOOGLE_API_KEY`` and never stored in config.
"""

import os
from pathlib import Path

import dagster as dg

from ..responses.cache import CallCache
from ..responses.providers.base import make_provider
from ..responses.providers.gemini import GeminiCaller, api_key_from_env, generation_settings
from ..responses.providers.gemini_tokens import resolution_name
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
    batch: bool = False
    media_resolution: str = ""
    fps: float = 0

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
            runs.append(ModelRun("gemini", m, caller, cache, rpm, concurrency,
                                 {**generation_settings(caller.settings), **self.media_settings()}, batch=self.batch))
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
        model = self.judge_model_name()
        if not model or not api_key_from_env():
            return None, ""
        rpm, concurrency = self.limits()
        return gemini_judge(self.caller(cache, model), cache, model=model, rpm=rpm, concurrency=concurrency), model
