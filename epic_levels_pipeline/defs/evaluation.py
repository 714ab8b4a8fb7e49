"""The evaluation resource: the run's flags as Dagster run configuration, and the plan they resolve to.

Its fields are what ``epic-levels run`` passes (seen with each run in the UI); a field left unset falls back to the
environment and the models file (:func:`..plan.resolve_plan` decides, once per run). API keys are read only from
the variables a model names and never stored in config.
"""

import os
from pathlib import Path

import dagster as dg
from pydantic import PrivateAttr

from ..plan import EvaluationPlan, PlanError, RunFlags, caller_for, flags_from_config, model_runs, resolve_plan
from ..responses.cache import CallCache
from ..responses.models_config import ModelSpec
from ..responses.runner import ModelRun
from ..settings import Paths, project_root


class EvaluationResource(dg.ConfigurableResource):
    responders: str = ""
    models: str | None = None  # narrows the declared models for this run (None: $EPIC_LEVELS_MODELS)
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
    _plan: EvaluationPlan | None = PrivateAttr(default=None)

    def flags(self) -> RunFlags:
        return flags_from_config(self.model_dump())

    def plan(self) -> EvaluationPlan:
        """The run's plan (resolved once per resource); a Failure with one line per problem."""
        if self._plan is None:
            try:
                self._plan = resolve_plan(project_root(), self.flags(), os.environ)
            except PlanError as exc:
                raise dg.Failure(description=str(exc)) from None
        return self._plan

    def offline(self) -> list[str]:
        return list(self.plan().responders)

    def caption_offline(self) -> list[str]:
        return list(self.plan().caption_responders)

    def media_folder(self, paths: Paths) -> Path:
        return Path(self.media_root) if self.media_root else paths.source_media

    def cache(self, paths: Paths) -> CallCache:
        return CallCache(paths.cache / "calls.sqlite")

    def model_runs(self, cache: CallCache | None) -> list[ModelRun]:
        log = dg.get_dagster_logger()
        plan = self.plan()
        for line in plan.notes:
            log.info(line)
        try:
            return model_runs(plan, cache, os.environ)
        except ValueError as exc:
            raise dg.Failure(description=str(exc)) from None

    def provider(self, cache: CallCache | None, spec: ModelSpec):
        """The provider of a model or judge of the plan; a Failure naming what is missing (never the key)."""
        try:
            return caller_for(spec, cache, os.environ)
        except ValueError as exc:
            raise dg.Failure(description=str(exc)) from None

    def judge_panel(self) -> tuple[list[tuple[str, ModelSpec, bool]], str]:
        """Every judge asked ``(NAME, spec, judges its own replies)`` and whose verdict counts (a NAME, ``majority``,
        or ``""`` with no judge)."""
        plan = self.plan()
        return list(plan.judges), plan.verdict_by
