"""``epic-levels probe``: one small request per route (text; video; video+audio) and a structured-output request
to each model, before a run."""

from __future__ import annotations

import argparse
import sys

from .options import about, models_flags


def add_parser(sub) -> None:
    p = sub.add_parser("probe", **about(
        "one small request per route (text; video; video+audio) to each model, on a clip made with "
        "ffmpeg, and a judge's JSON request: accepted or the server's error, latency, prompt tokens, and the "
        "structured_output form the server takes"))
    models_flags(p, default_text="every model of the models file")
    p.set_defaults(fn=cmd_probe)


def cmd_probe(args: argparse.Namespace) -> int:
    return main_probe([m.strip() for m in args.models.split(",") if m.strip()], args.model_config or None,
                      endpoint=args.endpoint or None)


def main_probe(names: list[str], model_config: str | None = None, *, endpoint: str | None = None,
               out=None) -> int:
    """``epic-levels probe``: 0 when every route of every model was accepted and the audio used, 1 when
    not, 2 for a configuration problem (nothing sent)."""
    from ..responses.models_config import ModelConfigError, find_models_file, resolve
    from ..responses.probe import probe_model, probe_ok, render
    from ..responses.providers.registry import provider_for
    from ..settings import project_root

    out = out or sys.stdout
    try:
        models_file = find_models_file(project_root(), model_config)
        if not names and models_file is not None:
            names = list(models_file.models)
        if not names:
            print("error: no models to probe: pass --models NAME[,NAME…] (or write a models.toml)", file=sys.stderr)
            return 2
        specs = resolve(names, models_file, endpoint)
        callers = [spec.facts.for_probe(provider_for(spec)) for spec in specs]  # one request per route
    except (ModelConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    ok = True
    for spec, caller in zip(specs, callers):
        results = probe_model(spec, caller)
        print(render(spec, results), file=out)
        ok = ok and probe_ok(results)
    return 0 if ok else 1
