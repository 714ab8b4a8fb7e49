"""``epic-levels run``: materialize the whole graph for the manifest's clips and print the main tables."""

from __future__ import annotations

import argparse

from ..settings import Paths
from .options import location_flags, media_flags, models_flags


def add_parser(sub) -> None:
    p = sub.add_parser("run", help="materialize the whole graph for the manifest's clips and print the main table")
    p.add_argument("--clips", nargs="*", help="clip keys (default: every clip in data/clips.csv)")
    p.add_argument("--responders", default="oracle,chance,presence,blind", help="offline responders to run")
    models_flags(p)
    p.add_argument("--endpoint", default="", help="base URL of the inline models' server, e.g. http://127.0.0.1:8000/v1 "
                   "(default: the provider's *_BASE_URL variable, else its usual address)")
    p.add_argument("--judge", default="", help="NAME or PROVIDER/MODEL that judges open replies the rules cannot decide, "
                   "or 'self' (the run's one model judges its own replies); default: $EPIC_LEVELS_JUDGE_MODEL, else "
                   "the models file's judge, else none (undecided replies stay undecided; cc_strict is the headline)")
    p.add_argument("--allow-self-judge", action="store_true",
                   help="let a judge that is also a model of the run judge its own replies (marked self_judged)")
    media_flags(p)
    p.add_argument("--batch", action="store_true",
                   help="send the Gemini model calls as batch jobs (half price, answered within a day); "
                        "a killed run resumes the same jobs")
    location_flags(p, media=True)
    p.set_defaults(fn=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    from ..orchestration.local import run_pipeline
    from .models import check_models

    paths = Paths.default()
    # The flags reach the evaluation resource as run configuration (recorded with each run in the UI), the judge
    # included (none unless named: --judge, $EPIC_LEVELS_JUDGE_MODEL or the models file's judge). Keys stay in the
    # environment, never here.
    evaluation = {"responders": args.responders, "models": args.models}
    for flag, key in (("model_config", "model_config_file"), ("endpoint", "endpoint"), ("judge", "judge_model"),
                      ("media_resolution", "media_resolution"), ("fps", "fps")):
        if getattr(args, flag):
            evaluation[key] = getattr(args, flag)
    if args.allow_self_judge:
        evaluation["allow_self_judge"] = True
    if args.batch:
        evaluation["batch"] = True
    if not check_models(evaluation):  # every model resolved and checked before any call
        return 2
    run_config = {"resources": {"evaluation": {"config": evaluation}}}
    report = run_pipeline(paths, clip_keys=args.clips or None, run_config=run_config)
    print(f"\n{len(report.clips)} clips, {report.runs} runs, {report.seconds:.1f} s; failed: {report.failed or 'none'}")
    print_summary(paths)
    return 1 if report.failed else 0


def print_summary(paths: Paths) -> None:
    from ..warehouse import query

    if not paths.warehouse.exists():
        return
    try:
        table = query(paths.warehouse, """
            SELECT dataset, level, count(*) AS questions, count(DISTINCT subtype) AS subtypes,
                   count(DISTINCT clip_key) AS clips
            FROM questions GROUP BY dataset, level ORDER BY dataset, level""")
    except Exception as exc:  # the table may not exist yet
        print(f"(no questions table yet: {exc})")
        return
    print("\nQuestion bank (warehouse table `questions`):")
    print(table.to_string(index=False))
    try:
        media = query(paths.warehouse, "SELECT status, count(*) AS clips FROM clip_media GROUP BY status ORDER BY status")
        summary = ", ".join(f"{r.clips} {r.status}" for r in media.itertuples())
        print(f"\nClip media: {summary} (source videos are looked up under {paths.source_media} (`epic-levels media` lists them); "
              "the offline responders need none, model responders skip the clip and silenced conditions without one)")
    except Exception:
        pass
    try:
        scores = query(paths.warehouse, """
            SELECT responder, condition, format, n, round(accuracy, 3) AS accuracy, round(chance, 3) AS chance,
                   round(chance_corrected, 3) AS chance_corrected, round(ci_low, 3) AS ci_low, round(ci_high, 3) AS ci_high,
                   n_undecided, round(chance_corrected_strict, 3) AS cc_strict
            FROM scores WHERE dataset = '*' AND level = '*' AND subtype = '*' AND distractor_strategy = '*'
            ORDER BY responder, condition, format""")
        print("\nMain score table (warehouse table `scores`, all datasets, levels and subtypes; chance_corrected over "
              "decided verdicts with its clip-clustered 95 % interval; cc_strict counts undecided open replies as wrong):")
        print(scores.to_string(index=False))
    except Exception:
        pass
    try:
        from ..captions.track import main_table

        captions = main_table(query(paths.warehouse, "SELECT * FROM caption_scores"))
        print("\nCaption track (warehouse table `caption_scores`, greedy matching, both datasets; F1 per unit kind):")
        print(captions.to_string(index=False))
    except Exception:
        pass
