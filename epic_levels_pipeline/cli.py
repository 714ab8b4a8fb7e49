"""``epic-levels``: the command line. Errors are caught here once and printed as lines a person can act on."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .errors import AnnotationError, ClipKeyError, ManifestError
from .settings import Paths


def cmd_validate(args) -> int:
    from .annotations.readers import validate_paths

    paths = [Path(p) for p in args.paths]
    missing = [p for p in paths if not p.exists()]
    for p in missing:
        print(f"{p}:0:-: no such file or folder")
    problems, files, skipped = validate_paths([p for p in paths if p.exists()])
    errors = [p for p in problems if p.severity == "error"]
    for p in errors:
        print(p)
    dropped = [p for p in problems if p.severity != "error"]
    for p in dropped:
        print(p, file=sys.stderr)
    print(f"{len(files)} files checked, {len(errors)} problems, {len(dropped)} rows dropped with a reason"
          f"{f', {len(skipped)} other files skipped' if skipped else ''}", file=sys.stderr)
    return 1 if errors or missing else 0


def _bank_for_clip(paths: Paths, key: str):
    """The clip's questions (and items) from the warehouse if materialized, else computed now."""
    from .warehouse import TableStore, read_parquet

    store = TableStore(paths.assets)
    qfile, ifile = store.path("questions", key), store.path("items", key)
    if qfile.exists():
        return read_parquet([qfile]), read_parquet([ifile]) if ifile.exists() else None, "warehouse"
    from .annotations.readers import load_annotations
    from .annotations.catalogue import build_catalogue
    from .bank.clip_view import ClipView
    from .annotations.clips import Clip, clip_annotations
    from .formats.items import build_items
    from .bank.build import build_bank

    clip = Clip.from_key(key)
    ann = load_annotations(paths.annotations)
    cat = build_catalogue(ann)
    rows = clip_annotations(ann, clip)
    bank = build_bank(clip, rows, cat)
    items, _ = build_items(bank.questions, ClipView(clip, rows, cat), cat)
    return bank.questions, items, "computed now (not materialized yet)"


def cmd_questions(args) -> int:
    from .bank.build import render_question

    paths = Paths.default()
    questions, items, source = _bank_for_clip(paths, args.clip)
    print(f"# {args.clip}: {len(questions)} questions ({source})\n")
    if args.format:
        if items is None:
            print("items are not materialized yet; run `epic-levels run` first", file=sys.stderr)
            return 1
        chosen = items[items["format"] == args.format]
        for item in chosen.itertuples():
            print(f"## {item.item_id}  [{item.level} · {item.subtype} · expected: {item.expected} · chance {item.chance:.3f}]")
            print(item.prompt)
            if args.format == "statements":
                for s in json.loads(item.statements):
                    print(f"    {s['letter']}: {'true ' if s['truth'] else 'false'}  (from {s['source']})")
            print()
        return 0
    for _, q in questions.iterrows():
        print(render_question(q))
        print()
    return 0


def cmd_run(args) -> int:
    from .orchestration.local import run_pipeline

    paths = Paths.default()
    # The flags reach the evaluation resource as run configuration (recorded with each run in the UI), the judge
    # included (default: $EPIC_LEVELS_JUDGE_MODEL, else the first model). Keys stay in the environment, never here.
    evaluation = {"responders": args.responders, "models": args.models}
    if args.endpoint:
        evaluation["endpoint"] = args.endpoint
    if args.judge:
        evaluation["judge_model"] = args.judge
    elif args.models and not os.environ.get("EPIC_LEVELS_JUDGE_MODEL"):
        evaluation["judge_model"] = args.models.split(",")[0].strip()
    if args.batch:
        evaluation["batch"] = True
    if args.media_resolution:
        evaluation["media_resolution"] = args.media_resolution
    if args.fps:
        evaluation["fps"] = args.fps
    run_config = {"resources": {"evaluation": {"config": evaluation}}}
    report = run_pipeline(paths, clip_keys=args.clips or None, run_config=run_config)
    print(f"\n{len(report.clips)} clips, {report.runs} runs, {report.seconds:.1f} s; failed: {report.failed or 'none'}")
    _print_summary(paths)
    return 1 if report.failed else 0


def _print_summary(paths: Paths) -> None:
    from .warehouse import query

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
        print(f"\nClip media: {summary} (source videos are looked up under {paths.media}/<dataset>/<video_id>.mp4; "
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
        from .captions.track import main_table

        captions = main_table(query(paths.warehouse, "SELECT * FROM caption_scores"))
        print("\nCaption track (warehouse table `caption_scores`, greedy matching, both datasets; F1 per unit kind):")
        print(captions.to_string(index=False))
    except Exception:
        pass


def cmd_captions(args) -> int:
    """The clip's reference structure beside one responder's caption, from the materialized tables."""
    from .annotations.clips import Clip
    from .captions.track import side_by_side
    from .warehouse import TableStore, read_parquet

    paths = Paths.default()
    key = Clip.from_key(args.clip).key
    store = TableStore(paths.assets)
    files = {name: store.path(name, key) for name in ("caption_references", "caption_responses")}
    missing = [name for name, path in files.items() if not path.exists()]
    if missing:
        print(f"error: {', '.join(missing)} not materialized for clip {key} (looked for "
              f"{files[missing[0]]}); run `epic-levels run --clips {key}` first", file=sys.stderr)
        return 1
    references, responses = read_parquet([files["caption_references"]]), read_parquet([files["caption_responses"]])
    try:
        print(side_by_side(references, responses, key, args.responder, args.condition))
    except KeyError as exc:
        have = responses[["responder", "model", "condition"]].drop_duplicates()
        options = ", ".join(sorted({f"{r.responder}/{r.condition}" for r in have.itertuples()}))
        print(f"error: {exc.args[0]}; materialized: {options}", file=sys.stderr)
        return 1
    return 0


def cmd_report(args) -> int:
    from .reporting.report import report_from_warehouse

    md, html = report_from_warehouse(Paths.default())
    print(f"wrote {md}\nwrote {html}")
    return 0


def cmd_import_mcq(args) -> int:
    from .imports.hd_epic_vqa import main_import

    return main_import([Path(p) for p in args.paths], Path(args.out) if args.out else None)


def cmd_estimate(args) -> int:
    from .estimate import main_estimate

    models = [m.strip() for m in args.models.split(",") if m.strip()]
    return main_estimate(models, args.price or [], media_resolution=args.media_resolution, fps=args.fps)


def _media_flags(p: argparse.ArgumentParser) -> None:
    """``--media-resolution`` and ``--fps``: the same for the calls (``run``) and the estimate."""
    p.add_argument("--media-resolution", choices=["low", "medium", "high"], default=None,
                   help="video media resolution of model calls (default: the model's; low = 66 tokens a frame)")
    p.add_argument("--fps", type=float, default=None, help="video frames sampled per second (default 1)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="epic-levels", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("run", help="materialize the whole graph for the manifest's clips and print the main table")
    p.add_argument("--clips", nargs="*", help="clip keys (default: every clip in data/clips.csv)")
    p.add_argument("--responders", default="oracle,chance,presence,blind", help="offline responders to run")
    p.add_argument("--models", default="", help="comma-separated PROVIDER/MODEL names: gemini/…, openai/…, vllm/…, "
                   "sglang/… (bare Gemini names still work, deprecated); keys from the environment")
    p.add_argument("--endpoint", default="", help="base URL of the models' server, e.g. http://127.0.0.1:8000/v1 "
                   "(default: the provider's *_BASE_URL variable, else its usual address)")
    p.add_argument("--judge", default="", help="PROVIDER/MODEL that judges open replies the rules cannot decide "
                   "(default: $EPIC_LEVELS_JUDGE_MODEL, else the first model)")
    _media_flags(p)
    p.add_argument("--batch", action="store_true",
                   help="send the Gemini model calls as batch jobs (half price, answered within a day); "
                        "a killed run resumes the same jobs")
    p.set_defaults(fn=cmd_run)

    p = sub.add_parser("validate", help="validate annotation files; prints FILE:ROW:COLUMN: message")
    p.add_argument("paths", nargs="+")
    p.set_defaults(fn=cmd_validate)

    p = sub.add_parser("questions", help="print a clip's questions (and format variants) as a person reads them")
    p.add_argument("--clip", required=True)
    p.add_argument("--format", choices=["yes_no", "multiple_choice", "statements", "open", "option_judgement", "open_with_reason"])
    p.set_defaults(fn=cmd_questions)

    p = sub.add_parser("captions", help="print a clip's caption reference structure beside a responder's caption")
    p.add_argument("--clip", required=True)
    p.add_argument("--responder", default="oracle", help="offline caption responder or model provider (default oracle)")
    p.add_argument("--condition", default="clip", choices=["clip", "silenced", "no_clip"])
    p.set_defaults(fn=cmd_captions)

    p = sub.add_parser("report", help="write the report (Markdown and HTML with plots) under data/reports/")
    p.set_defaults(fn=cmd_report)

    p = sub.add_parser("estimate", help="print the calls, tokens and cost a run with models would spend, before spending them")
    p.add_argument("--models", default="gemini/gemini-2.5-flash", help="comma-separated PROVIDER/MODEL names")
    p.add_argument("--price", action="append", help="MODEL=IN,OUT[,AUDIO_IN] dollars per 1M input/output tokens "
                   "(repeatable; overrides the documented prices assumed)")
    _media_flags(p)
    p.set_defaults(fn=cmd_estimate)

    p = sub.add_parser("import-mcq", help="convert HD-EPIC's VQA benchmark files through the format steps")
    p.add_argument("paths", nargs="*", help="files or folders (default: ../shared/data/hd-epic/vqa-benchmark)")
    p.add_argument("--out", default="", help="output folder (default data/assets/hd_epic_vqa/)")
    p.set_defaults(fn=cmd_import_mcq)

    args = parser.parse_args(argv)
    try:
        return args.fn(args)
    except (AnnotationError, ManifestError, ClipKeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
