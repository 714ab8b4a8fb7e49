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
from ..responses.spend import SpendMeter, metered
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
    strict_media: bool = False  # fail the run where a model's server ignored the audio or video it was sent
    caption_responders: str = ""  # "": $EPIC_LEVELS_CAPTION_RESPONDERS, else every caption responder
    _plan: EvaluationPlan | None = PrivateAttr(default=None)
    _meter: SpendMeter | None = PrivateAttr(default=None)

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
        """The call cache, metering what the step's calls spend into the cache's ledger when it is closed."""
        cache = MeteredCache(paths.cache / "calls.sqlite")
        self._meter = cache.meter
        return cache

    def model_runs(self, cache: CallCache | None) -> list[ModelRun]:
        log = dg.get_dagster_logger()
        plan = self.plan()
        for line in plan.notes:
            log.info(line)
        try:
            runs = model_runs(plan, cache, os.environ)
        except ValueError as exc:
            raise dg.Failure(description=str(exc)) from None
        for run in runs:
            self._name(run.caller, run.model)
        return runs

    def provider(self, cache: CallCache | None, spec: ModelSpec):
        """The provider of a model or judge of the plan; a Failure naming what is missing (never the key)."""
        try:
            caller = caller_for(spec, cache, os.environ)
        except ValueError as exc:
            raise dg.Failure(description=str(exc)) from None
        self._name(caller, spec.name)
        return caller

    def _name(self, caller, name: str) -> None:
        if self._meter is not None:
            self._meter.name(caller, name)

    def judge_panel(self) -> tuple[list[tuple[str, ModelSpec, bool]], str]:
        """Every judge asked ``(NAME, spec, judges its own replies)`` and whose verdict counts (a NAME, ``majority``,
        or ``""`` with no judge)."""
        plan = self.plan()
        return list(plan.judges), plan.verdict_by


#: What a step's model calls are for, by the step's asset (the ledger's ``purpose``).
PURPOSE = {"responses": "answers", "hd_epic_vqa_responses": "answers", "caption_responses": "captions",
           "verdicts": "judge", "hd_epic_vqa_verdicts": "judge", "judge_audit": "judge_audit",
           "caption_alignments": "caption_judge"}


class MeteredCache(CallCache):
    """The call cache of one step: while it is open, every batch of calls the step makes is tallied
    (:mod:`..responses.spend`); closing it appends the tallies to the ledger under the run and the step."""

    def __init__(self, path):
        super().__init__(path)
        try:
            self._context = dg.AssetExecutionContext.get()
        except Exception:  # noqa: BLE001 - outside a step (a script, a test): nothing to record under
            self._context = None
        asset = self._context.op_def.name if self._context is not None else ""  # the step (one asset or several)
        self.meter = SpendMeter(PURPOSE.get(asset, "calls"))
        self._asset = asset
        self._metering = metered(self.meter)
        self._metering.__enter__()

    def close(self) -> None:
        if self._metering is not None:
            try:
                self._metering.__exit__(None, None, None)
            except ValueError:  # closed in another context than the one it was opened in: nothing to undo there
                pass
            self._metering = None
            if self._context is not None and self.meter.tallies:
                self.add_spend(self.meter.rows(self._context.run_id, self._asset))
        super().close()
