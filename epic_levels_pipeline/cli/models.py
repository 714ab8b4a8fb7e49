"""The command line's model check: every model of a run resolved before the run starts (its defaults printed
once). It reads the models file through the evaluation resource, so a run and its check agree on what each
model is."""

from __future__ import annotations

import sys

import dagster as dg


def check_models(evaluation_config: dict, out=None) -> bool:
    """Resolve the run's models and judge as the run will (:class:`.defs.evaluation.EvaluationResource`);
    print each default a model takes, once; False (with the problems printed) when any is wrong."""
    from ..defs.evaluation import EvaluationResource

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

