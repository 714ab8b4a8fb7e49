"""The evaluation resource: which responders and models run, who judges, how fast, and where media lives.

Its fields are run configuration: ``epic-levels run --responders/--models/--model-config/--endpoint/--judge``
passes them as the run's resource config (seen with each run in the UI). A field left unset falls back to the
environment: ``EPIC_LEVELS_RESPONDERS`` (default ``oracle,chance,presence,blind``), ``EPIC_LEVELS_MODELS``,
``EPIC_LEVELS_MODEL_CONFIG`` (the models file; default ``models.toml`` at the project root when there is one),
``EPIC_LEVELS_JUDGE_MODEL``, the providers' endpoint variables (``GEMINI_BASE_URL``, ``OPENAI_BASE_URL``,
``VLLM_BASE_URL``, ``SGLANG_BASE_URL``; for inline names), ``EPIC_LEVELS_MEDIA_ROOT``,
``EPIC_LEVELS_CAPTION_RESPONDERS`` (default every caption responder; the oracle always runs). API keys are read
only from the variables a model names (``api_key_env``, else its provider's) and never stored in config.

``models`` are NAMEs of the models file or inline ``PROVIDER/MODEL`` names with their provider's defaults
(:mod:`..responses.models_config`); a problem with either fails the run before any call, naming file, model and
key. ``endpoint`` is the base URL of the inline models (so they must share a provider).

**Limits** are each model's (``max_concurrency`` / ``rpm`` in the file, else its provider's defaults: 16 in
flight and no rate limit for a local server); ``EPIC_LEVELS_CONCURRENCY`` / ``EPIC_LEVELS_RPM`` override every
model, and the ``concurrency`` / ``rpm`` fields override those.

**The judge** is named (``judge_model``, ``--judge``, ``$EPIC_LEVELS_JUDGE_MODEL``, else the file's ``judge``); with
none, undecided open replies stay undecided. A model judging its own replies is refused unless asked for:
``--judge self`` (the run's one model) or ``allow_self_judge`` (``--allow-self-judge``); verdicts then carry
``self_judged``.

``batch`` sends the model calls through the provider's batch mode (Gemini's Batch API; ``epic-levels run
--batch``); ``media_resolution`` (low/medium/high) and ``fps`` are applied to every model where they mean something
(:meth:`..responses.models_config.ModelSpec.with_flags`) and are an error naming the model where they do not.
"""

import os
from pathlib import Path

import dagster as dg

from ..captions.models import caption_judge
from ..captions.responders import OFFLINE_RESPONDERS as CAPTION_RESPONDERS
from ..responses.cache import CallCache
from ..responses.offline import OFFLINE_RESPONDERS
from ..responses.models_config import ModelConfigError, ModelSpec, ModelsFile, find_models_file, resolve
from ..responses.providers.base import Provider, parse_model_name, provider_for
from ..responses.providers.gemini_tokens import resolution_name
from ..responses.runner import ModelRun
from ..scoring.verdicts import model_judge
from ..settings import Paths, project_root


def _env(name: str, default: str) -> str:
    return os.environ.get(name, default)


class EvaluationResource(dg.ConfigurableResource):
    responders: str = ""
    models: str | None = None  # None: $EPIC_LEVELS_MODELS; "" runs no model
    model_config_file: str = ""  # the models file; "": $EPIC_LEVELS_MODEL_CONFIG, else ROOT/models.toml if present
    judge_model: str = ""      # NAME, PROVIDER/MODEL or "self"; default: $EPIC_LEVELS_JUDGE_MODEL, else the file's
    allow_self_judge: bool = False
    endpoint: str = ""         # base URL of the inline models (one provider)
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

    def media_folder(self, paths: Paths) -> Path:
        return Path(self.media_root) if self.media_root else paths.source_media  # env, epic-levels.toml, data/media

    def cache(self, paths: Paths) -> CallCache:
        return CallCache(paths.cache / "calls.sqlite")

    def models_file(self) -> ModelsFile | None:
        """The models file in use (None: none given and no ``models.toml`` at the project root)."""
        try:
            return find_models_file(project_root(), self.model_config_file or _env("EPIC_LEVELS_MODEL_CONFIG", "") or None)
        except ModelConfigError as exc:
            raise dg.Failure(str(exc)) from None

    def judge_model_name(self) -> str:
        """The judge asked for ("" for none): ``judge_model``, else ``$EPIC_LEVELS_JUDGE_MODEL``, else the file's."""
        if self.judge_model or _env("EPIC_LEVELS_JUDGE_MODEL", ""):
            return self.judge_model or _env("EPIC_LEVELS_JUDGE_MODEL", "")
        models_file = self.models_file()
        return (models_file.judge or "") if models_file else ""

    def limit_overrides(self) -> tuple[float | None, int | None]:
        """``(rpm, concurrency)`` overriding every model's, None where not set (fields, then the environment)."""
        rpm = self.rpm or (float(_env("EPIC_LEVELS_RPM", "")) if _env("EPIC_LEVELS_RPM", "") else None)
        concurrency = self.concurrency or (int(_env("EPIC_LEVELS_CONCURRENCY", "")) if _env("EPIC_LEVELS_CONCURRENCY", "") else None)
        return rpm, concurrency

    def _resolve(self, names: list[str], *, flags: bool) -> list[ModelSpec]:
        models_file = self.models_file()
        inline = [n for n in names if not (models_file and n in models_file.models)]
        providers = set()
        for name in inline:
            try:
                providers.add(parse_model_name(name)[0])
            except ValueError:
                continue  # resolve() says what is wrong with it
        if self.endpoint and len(providers) > 1:
            raise dg.Failure(f"endpoint {self.endpoint} is given for models of several providers "
                             f"({', '.join(sorted(providers))}); set each provider's *_BASE_URL instead")
        if self.endpoint and names and not inline:
            raise dg.Failure(f"--endpoint {self.endpoint} applies to inline PROVIDER/MODEL names only; "
                             "the models file gives each of its models its endpoint")
        rpm, concurrency = self.limit_overrides()
        try:
            specs = []
            for name in names:
                endpoint = self.endpoint or None
                if name in inline and name.lower().startswith("gemini"):
                    endpoint = self.gemini_base_url or _env("GEMINI_BASE_URL", "") or endpoint
                spec = resolve([name], models_file, endpoint)[0].with_limits(rpm, concurrency)
                if flags:
                    spec = spec.with_flags(fps=self.fps or None, media_resolution=self.media_resolution or None)
                specs.append(spec)
            return specs
        except (ModelConfigError, ValueError) as exc:
            raise dg.Failure(str(exc)) from None

    def model_specs(self) -> list[ModelSpec]:
        """Every model of the run, resolved and checked (a Failure before any call)."""
        if self.media_resolution:
            try:
                resolution_name(self.media_resolution)
            except ValueError as exc:
                raise dg.Failure(str(exc)) from None
        return self._resolve(self.model_names(), flags=True)

    def default_notes(self) -> list[str]:
        """One line per default a model of the run takes (printed once per run by ``epic-levels run``)."""
        return [line for spec in self.model_specs() for line in spec.notes()]

    def provider(self, cache: CallCache, spec: ModelSpec) -> Provider:
        """The provider of a resolved model; a Failure naming what is missing (never the key)."""
        try:
            return provider_for(spec, cache)
        except ValueError as exc:
            raise dg.Failure(f"model {spec.name}: {exc}") from None

    def model_runs(self, cache: CallCache) -> list[ModelRun]:
        runs = []
        log = dg.get_dagster_logger()
        for spec in self.model_specs():
            for line in spec.notes():
                log.info(line)
            caller = self.provider(cache, spec)
            runs.append(ModelRun.of(caller, cache, spec.rpm, spec.max_concurrency, request_settings(spec),
                                    batch=self.batch, model_config=spec.config_json()))
        return runs

    def judge_spec(self) -> tuple[ModelSpec | None, bool]:
        """``(the judge's spec, whether it judges its own replies)``; ``(None, False)`` with no judge. A model
        judging its own replies without ``--judge self`` or ``allow_self_judge`` is a Failure."""
        name = self.judge_model_name()
        if not name:
            return None, False
        names = self.model_names()
        if name == "self":
            if len(names) != 1:
                raise dg.Failure(f"--judge self needs exactly one model in the run, got {len(names)} "
                                 f"({', '.join(names) or 'none'}); name the judge instead")
            return self._resolve(names, flags=False)[0], True
        spec = self._resolve([name], flags=False)[0]
        own = [s.name for s in self._resolve(names, flags=False) if s.cache_config() == spec.cache_config()]
        if own and not self.allow_self_judge:
            raise dg.Failure(f"judge {name} is also a model of the run ({', '.join(own)}) and would judge its own "
                             "replies: pass --judge self (one model) or --allow-self-judge to mean it, or name "
                             "another judge")
        return spec, bool(own)

    def judge_panel(self) -> tuple[list[tuple[str, ModelSpec, bool]], str]:
        """Every judge asked — ``(NAME, spec, judges its own replies)``: the models file's ``judges``, led by the
        verdict's judge when that is not among them — and whose verdict counts: that judge's NAME, ``majority``,
        or ``""`` with no judge. Without ``judges`` it is :meth:`judge_spec`'s one judge."""
        name = self.judge_model_name()
        models_file = self.models_file()
        listed = list(models_file.judges) if models_file else []
        if not listed:
            spec, own = self.judge_spec()
            return ([] if spec is None else [(name, spec, own)]), ("" if spec is None else name)
        names = ([name] if name and name not in ("majority", "self") and name not in listed else []) + listed
        run = [s.cache_config() for s in self._resolve(self.model_names(), flags=False)]
        panel = []
        for n in names:
            spec = self._resolve([n], flags=False)[0]
            own = spec.cache_config() in run
            if own and not self.allow_self_judge:
                raise dg.Failure(f"judge {n} is also a model of the run and would judge its own replies: pass "
                                 "--allow-self-judge to mean it, or list other judges")
            panel.append((n, spec, own))
        return panel, (name if name in ("majority",) or name in names else names[0])

    def judge(self, cache: CallCache):
        """``(judge function, its PROVIDER/MODEL name)``, or ``(None, "")`` when no judge is named. The
        function's ``self_judging`` says whether it judges replies of its own model."""
        spec, own = self.judge_spec()
        if spec is None:
            return None, ""
        caller = self.provider(cache, spec)
        judge = model_judge(caller, cache, rpm=spec.rpm, concurrency=spec.max_concurrency)
        judge.self_judging = own
        return judge, f"{caller.provider}/{caller.model}" + (" (judging its own replies)" if own else "")

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
        spec, own = self.judge_spec()
        if spec is None:
            return None, ""
        caller = self.provider(cache, spec)
        return (caption_judge(caller, cache, model=caller.model, rpm=spec.rpm, concurrency=spec.max_concurrency),
                f"{caller.provider}/{caller.model}" + (" (judging its own captions)" if own else ""))


def request_settings(spec: ModelSpec) -> dict:
    """What every request of a model carries beyond its provider's generation settings (so its cache key):
    the resolved model config, and Gemini's ``media_resolution`` / ``fps`` request settings."""
    out = {"model_config": spec.cache_json()}
    if spec.provider == "gemini":
        if spec.media_resolution:
            out["media_resolution"] = resolution_name(spec.media_resolution)
        if spec.fps:
            out["fps"] = float(spec.fps)
    return out
