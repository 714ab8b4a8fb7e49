"""``epic-levels run``: materialize the whole graph for the manifest's clips and print the main tables."""

from __future__ import annotations

import argparse
import sys

from ..responses.offline import OFFLINE_RESPONDERS
from ..settings import Paths
from .options import about, clips_flag, comma_list, location_flags, media_flags, models_flags


def responders(value: str) -> str:
    """The ``--responders`` value, each name checked against the offline responders (a usage error otherwise)."""
    unknown = [name for name in comma_list(value) if name not in OFFLINE_RESPONDERS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown offline responders {', '.join(unknown)} "
                                         f"(known: {', '.join(OFFLINE_RESPONDERS)})")
    return ",".join(comma_list(value))


def add_parser(sub) -> None:
    p = sub.add_parser("run", **about(
        "build the benchmark for the manifest's clips, ask and score every responder, print a leaderboard"
        " and write the report"))
    clips_flag(p)
    p.add_argument("--responders", default=",".join(OFFLINE_RESPONDERS), type=responders, metavar="NAME,…",
                   help=f"comma-separated offline responders, of {', '.join(OFFLINE_RESPONDERS)} (default: all four)")
    models_flags(p)
    p.add_argument("--judge", default="", metavar="NAME", help="NAME or PROVIDER/MODEL that judges open replies the rules cannot decide, "
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
    from ..preflight import RunInputs, preflight
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
    # every input checked before Dagster starts anything (the same checks start every run of the UI and the daemon)
    checked = preflight(RunInputs(paths, evaluation, clip_keys=args.clips or None))
    for note in checked.notes:
        print(note)
    if not checked.ok:
        for line in checked.problems:
            print(f"error: {line}", file=sys.stderr)
        print(f"{len(checked.problems)} problem(s) found before the run; nothing was run or written", file=sys.stderr)
        return 2
    if not check_models(evaluation, reach=False):  # the plan said once (the pre-flight checked its models)
        return 2
    run_config = {"resources": {"evaluation": {"config": evaluation}}}
    report = run_pipeline(paths, clip_keys=args.clips or None, run_config=run_config)
    print(f"\n{len(report.clips)} clips, {report.runs} runs, {report.seconds:.1f} s; failed: {report.failed or 'none'}")
    if report.failed:
        print_failures(report)
        return 1
    print_summary(paths, report.run_ids)
    return 0


def print_failures(report) -> None:
    """What failed, in which run, and where to read it; no table (the warehouse still holds earlier runs' tables,
    which this command did not make)."""
    print("\nFailed:", file=sys.stderr)
    for label, run_id in report.failures.items():
        print(f"  {label}: run {run_id}", file=sys.stderr)
        for line in report.details.get(run_id, []):
            print(f"    {line}", file=sys.stderr)
    print("Each run's steps, errors and logs are in the Dagster UI (`DAGSTER_HOME=$PWD .venv/bin/dg dev` at the project "
          "root, then http://127.0.0.1:3000/runs/<run id>). No table is printed: the warehouse's tables are not all "
          "this command's (a failed step keeps the last good materialization).", file=sys.stderr)


def print_summary(paths: Paths, run_ids: list[str] | None = None) -> None:
    """What the run made, after a command whose runs (``run_ids``) all succeeded: the question bank, the clips'
    media, the leaderboard, the caption track's main table, and where the report, the tables and the UI are."""
    from ..storage.views import query

    if not paths.warehouse.exists():
        return
    if run_ids:
        made = run_ids[0] if len(run_ids) == 1 else f"{run_ids[0]} … {run_ids[-1]}"
        print(f"\nTables below: made by this command's {len(run_ids)} run(s) ({made}).")
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
        print(f"\nClip media: {summary} (source videos are looked up under {_shown(paths.source_media)}; "
              "`epic-levels media` lists them; the offline responders need none, models skip the clip and silenced "
              "conditions of a clip without one)")
    except Exception:
        pass
    try:
        print_leaderboard(query(paths.warehouse, "SELECT * FROM scores"))
    except Exception as exc:
        print(f"(no scores table yet: {exc})")
    try:
        from ..captions.track import main_table

        captions = main_table(query(paths.warehouse, "SELECT * FROM caption_scores"))
        captions = captions[captions["condition"] == "clip"].drop(columns=["condition"])
        print("\nCaption track (warehouse table `caption_scores`; condition clip, greedy matching, both datasets; "
              "F1 per unit kind):")
        print(text_table(_numbers(captions.sort_values("event_f1", ascending=False, kind="stable"), skip=2), left=2))
    except Exception:
        pass
    report = paths.reports / "report.html"
    print("\nNext:")
    if report.exists():
        print(f"  the report          {_shown(report)} (open it in a browser)")
    print(f"  every table         {_shown(paths.warehouse)} (DuckDB: scores, paired_comparisons, verdicts, …)")
    print("  the UI              DAGSTER_HOME=$PWD .venv/bin/dg dev, then http://127.0.0.1:3000")
    print("  your own model      docs/models.md; the documentation starts at docs/getting-started.md")


def print_leaderboard(scores) -> None:
    """The leaderboard (:func:`.reporting.sections.compact_leaderboard`) as the run's last table."""
    from ..reporting.sections import compact_leaderboard

    board = compact_leaderboard(scores)
    if not len(board):
        print("\n(no scores under the clip condition yet)")
        return
    shown = _numbers(board, skip=2, whole=("n",))
    print("\nLeaderboard (warehouse table `scores`): chance-corrected accuracy under the clip condition, all "
          "datasets and formats pooled\n(0 = guessing, 1 = perfect; `n` items over all levels; `no_clip`: the same "
          "items without the clip; intervals and every format in the report):")
    print(text_table(shown, left=2))


def _numbers(frame, skip: int = 0, whole: tuple[str, ...] = ()):
    """``frame`` with its columns after the first ``skip`` as text: three decimals, ``—`` for none."""
    shown = frame.copy()
    for column in shown.columns[skip:]:
        if column not in whole:
            shown[column] = shown[column].map(lambda v: "—" if v is None or v != v else f"{float(v):.3f}")
    return shown


def text_table(frame, left: int = 0) -> str:
    """``frame`` as aligned text: its first ``left`` columns (names) to the left, the numbers to the right."""
    cells = [[str(c) for c in frame.columns]] + [["" if v is None else str(v) for v in row]
                                                 for row in frame.itertuples(index=False)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(frame.columns))]
    return "\n".join("  ".join(v.ljust(w) if i < left else v.rjust(w) for i, (v, w) in enumerate(zip(row, widths)))
                     .rstrip() for row in cells)


def _shown(path) -> str:
    """``path`` relative to the working directory when it is under it (as a user types it), else absolute."""
    from pathlib import Path

    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
