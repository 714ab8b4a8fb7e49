"""The command line's model check: every model of a run resolved before the run starts (its defaults printed
once). It reads the models file through the evaluation resource, so a run and its check agree on what each
model is."""

from __future__ import annotations

import os
import sys

import dagster as dg

from ..plan import model_problems


def check_models(evaluation_config: dict, out=None, *, reach: bool = True) -> bool:
    """The models' pre-flight of a run, before anything runs: the plan resolves (models file, declared set, judge),
    every model the run calls has its key and (``reach``) an endpoint that answers. Prints each default a model takes
    once, and which declared models this run asks; False, with one line per problem, when any is wrong."""
    from ..defs.evaluation import EvaluationResource

    out = out or sys.stdout
    try:
        plan = EvaluationResource(**evaluation_config).plan()
    except dg.Failure as exc:
        for line in str(exc.description or exc).splitlines():
            print(f"error: {line}", file=sys.stderr)
        return False
    problems = model_problems(plan, os.environ, reach=reach)
    for line in problems:
        print(f"error: {line}", file=sys.stderr)
    if problems:
        return False
    for line in plan.notes:
        print(line, file=out)
    if plan.models:
        asked = [m.spec.name for m in plan.models if m.asked]
        cached = [m.spec.name for m in plan.models if not m.asked]
        print(f"models: {', '.join(asked) or 'none'} asked"
              + (f"; {', '.join(cached)} from the call cache only (not in --models)" if cached else ""), file=out)
        if plan.judge is None:
            print("judge: none (undecided open replies stay undecided; cc_strict is the headline)", file=out)
        elif plan.self_judging:
            print(f"judge: {plan.judge.name} — judging its own replies (asked for; marked self_judged)", file=out)
        else:
            print(f"judge: {plan.judge.name}", file=out)
    return True
