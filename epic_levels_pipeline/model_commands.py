"""The command line's model checks: every model of a run resolved before the run starts (its defaults printed
once), and ``epic-levels probe``. A driver: it reads the models file through the evaluation resource, so a
run and its check agree on what each model is."""

from __future__ import annotations

import sys
from dataclasses import replace

import dagster as dg

from .responses.models_config import ModelConfigError, find_models_file, resolve
from .responses.probe import probe_model, probe_ok, render
from .responses.providers.base import provider_for
from .settings import project_root


def check_models(evaluation_config: dict, out=None) -> bool:
    """Resolve the run's models and judge as the run will (:class:`.defs.evaluation.EvaluationResource`);
    print each default a model takes, once; False (with the problems printed) when any is wrong."""
    from .defs.evaluation import EvaluationResource

    out = out or sys.stdout
    resource = EvaluationResource(**evaluation_config)
    try:
        notes = resource.default_notes()
        _, self_judging = resource.judge_spec()
    except dg.Failure as exc:
        print(f"error: {exc.description or exc}", file=sys.stderr)
        return False
    for line in notes:
        print(line, file=out)
    judge = resource.judge_model_name()
    if resource.model_names():
        if not judge:
            print("judge: none (undecided open replies stay undecided; cc_strict is the headline)", file=out)
        elif self_judging:
            print(f"judge: {judge} — judging its own replies (asked for; marked self_judged)", file=out)
    return True


def main_probe(names: list[str], model_config: str | None = None, *, endpoint: str | None = None,
               out=None) -> int:
    """``epic-levels probe``: 0 when every route of every model was accepted and the audio used, 1 when
    not, 2 for a configuration problem (nothing sent)."""
    out = out or sys.stdout
    try:
        models_file = find_models_file(project_root(), model_config)
        if not names and models_file is not None:
            names = list(models_file.models)
        if not names:
            print("error: no models to probe: pass --models NAME[,NAME…] (or write a models.toml)", file=sys.stderr)
            return 2
        specs = resolve(names, models_file, endpoint)
        callers = [provider_for(spec) for spec in specs]
        for caller in callers:  # one request per route: a Gemini context cache would be a wasted call
            if caller.provider == "gemini":
                caller.settings = replace(caller.settings, context_cache=False)
    except (ModelConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    ok = True
    for spec, caller in zip(specs, callers):
        results = probe_model(spec, caller)
        print(render(spec, results), file=out)
        ok = ok and probe_ok(results)
    return 0 if ok else 1
