"""The evaluation plan: which responders and models a run evaluates, who judges, how fast (pure core).

Resolved once, from the run's flags (the command line's, or a run's resource config) over the environment over
the models file, and passed down. The models a project evaluates are *declared* in the models file
(``evaluate = [...]``): every materialization, however launched, evaluates that set. A run may narrow the
models it *asks* (``--models``); the other declared models are answered from the call cache only, so their rows
stay in the tables.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from .captions.responders import OFFLINE_RESPONDERS as CAPTION_RESPONDERS
from .responses.models_config import (MODELS_FILE, ModelConfigError, ModelSpec, ModelsFile, find_models_file,
                                      is_inline_name, resolve)
from .responses.cache import CallCache
from .responses.calls import run_blocking
from .responses.offline import OFFLINE_RESPONDERS
from .responses.providers.base import Provider
from .responses.providers.registry import parse_model_name, provider_for
from .responses.providers.gemini_tokens import resolution_name
from .responses.runner import ModelRun

ENV = {"responders": "EPIC_LEVELS_RESPONDERS", "caption_responders": "EPIC_LEVELS_CAPTION_RESPONDERS",
       "models": "EPIC_LEVELS_MODELS", "model_config": "EPIC_LEVELS_MODEL_CONFIG", "judge": "EPIC_LEVELS_JUDGE_MODEL",
       "rpm": "EPIC_LEVELS_RPM", "concurrency": "EPIC_LEVELS_CONCURRENCY"}


class PlanError(ValueError):
    """What stops a plan, one line per problem (each names the model or setting and what to change)."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class RunFlags:
    """What a caller asks for; ``None`` (or ``""``) is "not given", so the environment and files decide."""

    responders: str | None = None
    caption_responders: str | None = None
    models: str | None = None          # narrows the declared set for this run (NAMEs, comma-separated)
    model_config: str | None = None
    endpoint: str | None = None        # base URL of the inline PROVIDER/MODEL names
    gemini_base_url: str | None = None
    judge: str | None = None           # NAME, PROVIDER/MODEL or "self"
    allow_self_judge: bool = False
    batch: bool = False
    media_resolution: str | None = None
    fps: float | None = None
    rpm: float | None = None
    concurrency: int | None = None
    strict_media: bool = False         # fail a run where a model's server ignored the audio or video it was sent


def flags_from_config(config) -> RunFlags:
    """The flags of a run's ``evaluation`` resource configuration (the fields :class:`..defs.evaluation.
    EvaluationResource` has; unset or empty ones are "not given")."""
    c = dict(config or {})

    def text(key):
        value = c.get(key)
        return None if value is None or value == "" else str(value)

    return RunFlags(
        responders=text("responders"), caption_responders=text("caption_responders"),
        models=None if c.get("models") is None else str(c["models"]), model_config=text("model_config_file"),
        endpoint=text("endpoint"), gemini_base_url=text("gemini_base_url"), judge=text("judge_model"),
        allow_self_judge=bool(c.get("allow_self_judge")), batch=bool(c.get("batch")),
        media_resolution=text("media_resolution"), fps=float(c["fps"]) if c.get("fps") else None,
        rpm=float(c["rpm"]) if c.get("rpm") else None,
        concurrency=int(c["concurrency"]) if c.get("concurrency") else None,
        strict_media=bool(c.get("strict_media")))


@dataclass(frozen=True)
class ModelPlan:
    """One declared model: its resolved settings, and whether this run asks it (else: the call cache only)."""

    spec: ModelSpec
    asked: bool = True


@dataclass(frozen=True)
class EvaluationPlan:
    responders: tuple[str, ...] = OFFLINE_RESPONDERS
    caption_responders: tuple[str, ...] = CAPTION_RESPONDERS
    models: tuple[ModelPlan, ...] = ()
    judge: ModelSpec | None = None     # the judge whose verdict counts (the panel's first under a majority)
    self_judging: bool = False
    judges: tuple[tuple[str, ModelSpec, bool], ...] = ()  # every judge asked: (NAME, spec, judges its own replies)
    verdict_by: str = ""               # whose verdict counts: a judge's NAME, "majority", or "" with no judge
    batch: bool = False
    strict_media: bool = False
    models_file: str | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def declared(self) -> tuple[str, ...]:
        return tuple(m.spec.name for m in self.models)

    @property
    def asked(self) -> tuple[ModelSpec, ...]:
        return tuple(m.spec for m in self.models if m.asked)

    def callers_needed(self) -> tuple[ModelSpec, ...]:
        """The models this run calls: every asked model, and every judge."""
        out = list(self.asked)
        for _, spec, _own in self.judges:
            if all(spec.cache_config() != s.cache_config() for s in out):
                out.append(spec)
        return tuple(out)


def _given(flag, env: Mapping[str, str], name: str) -> str:
    return str(flag) if flag not in (None, "") else (env.get(ENV[name]) or "").strip()


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.replace(" ", ",").split(",") if n.strip()]


def _responders(text: str, known: tuple[str, ...], what: str) -> tuple[str, ...]:
    names = _names(text) if text else list(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise PlanError([f"unknown {what} {', '.join(unknown)} (known: {', '.join(known)})"])
    return tuple(names)


def _number(text: str, kind, what: str):
    if not text:
        return None
    try:
        value = kind(text)
    except ValueError:
        raise PlanError([f"{what} must be a number, got {text!r}"]) from None
    if value < 0:
        raise PlanError([f"{what} must not be negative, got {text!r}"])
    return value


def load_models(root: Path, flags: RunFlags, env: Mapping[str, str]) -> ModelsFile | None:
    """The models file in use: ``--model-config``, else ``$EPIC_LEVELS_MODEL_CONFIG``, else ``ROOT/models.toml``."""
    explicit = _given(flags.model_config, env, "model_config") or None
    try:
        return find_models_file(Path(root), explicit)
    except ModelConfigError as exc:
        raise PlanError(exc.problems) from None


def _endpoint_env(flags: RunFlags, env: Mapping[str, str]) -> dict:
    """Where inline names' endpoint variables (``VLLM_BASE_URL``, …) are read: the plan's environment over the
    process's, and the run configuration's ``gemini_base_url`` (the older spelling of ``GEMINI_BASE_URL``) over both."""
    out = {**os.environ, **env}
    if flags.gemini_base_url:
        out["GEMINI_BASE_URL"] = flags.gemini_base_url
    return out


def _resolve(names: list[str], models_file: ModelsFile | None, flags: RunFlags, env: Mapping[str, str],
             *, with_flags: bool) -> list[ModelSpec]:
    rpm = _number(str(flags.rpm) if flags.rpm else (env.get(ENV["rpm"]) or ""), float, "rpm")
    concurrency = _number(str(flags.concurrency) if flags.concurrency else (env.get(ENV["concurrency"]) or ""),
                          int, "concurrency")
    specs, problems = [], []
    for name in names:
        try:
            spec = resolve([name], models_file, flags.endpoint or None, _endpoint_env(flags, env))[0].with_limits(
                rpm, concurrency)
            if with_flags:
                spec = spec.with_flags(fps=flags.fps or None, media_resolution=flags.media_resolution or None)
            specs.append(spec)
        except (ModelConfigError, ValueError) as exc:
            problems += getattr(exc, "problems", [str(exc)])
    if problems:
        raise PlanError(problems)
    return specs


def _declared(models_file: ModelsFile | None) -> list[str]:
    return list(models_file.evaluate) if models_file is not None else []


def _narrowed(declared: list[str], asked_text: str, models_file: ModelsFile | None) -> list[str]:
    """The declared models this run asks (all of them unless ``--models`` names a subset)."""
    if not asked_text:
        return declared
    asked = _names(asked_text)
    where = models_file.path if models_file is not None else MODELS_FILE
    outside = [n for n in asked if n not in declared]
    if outside:
        entry = outside[0]
        raise PlanError([f"model {entry!r} is not declared: add it to evaluate = [...] in {where} (the models every "
                         f"run evaluates; declared: {', '.join(declared) or 'none'}); --models only narrows that set"
                         + ("" if is_inline_name(entry) or (models_file and entry in models_file.models)
                            else f", and define it as [models.{entry}]")])
    return [n for n in declared if n in asked]


def _check_endpoint_flag(flags: RunFlags, names: list[str], models_file: ModelsFile | None) -> None:
    if not flags.endpoint:
        return
    inline = [n for n in names if not (models_file and n in models_file.models)]
    providers = set()
    for name in inline:
        try:
            providers.add(parse_model_name(name)[0])
        except ValueError:
            continue
    if len(providers) > 1:
        raise PlanError([f"endpoint {flags.endpoint} is given for models of several providers "
                         f"({', '.join(sorted(providers))}); set each provider's *_BASE_URL instead"])
    if names and not inline:
        raise PlanError([f"--endpoint {flags.endpoint} applies to inline PROVIDER/MODEL names only; the models file "
                         "gives each of its models its endpoint"])


def _own(spec: ModelSpec, declared: list[ModelSpec]) -> list[str]:
    """The evaluated models a judge is (the same served model at the same endpoint, whatever its NAME)."""
    return [s.name for s in declared if (s.provider, s.model, s.endpoint) == (spec.provider, spec.model, spec.endpoint)]


def _judges(flags: RunFlags, env: Mapping[str, str], models_file: ModelsFile | None, declared: list[ModelSpec]
            ) -> tuple[tuple[tuple[str, ModelSpec, bool], ...], str]:
    """Every judge asked (the models file's ``judges``, led by the named judge when it is not among them; else the
    one named judge) and whose verdict counts; a judge that is an evaluated model only when allowed."""
    name = _given(flags.judge, env, "judge") or (models_file.judge if models_file and models_file.judge else "")
    listed = list(models_file.judges) if models_file is not None else []
    if name == "self":
        if len(declared) != 1:
            raise PlanError([f"judge self needs exactly one declared model, got {len(declared)} "
                             f"({', '.join(s.name for s in declared) or 'none'}); name the judge instead"])
        return ((declared[0].name, declared[0], True),), declared[0].name
    names = ([name] if name and name != "majority" and name not in listed else []) + listed
    if not names:
        return (), ""
    panel = []
    for n in names:
        spec = _resolve([n], models_file, flags, env, with_flags=False)[0]
        own = _own(spec, declared)
        if own and not flags.allow_self_judge:
            raise PlanError([f"judge {n} is also an evaluated model ({', '.join(own)}) and would judge its own replies: "
                             "pass --judge self (one model) or --allow-self-judge to mean it, or name another judge"])
        panel.append((n, spec, bool(own)))
    verdict_by = name if name == "majority" or name in names else names[0]
    return tuple(panel), verdict_by


def resolve_plan(root: Path, flags: RunFlags | None = None, env: Mapping[str, str] | None = None) -> EvaluationPlan:
    """The plan of a run in the project at ``root``; a :class:`PlanError` listing every problem."""
    flags = flags or RunFlags()
    env = {} if env is None else env
    responders = _responders(_given(flags.responders, env, "responders"), OFFLINE_RESPONDERS, "offline responders")
    captions = _responders(_given(flags.caption_responders, env, "caption_responders"), CAPTION_RESPONDERS,
                           "caption responders")
    captions = ("oracle", *[n for n in captions if n != "oracle"])  # the caption track's self-test always runs
    if flags.media_resolution:
        try:
            resolution_name(flags.media_resolution)
        except ValueError as exc:
            raise PlanError([str(exc)]) from None
    models_file = load_models(root, flags, env)
    declared_names = _declared(models_file)
    asked = set(_narrowed(declared_names, _given(flags.models, env, "models"), models_file))
    _check_endpoint_flag(flags, declared_names, models_file)
    specs = _resolve(declared_names, models_file, flags, env, with_flags=True)
    judges, verdict_by = _judges(flags, env, models_file, specs)
    counting = next((j for j in judges if j[0] == verdict_by), judges[0] if judges else None)
    notes = [line for spec in specs for line in spec.notes()]
    return EvaluationPlan(
        responders=responders, caption_responders=captions,
        models=tuple(ModelPlan(s, s.name in asked) for s in specs), judge=counting[1] if counting else None,
        self_judging=bool(counting and counting[2]), judges=judges, verdict_by=verdict_by,
        batch=bool(flags.batch), strict_media=bool(flags.strict_media),
        models_file=models_file.path if models_file else None, notes=tuple(notes))


def request_settings(spec: ModelSpec) -> dict:
    """What every request of a model carries beyond its provider's generation settings (so its cache key): the
    resolved model config, and what its provider takes per request (Gemini's ``media_resolution`` / ``fps``)."""
    return {"model_config": spec.cache_json(), **spec.facts.request_settings(spec)}


UNUSED_KEY = "not-asked"  # the key of a caller that is never called (a model answered from the cache only)


def caller_for(spec: ModelSpec, cache: CallCache | None, env: Mapping[str, str] | None = None, *,
               calls: bool = True) -> Provider:
    """The provider of a model; a caller that makes no calls needs no key. ValueError naming what is missing."""
    try:
        return provider_for(spec, cache, env if calls else {var: UNUSED_KEY for var in spec.api_key_env})
    except ValueError as exc:
        raise ValueError(f"model {spec.name}: {exc}") from None


def declaration_changes(current: dict[str, str], previous: dict[str, set[str]], where: str = "the tables") -> list[str]:
    """What changed since the models' rows were last written, one line each: a model that left the declaration (its
    rows leave ``where``), a model whose route-changing settings changed (new digest: asked again). ``current``:
    NAME -> digest of the declared models; ``previous``: NAME -> digests found in the rows written before."""
    lines = []
    for name in sorted(set(previous) - set(current)):
        lines.append(f"model {name} is no longer declared (evaluate = [...]): its rows leave {where}")
    for name in sorted(set(previous) & set(current)):
        old = sorted(d for d in previous[name] if d and d != current[name])
        if old:
            lines.append(f"model {name}: its settings changed (digest {', '.join(old)} -> {current[name]}): its "
                         "answers are asked again under the new settings")
    return lines


REACH_TIMEOUT_S = 10.0


def model_problems(plan: EvaluationPlan, env: Mapping[str, str] | None = None, *, reach: bool = True) -> list[str]:
    """The pre-flight of a plan's models: every model this run calls (the asked ones and the judge) has its key (none
    is needed at a loopback endpoint) and, with ``reach``, its endpoint answers. One line per problem, each naming
    the model and what to set; nothing is called beyond one listing request per model."""
    problems, callers = [], []
    for spec in plan.callers_needed():
        role = "model" if spec in plan.asked else "judge"
        try:
            callers.append((role, spec, provider_for(spec, None, env)))
        except ValueError as exc:
            problems.append(f"{role} {spec.name}: {exc}")
    if not reach or not callers:
        return problems

    async def ask(caller) -> str | None:
        check = getattr(caller, "reachable", None)
        if check is None:
            return None
        try:
            return await asyncio.wait_for(check(), REACH_TIMEOUT_S)
        except asyncio.TimeoutError:
            return f"no answer within {REACH_TIMEOUT_S:g} s"

    async def ask_all():
        return await asyncio.gather(*(ask(c) for _, _, c in callers))

    for (role, spec, _), why in zip(callers, run_blocking(ask_all())):
        if why:
            problems.append(f"{role} {spec.name}: its endpoint {spec.endpoint} does not answer ({why}): start the "
                            f"server, or set endpoint in [models.{spec.name}]" if spec.source != "inline" else
                            f"{role} {spec.name}: its endpoint {spec.endpoint} does not answer ({why})")
    return problems


def model_runs(plan: EvaluationPlan, cache: CallCache, env: Mapping[str, str] | None = None) -> list[ModelRun]:
    """One :class:`ModelRun` per declared model: asked ones call their provider, the others read the cache."""
    runs = []
    for entry in plan.models:
        spec = entry.spec
        caller = caller_for(spec, cache, env, calls=entry.asked)
        run = ModelRun.of(caller, cache, spec.rpm, spec.max_concurrency, request_settings(spec),
                          batch=plan.batch and entry.asked, model_config=spec.config_json())
        run.model, run.served_model, run.digest = spec.name, spec.model, spec.digest
        run.asked, run.conditions = entry.asked, spec.conditions
        runs.append(run)
    return runs


__all__ = ["EvaluationPlan", "ModelPlan", "PlanError", "RunFlags", "caller_for", "declaration_changes",
           "flags_from_config", "load_models", "model_problems",
           "model_runs",
           "request_settings", "resolve_plan"]
