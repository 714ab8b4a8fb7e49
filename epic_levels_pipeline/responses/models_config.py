"""The models file: which models a run asks, by which route, at which endpoint and how fast (pure core).

``models.toml`` at the project root (or ``--model-config FILE``) holds one table per model::

    judge = "qwen-omni-local"           # optional: the model that judges open replies (a NAME below)
    judges = ["qwen-omni-local", "gemini/gemini-2.5-flash"]  # optional: every judge asked (audited against
                                        # each other); the verdict is `judge`'s, or the majority: judge = "majority"

    [models.qwen-omni-local]
    provider = "vllm"                   # gemini | openai | vllm | sglang, or a provider registered from elsewhere
    model = "Qwen/Qwen2.5-Omni-7B"      # the name the server serves
    endpoint = "http://127.0.0.1:8000/v1"
    api_key_env = "VLLM_API_KEY"        # the variable to read; keys never live in the file
    video = "video_url"                 # video_url | frames | file_url | none
    audio = "in_video"                  # in_video | separate | none
    fps = 2.0
    max_frames = 64
    max_concurrency = 16
    rpm = 0                             # 0 = no request-rate limit
    timeout_s = 120
    extra_body = { temperature = 0.0 }
    structured_output = "json_object"   # json_schema (default) | json_object | none

It is parsed with :mod:`tomllib` and validated by pydantic (unknown keys are errors); every problem is
reported as ``FILE: [models.NAME].KEY: message`` before any call is made (:class:`ModelConfigError`).
A model is named on the command line by its NAME in the file, or inline as ``PROVIDER/MODEL``, which
takes the provider's defaults (:func:`resolve`).

Decisions (each default a model takes is listed in :attr:`ModelSpec.defaulted`, and printed once per run). Each
provider states its own defaults, limits and the keys it takes (:class:`.providers.registry.ProviderFacts`, in its
module); what the built-in providers state:

* **Routes** (``video``, ``audio``) are settings, never guessed from a model's name. Defaults:
  ``vllm``/``sglang`` send ``video_url`` + ``separate`` (``input_audio``: the window's track as a wav);
  an Omni model that reads the video's own track needs ``audio = "in_video"`` (vLLM's and SGLang's
  ``mm_processor_kwargs.use_audio_in_video``). ``openai`` sends ``frames`` + ``separate``. ``gemini`` sends
  the clip itself with its own track (``video``/``audio`` do not apply; ``audio = "in_video"`` is
  accepted as what it does).
* **fps / max_frames**: on the ``frames`` route the client samples ``fps`` frames a second, lowered so
  at most ``max_frames`` cover the window (defaults 1.0 and 32). On ``video_url`` / ``file_url`` the
  server samples the video: ``fps`` (with ``max_frames`` as the same bound) goes to the server's
  processor as ``mm_processor_kwargs.fps`` (the key Qwen2.5-VL / Omni processors take); ``max_frames``
  without ``fps`` is an error there, as is either with ``video = "none"``. For ``gemini``, ``fps`` and
  ``media_resolution`` (low | medium | high) are Gemini's own request settings; ``max_frames`` does not
  apply. ``media_resolution`` on any other provider is an error.
* **Endpoints**: ``vllm`` and ``sglang`` entries must name their ``endpoint`` (a local server has no
  canonical address); ``gemini`` and ``openai`` default to the service. Inline names keep the old rule
  (``--endpoint``, else the provider's ``*_BASE_URL`` variable, else its usual address).
* **Limits** (:func:`default_limits`): a local server (``vllm``, ``sglang``, or an ``openai`` endpoint on
  a loopback address) gets 16 requests in flight and no request-rate limit. Hosted APIs get their
  documented lowest paid tier as *assumptions* (each provider's ``hosted_rpm``: Gemini tier 1 — 2.5-flash 1,000,
  2.5-flash-lite 4,000, 2.5-pro 150 requests per minute; OpenAI tier 1 — gpt-4o / gpt-4o-mini 500) and 32
  in flight. ``max_concurrency`` / ``rpm`` in the file override them; ``EPIC_LEVELS_CONCURRENCY`` /
  ``EPIC_LEVELS_RPM`` override every model (applied by the caller of :meth:`ModelSpec.with_limits`).
* **Structured output** (judge and caption replies): ``structured_output = "json_schema"`` (default) sends the
  schema as ``response_format``; a server that takes only ``{"type": "json_object"}`` (llama.cpp's) gets
  ``"json_object"``, one that takes neither ``"none"``; both state the schema after the prompt, and every reply
  is checked against it. ``epic-levels probe`` says which form a server accepts. Not for ``gemini`` (its own
  ``response_schema``).
* **Identity**: :meth:`ModelSpec.cache_config` (everything that changes what the model sees or
  answers: provider, model, endpoint, routes, frame sampling, resolution, extra body) enters every
  request's cache key, so two routes of one model never share an answer; :meth:`ModelSpec.config_json`
  (that plus limits, timeout and the key's variable name, never a key) is each response row's
  ``model_config``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .providers import registry
from .providers.base import normalise_endpoint
from .providers.registry import is_inline_name, parse_model_name, resolve_endpoint

MODELS_FILE = "models.toml"
TOP_LEVEL = {  # the models file's top-level keys, with what each means (the reference page lists them)
    "evaluate": "the declared set: the models every run evaluates — `epic-levels run`, a launch in the UI, the "
                "sensor's re-run of an edited clip, the schedule (a list of NAMEs or PROVIDER/MODEL; `--models` "
                "narrows one run without removing the others' rows; only leaving this list removes a model's rows)",
    "judge": "the model that judges open replies the rules cannot decide (a NAME or PROVIDER/MODEL), or "
             "\"majority\" with several `judges`",
    "judges": "every judge asked about the same replies (a list); the verdict is `judge`'s, or the majority's",
    "models": "one table `[models.NAME]` per model, with the keys below",
}
VIDEO = ("video_url", "frames", "file_url", "none")
AUDIO = ("in_video", "separate", "none")
DEFAULT_FPS, DEFAULT_MAX_FRAMES, DEFAULT_TIMEOUT_S = 1.0, 32, 120.0
CONDITIONS = ("clip", "no_clip", "silenced")


class ModelConfigError(ValueError):
    """Problems of a models file or of a model asked for, one ``FILE: [models.NAME].KEY: message`` per line."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


class ModelEntry(BaseModel):
    """One ``[models.NAME]`` table as written (validated; unknown keys are errors)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    provider: str = Field(
        description=f"who serves the model: a registered provider — built in: {', '.join(registry.BUILTIN)} (Google's "
                    "Gemini API, OpenAI's API, a vLLM / SGLang server); others register from their own module (Models "
                    "page: Adding a provider)")
    model: str = Field(min_length=1,
        description="the name the service or server answers to (`GET /v1/models` lists it for vLLM / SGLang; the "
                    "server's --served-model-name)")
    endpoint: str | None = Field(default=None,
        description="the base URL; required for vllm and sglang, Google's or OpenAI's API otherwise")
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="the environment variable holding the key (keys never live in the file); default GEMINI_API_KEY /"
                    " GOOGLE_API_KEY, OPENAI_API_KEY, VLLM_API_KEY / SGLANG_API_KEY (else OPENAI_API_KEY, else the "
                    "placeholder EMPTY a server started without --api-key accepts)")
    video: Literal["video_url", "frames", "file_url", "none"] | None = Field(default=None,
        description="how the window's video is sent: video_url (a base64 data:video/mp4 URL), file_url (a file:// URL"
                    " of the cut window, for a server started with --allowed-local-media-path), frames (JPEG frames "
                    "sampled with ffmpeg, each an image_url part), none; default video_url for vllm and sglang, "
                    "frames for openai; gemini sends the clip itself")
    audio: Literal["in_video", "separate", "none"] | None = Field(default=None,
        description="how the audio is sent: in_video (mm_processor_kwargs.use_audio_in_video: an Omni processor reads"
                    " the video's own track; needs video_url or file_url), separate (the window's track as 16 kHz "
                    "mono wav in an input_audio part), none; default separate for vllm, sglang and openai; gemini "
                    "reads the video's own track")
    fps: float | None = Field(default=None, gt=0, allow_inf_nan=False,
        description="frames a second: sampled by the client on frames (default 1.0), sent as mm_processor_kwargs.fps "
                    "on video_url / file_url (default: the server's), Gemini's own fps setting for gemini")
    max_frames: int | None = Field(default=None, ge=1,
        description="at most this many frames cover a window (fps is lowered to fit); default 32 on frames; needs fps"
                    " on video_url / file_url; not for gemini")
    max_concurrency: int | None = Field(default=None, ge=1,
        description="requests in flight; default 16 for a local server (vllm, sglang, an openai endpoint on a "
                    "loopback address), 32 for hosted APIs; EPIC_LEVELS_CONCURRENCY overrides every model")
    rpm: float | None = Field(default=None, ge=0, allow_inf_nan=False,
        description="requests per minute (0: no limit); default none for a local server; hosted APIs their lowest "
                    "paid tier, as assumptions (Gemini 2.5-flash 1,000, 2.5-flash-lite 4,000, 2.5-pro 150, others "
                    "150; OpenAI gpt-4o and gpt-4o-mini 500, others 500); EPIC_LEVELS_RPM overrides every model")
    timeout_s: float | None = Field(default=None, gt=0, allow_inf_nan=False,
        description="each HTTP request's bound in seconds; default 120")
    extra_body: dict | None = Field(default=None,
        description="merged into every chat request (openai, vllm, sglang); its mm_processor_kwargs are merged with "
                    "the route's")
    media_resolution: Literal["low", "medium", "high"] | None = Field(default=None,
        description="gemini only: low (66 tokens a frame), medium or high; default the model's")
    structured_output: Literal["json_schema", "json_object", "none"] | None = Field(default=None,
        description="how judge and caption replies are asked for as JSON (openai, vllm, sglang): json_schema (the "
                    "schema as response_format; default), json_object (a JSON object, the schema stated after the "
                    "prompt), none (the schema stated after the prompt only); every reply is checked")
    conditions: list[Literal["clip", "no_clip", "silenced"]] | None = Field(default=None, min_length=1,
        description="the conditions the model is asked under, of clip, no_clip and silenced (default all three; a "
                    "text-only model: [\"no_clip\"])")


    @field_validator("provider")
    @classmethod
    def _registered(cls, value: str) -> str:
        if value not in registry.names():
            raise ValueError(f"unknown provider {value!r}: registered providers are {', '.join(registry.names())}")
        return value


def _coerce(table: dict) -> dict:
    out = dict(table)
    for key in ("fps", "rpm", "timeout_s"):
        if isinstance(out.get(key), int) and not isinstance(out.get(key), bool):
            out[key] = float(out[key])
    return out


@dataclass(frozen=True)
class ModelSpec:
    """A model as a run uses it: every setting resolved (see the module docstring)."""

    name: str                 # the NAME in the file, or the inline PROVIDER/MODEL
    provider: str
    model: str
    endpoint: str
    api_key_env: tuple[str, ...]
    video: str
    audio: str
    fps: float | None
    max_frames: int | None
    max_concurrency: int
    rpm: float
    timeout_s: float
    extra_body: dict = field(default_factory=dict)
    media_resolution: str | None = None
    source: str = "inline"    # the models file's path, or "inline"
    structured_output: str = "json_schema"
    defaulted: tuple[tuple[str, str], ...] = ()  # (key, why) of every default taken
    conditions: tuple[str, ...] = CONDITIONS  # the conditions the model is asked under

    @property
    def digest(self) -> str:
        """A short digest of the settings that change what the model sees or answers (``model_digest``)."""
        return hashlib.sha256(self.cache_json().encode()).hexdigest()[:12]

    @property
    def qualified(self) -> str:
        return f"{self.provider}/{self.model}"

    @property
    def local(self) -> bool:
        return is_local(self.provider, self.endpoint)

    @property
    def facts(self) -> registry.ProviderFacts:
        """Its provider's facts (:class:`.providers.registry.ProviderFacts`)."""
        return registry.get(self.provider)

    def cache_config(self) -> dict:
        """What changes what the model sees or answers (enters every request's cache key)."""
        out = {"provider": self.provider, "model": self.model, "endpoint": self.endpoint,
               "video": self.video, "audio": self.audio, "extra_body": self.extra_body}
        for key in ("fps", "max_frames", "media_resolution"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.structured_output != "json_schema":  # the default stays out, so existing cache keys hold
            out["structured_output"] = self.structured_output
        return out

    def cache_json(self) -> str:
        return json.dumps(self.cache_config(), sort_keys=True, separators=(",", ":"))

    def config_json(self) -> str:
        """Every resolved setting (never a key), for the ``model_config`` column."""
        out = {**self.cache_config(), "name": self.name, "max_concurrency": self.max_concurrency,
               "rpm": self.rpm, "timeout_s": self.timeout_s, "api_key_env": list(self.api_key_env),
               "source": self.source, "conditions": list(self.conditions), "digest": self.digest}
        return json.dumps(out, sort_keys=True, separators=(",", ":"))

    def notes(self) -> list[str]:
        """One line per default taken, e.g. ``audio: separate (default for vllm; …)``."""
        shown = {"video": self.video, "audio": self.audio, "fps": self.fps, "max_frames": self.max_frames,
                 "max_concurrency": self.max_concurrency, "rpm": self.rpm}
        return [f"{self.name}: {key}: {_show(shown.get(key))} ({why})" for key, why in self.defaulted
                if key in shown]

    def with_flags(self, *, fps: float | None = None, media_resolution: str | None = None) -> "ModelSpec":
        """The spec with ``--fps`` / ``--media-resolution`` applied where they mean something; a
        ModelConfigError naming the model and the flag where they do not (never ignored)."""
        problems, changes = [], {}
        if media_resolution:
            if "media_resolution" not in self.facts.takes:
                problems.append(f"model {self.name} ({self.provider}): --media-resolution applies "
                                f"{registry.taken_by('media_resolution')} models, not {self.provider}")
            else:
                changes["media_resolution"] = media_resolution
        if fps:
            if not (fps > 0 and math.isfinite(fps)):
                problems.append(f"model {self.name}: --fps must be a positive number, got {fps}")
            elif self.video == "none":
                problems.append(f"model {self.name}: --fps does not apply: its route sends no video "
                                "(video = \"none\")")
            else:
                changes["fps"] = float(fps)
        if problems:
            raise ModelConfigError(problems)
        return replace(self, **changes) if changes else self

    def with_limits(self, rpm: float | None = None, concurrency: int | None = None) -> "ModelSpec":
        """The spec with overriding limits (the environment's or the run config's) where given."""
        changes = {}
        if rpm is not None:
            changes["rpm"] = float(rpm)
        if concurrency is not None:
            changes["max_concurrency"] = int(concurrency)
        return replace(self, **changes) if changes else self


def _show(value) -> str:
    return "no limit" if value == 0 else str(value)


def is_local(provider: str, endpoint: str) -> bool:
    """Whether ``provider`` at ``endpoint`` is a local server (vLLM and SGLang always; an ``openai`` endpoint on a
    loopback address; its provider says)."""
    return registry.is_local(provider, endpoint)


def default_limits(provider: str, model: str, endpoint: str) -> tuple[int, float, str]:
    """``(max_concurrency, rpm, why)`` for a model with nothing configured (its provider's defaults)."""
    return registry.get(provider).default_limits(model, endpoint)


def _check_entry(entry: ModelEntry) -> list[tuple[str, str]]:
    """(key, message) of the combinations that cannot be sent: a key its provider does not take, then what its
    provider says of the values."""
    facts = registry.get(entry.provider)
    out = []
    for key in registry.OPTIONAL_KEYS:
        if getattr(entry, key) is not None and key not in facts.takes:
            why = facts.declines.get(key)
            out.append((key, f"applies {registry.taken_by(key)} models, not {facts.name}" + (f" ({why})" if why else "")))
    out += facts.check_entry(entry)
    if entry.extra_body is not None:
        try:
            json.dumps(entry.extra_body)
        except (TypeError, ValueError):
            out.append(("extra_body", "must hold only JSON values (no dates)"))
    return out


def spec_of(name: str, entry: ModelEntry, source: str) -> ModelSpec:
    """The resolved spec of a validated entry (see the module docstring for the defaults)."""
    p, facts = entry.provider, registry.get(entry.provider)
    endpoint = normalise_endpoint(entry.endpoint) if entry.endpoint else resolve_endpoint(p, None, {})
    video, audio = entry.video or facts.default_routes[0], entry.audio or facts.default_routes[1]
    defaulted = facts.route_notes(entry.video, entry.audio)
    fps, max_frames = entry.fps, entry.max_frames
    if video == "frames":
        if fps is None:
            fps, defaulted = DEFAULT_FPS, [*defaulted, ("fps", "default for the frames route")]
        if max_frames is None:
            max_frames, defaulted = DEFAULT_MAX_FRAMES, [*defaulted, ("max_frames", "default for the frames route")]
    concurrency, rpm, why = facts.default_limits(entry.model, endpoint)
    if entry.max_concurrency is None:
        defaulted.append(("max_concurrency", why))
    if entry.rpm is None:
        defaulted.append(("rpm", why))
    return ModelSpec(
        name=name, provider=p, model=entry.model, endpoint=endpoint,
        api_key_env=(entry.api_key_env,) if entry.api_key_env else tuple(facts.key_env),
        video=video, audio=audio, fps=fps, max_frames=max_frames,
        max_concurrency=entry.max_concurrency or concurrency,
        rpm=float(entry.rpm) if entry.rpm is not None else rpm,
        timeout_s=entry.timeout_s or DEFAULT_TIMEOUT_S, extra_body=dict(entry.extra_body or {}),
        media_resolution=entry.media_resolution, source=source, defaulted=tuple(defaulted),
        structured_output=entry.structured_output or "json_schema",
        conditions=tuple(c for c in CONDITIONS if c in entry.conditions) if entry.conditions else CONDITIONS)


@dataclass(frozen=True)
class ModelsFile:
    """A parsed, validated models file."""

    path: str
    models: dict[str, ModelSpec]
    judge: str | None = None
    judges: tuple[str, ...] = ()  # every judge asked (NAMEs or PROVIDER/MODEL); `judge` may be "majority"
    evaluate: tuple[str, ...] = ()  # the declared set: the models every run evaluates (NAMEs or PROVIDER/MODEL)


def _message(err: dict, known: list[str]) -> str:
    if err["type"] == "extra_forbidden":
        return f"unknown key (known: {', '.join(known)})"
    if err["type"] == "missing":
        return "required"
    if err["type"] == "value_error":
        return str(err.get("ctx", {}).get("error", err["msg"]))
    if err["type"] == "literal_error":
        return err["msg"].replace("Input should be", "must be")
    return err["msg"].replace("Input should be", "must be") + f" (got {err.get('input')!r})"


def load_models_file(path: str | Path) -> ModelsFile:
    """Parse and validate a models file; ModelConfigError listing every problem."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelConfigError([f"{path}: no such models file"]) from None
    except tomllib.TOMLDecodeError as exc:
        raise ModelConfigError([f"{path}: not valid TOML: {exc}"]) from None
    problems: list[str] = []
    for key in data:
        if key not in TOP_LEVEL:
            problems.append(f"{path}: {key}: unknown top-level key (known: {', '.join(TOP_LEVEL)})")
    tables = data.get("models", {})
    if not isinstance(tables, dict):
        raise ModelConfigError([*problems, f"{path}: models: must be tables [models.NAME]"])
    known = list(ModelEntry.model_fields)
    specs: dict[str, ModelSpec] = {}
    for name, table in tables.items():
        where = f"{path}: [models.{name}]"
        if not isinstance(table, dict):
            problems.append(f"{where}: must be a table of settings")
            continue
        try:
            entry = ModelEntry.model_validate(_coerce(table))
        except ValidationError as exc:
            for err in exc.errors():
                key = ".".join(str(x) for x in err["loc"]) or "?"
                problems.append(f"{where}.{key}: {_message(err, known)}")
            continue
        bad = _check_entry(entry)
        problems += [f"{where}.{key}: {message}" for key, message in bad]
        if bad:
            continue
        try:
            specs[name] = spec_of(name, entry, str(path))
        except ValueError as exc:
            problems.append(f"{where}.endpoint: {exc}")
    judge = data.get("judge")
    if judge is not None and not isinstance(judge, str):
        problems.append(f"{path}: judge: must be a model NAME (a string), got {judge!r}")
    elif judge is not None and judge not in ("self", "majority") and judge not in specs and "/" not in judge:
        problems.append(f"{path}: judge: {judge!r} is not a [models.NAME] of this file")
    judges, bad = judges_of(data.get("judges", []), specs, tables)
    problems += [f"{path}: judges: {message}" for message in bad]
    if judge == "majority" and len(judges) < 2:
        problems.append(f"{path}: judge: \"majority\" needs at least two judges in `judges`, got {len(judges)}")
    evaluate = data.get("evaluate", [])
    if not isinstance(evaluate, list) or not all(isinstance(n, str) and n.strip() for n in evaluate):
        problems.append(f"{path}: evaluate: must be a list of model NAMEs (or PROVIDER/MODEL), got {evaluate!r}")
        evaluate = []
    for name in evaluate:
        if name not in specs and name not in tables and not is_inline_name(name):
            problems.append(f"{path}: evaluate: {name!r} is not a [models.NAME] of this file, nor PROVIDER/MODEL")
    twice = sorted({n for n in evaluate if evaluate.count(n) > 1})
    if twice:
        problems.append(f"{path}: evaluate: {', '.join(twice)} listed more than once")
    if problems:
        raise ModelConfigError(problems)
    return ModelsFile(str(path), specs, judge, judges, tuple(evaluate))


def judges_of(value, specs: dict, tables: dict) -> tuple[tuple[str, ...], list[str]]:
    """The ``judges`` list (model NAMEs of the file or ``PROVIDER/MODEL``) and its problems."""
    if not isinstance(value, list) or not all(isinstance(n, str) and n.strip() for n in value):
        return (), [f"must be a list of model NAMEs (or PROVIDER/MODEL), got {value!r}"]
    problems = [f"{n!r} is not a [models.NAME] of this file, nor PROVIDER/MODEL" for n in value
                if n not in specs and n not in tables and "/" not in n]
    twice = sorted({n for n in value if value.count(n) > 1})
    if twice:
        problems.append(f"{', '.join(twice)} listed more than once")
    return tuple(value), problems


def inline_spec(name: str, endpoint: str | None = None, env: Mapping[str, str] | None = None) -> ModelSpec:
    """The spec of an inline ``PROVIDER/MODEL`` name with its provider's defaults; ``endpoint`` as
    ``--endpoint`` (else the provider's ``*_BASE_URL`` variable in ``env``, default the process's, else its usual
    address)."""
    provider, model = parse_model_name(name)
    entry = ModelEntry(provider=provider, model=model,
                       endpoint=resolve_endpoint(provider, endpoint, os.environ if env is None else env))
    return spec_of(f"{provider}/{model}", entry, "inline")


def find_models_file(root: Path, explicit: str | Path | None = None) -> ModelsFile | None:
    """``explicit`` (must exist), else ``ROOT/models.toml`` when there is one, else None."""
    if explicit:
        return load_models_file(explicit)
    default = Path(root) / MODELS_FILE
    return load_models_file(default) if default.is_file() else None


def resolve(names: list[str], models_file: ModelsFile | None, endpoint: str | None = None,
            env: Mapping[str, str] | None = None) -> list[ModelSpec]:
    """The specs of the names asked for: entries of the file by NAME, else inline ``PROVIDER/MODEL`` (their
    endpoint ``endpoint``, else their provider's variable in ``env``, else its usual address)."""
    out, problems = [], []
    for name in names:
        if models_file is not None and name in models_file.models:
            out.append(models_file.models[name])
            continue
        if is_inline_name(name):
            try:
                out.append(inline_spec(name, endpoint, env))
            except ValueError as exc:
                problems.append(f"model {name}: {exc}")
            continue
        where = f"in {models_file.path} (entries: {', '.join(models_file.models) or 'none'})" \
            if models_file else f"(no {MODELS_FILE} found and --model-config not given)"
        problems.append(f"model {name!r} is not a [models.NAME] {where}, nor PROVIDER/MODEL")
    if problems:
        raise ModelConfigError(problems)
    return out


__all__ = ["CONDITIONS", "ModelConfigError", "ModelEntry", "ModelSpec", "ModelsFile", "default_limits",
           "find_models_file", "inline_spec", "is_inline_name", "is_local", "load_models_file", "resolve"]
