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
    models_flags(p, what="comma-separated NAMEs of declared models (evaluate = [...] in the models file) that this run "
                         "asks; the other declared models are answered from the call cache only, so their rows stay "
                         "(default: every declared model)")
    p.add_argument("--judge", default="", metavar="NAME", help="NAME or PROVIDER/MODEL that judges open replies the rules cannot decide, "
                   "or 'self' (the run's one model judges its own replies); default: $EPIC_LEVELS_JUDGE_MODEL, else "
                   "the models file's judge, else none (undecided replies stay undecided; cc_strict is the headline)")
    p.add_argument("--allow-self-judge", action="store_true",
                   help="let a judge that is also a model of the run judge its own replies (marked self_judged)")
    media_flags(p)
    p.add_argument("--strict-media", action="store_true",
                   help="fail the run where a model's server ignored the audio or the video it was sent (same prompt "
                        "tokens with and without it); without it such rows are marked audio_ignored / video_ignored")
    p.add_argument("--batch", action="store_true",
                   help="send the Gemini model calls as batch jobs (half price, answered within a day); "
                        "a killed run resumes the same jobs")
    location_flags(p, media=True)
    p.set_defaults(fn=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    from ..orchestration.local import run_pipeline
    from ..preflight import RunInputs, preflight
    from .models import check_models

    paths = args.project
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
    if args.strict_media:
        evaluation["strict_media"] = True
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
    print_declaration_changes(paths, evaluation)
    run_config = {"resources": {"evaluation": {"config": evaluation}}}
    roots = {key: str(value) for key, value in (("annotations", paths.annotations_root), ("media", paths.media_root))
             if value is not None}
    if roots:  # the roots this command was given reach its runs as their configuration, not the environment
        run_config["resources"]["project"] = {"config": roots}
    report = run_pipeline(paths, clip_keys=args.clips or None, run_config=run_config)
    print_spend(paths, report.run_ids)
    print(f"\n{len(report.clips)} clips, {report.runs} runs, {report.seconds:.1f} s; failed: {report.failed or 'none'}")
    if report.failed:
        print_failures(report)
        return 1
    print_summary(paths, report.run_ids)
    return 0


def print_declaration_changes(paths: Paths, evaluation: dict) -> None:
    """What changed in the declared models since the tables were last written (a model that left the declaration,
    one whose settings changed), from the warehouse's ``responses``."""
    from ..defs.evaluation import EvaluationResource
    from ..plan import declaration_changes
    from ..storage.views import query

    if not paths.warehouse.exists():
        return
    try:
        rows = query(paths.warehouse, "SELECT DISTINCT model, model_digest FROM responses "
                                      "WHERE provider NOT IN ('offline', 'external')")
    except Exception:  # no responses (or no model_digest) yet: nothing to compare with
        return
    previous: dict[str, set[str]] = {}
    for row in rows.itertuples(index=False):
        previous.setdefault(str(row.model), set()).add(str(row.model_digest))
    plan = EvaluationResource(**evaluation).plan()
    for line in declaration_changes({m.spec.name: m.spec.digest for m in plan.models}, previous):
        print(line)


def print_spend(paths: Paths, run_ids: list[str] | None) -> None:
    """What this command's runs spent on model calls, per model and purpose (the ``spend`` table's ledger)."""
    from ..responses.cache import CallCache
    from ..responses.spend import spend_table

    if not run_ids or not (paths.cache / "calls.sqlite").exists():
        return
    with CallCache(paths.cache / "calls.sqlite") as cache:
        table = spend_table(cache.spend_rows(run_ids))
    table = table[table["run_id"] == "*"]
    if not len(table):
        return
    shown = table[["model", "purpose", "calls", "cached", "failed", "prompt_tokens", "output_tokens", "cached_tokens",
                   "wall_s"]].copy()
    shown["cost"] = ["unknown" if c != c else f"${c:,.2f}" for c in table["cost_usd"]]
    shown["wall_s"] = shown["wall_s"].map(lambda v: f"{v:.1f}")
    print("\nSpend of this run (warehouse table `spend`; calls: distinct requests sent; cached: answered from the call "
          "cache):")
    print(text_table(shown, left=2))


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
        print_leaderboard(query(paths.warehouse, "SELECT * FROM scores"),
                          _table_or_none(query, paths.warehouse, "paired_comparisons"))
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


def _table_or_none(query, warehouse, name: str):
    try:
        return query(warehouse, f"SELECT * FROM {name}")
    except Exception:  # the table may not exist yet
        return None


def print_leaderboard(scores, paired=None) -> None:
    """The leaderboard (:func:`.reporting.sections.compact_leaderboard`) as the run's last table, and below it one
    line per pair of models that answered the same items (``paired``: ``paired_comparisons``) under the clip
    condition."""
    from ..reporting.document import fmt_p
    from ..reporting.sections import compact_leaderboard, model_pairs

    board = compact_leaderboard(scores)
    if not len(board):
        print("\n(no scores under the clip condition yet)")
        return
    shown = _numbers(board, skip=2, whole=("n",))
    print("\nLeaderboard (warehouse table `scores`): chance-corrected accuracy under the clip condition, all "
          "datasets and formats pooled\n(0 = guessing, 1 = perfect; `n` items over all levels; `no_clip`: the same "
          "items without the clip; intervals and every format in the report):")
    print(text_table(shown, left=2))
    pairs = model_pairs(paired)
    pairs = pairs[pairs["condition"] == "clip"]
    if len(pairs):
        number = lambda v: "—" if v != v else f"{float(v):+.3f}"  # noqa: E731
        print("\nModels compared on the same items (table `paired_comparisons`, kind model; clip, all levels and "
              "formats):\ndiff = accuracy of A − accuracy of B, its 95 % interval (resampled by clip), McNemar p "
              "(clip-clustered), n pairs:")
        shown = pairs.assign(A=pairs["a"], B=pairs["b"], diff=pairs["diff"].map(number),
                             interval=[f"[{number(lo)}, {number(hi)}]" for lo, hi in
                                       zip(pairs["diff_ci_low"], pairs["diff_ci_high"])],
                             p=pairs["mcnemar_p"].map(fmt_p), n=pairs["n_pairs"].astype(int))
        print(text_table(shown[["A", "B", "diff", "interval", "p", "n"]].rename(columns={"interval": "95 % interval"}),
                         left=2))


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
