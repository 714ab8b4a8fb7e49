"""``epic-levels``: the command line. Errors are caught here once and printed as lines a person can act on."""

from __future__ import annotations

import argparse
import json
import os
import sys
from contextlib import contextmanager
from pathlib import Path

from .errors import AnnotationError, ClipKeyError, ManifestError
from .settings import ANNOTATIONS_ENV, MEDIA_ENV, ConfigError, Paths


@contextmanager
def locations(annotations: str | Path | None = None, media: str | Path | None = None):
    """For the duration of one command (the driver's own process): the annotations and media roots given on
    its command line, each through its environment variable, so the Dagster runs it starts read the same.
    Only the command line sets them; library code never writes the environment."""
    saved = {name: os.environ.get(name) for name in (ANNOTATIONS_ENV, MEDIA_ENV)}
    try:
        if annotations:
            os.environ[ANNOTATIONS_ENV] = str(Path(annotations).expanduser().resolve())
        if media:
            os.environ[MEDIA_ENV] = str(Path(media).expanduser().resolve())
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def cmd_validate(args) -> int:
    from .annotations.readers import validate_paths

    paths = [Path(p) for p in args.paths] or [Paths.default().annotations]
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
    from .annotations.layout import locate

    test = sum(len(locate(p).test) for p in paths if p.is_dir())
    print(f"{len(files)} files checked, {len(errors)} problems, {len(dropped)} rows dropped with a reason"
          f"{f', {len(skipped)} other files skipped' if skipped else ''}"
          f"{f' ({test} of the test split, without labels)' if test else ''}", file=sys.stderr)
    return 1 if errors or missing else 0


def cmd_windows(args) -> int:
    from .annotations.windows import main_windows

    paths = Paths.default()
    return main_windows(paths.annotations, Path(args.manifest) if args.manifest else paths.manifest,
                        width=args.width, stride=args.stride, datasets=_names(args.datasets),
                        videos=_names(args.videos), split=args.split, limit=args.limit, require=args.require,
                        dry_run=args.dry_run)


def cmd_media(args) -> int:
    from .responses.media_check import main_media

    paths = Paths.default()
    return main_media(paths.source_media, Path(args.manifest) if args.manifest else paths.manifest,
                      paths.annotations, problems_only=args.problems)


def _names(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] or None if value else None


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
    from .model_commands import check_models

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
    _print_summary(paths)
    return 1 if report.failed else 0


def cmd_probe(args) -> int:
    from .model_commands import main_probe

    return main_probe([m.strip() for m in args.models.split(",") if m.strip()], args.model_config or None,
                      endpoint=args.endpoint or None)


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

    return main_import([Path(p) for p in args.paths], Path(args.out) if args.out else None, strict=args.strict)


def cmd_export(args) -> int:
    from .sharing.commands import main_export
    return main_export(Path(args.out))


def cmd_import_replies(args) -> int:
    from .sharing.commands import main_import_replies
    if bool(args.file) == bool(args.inspect_log):
        print("error: give a replies FILE or --inspect-log LOG (one of them)", file=sys.stderr)
        return 2
    return main_import_replies(Path(args.file) if args.file else None, args.model,
                               Path(args.inspect_log) if args.inspect_log else None)


def cmd_inspect_logs(args) -> int:
    from .sharing.commands import main_inspect_logs
    return main_inspect_logs(Path(args.out))


def cmd_estimate(args) -> int:
    from .estimate import main_estimate

    models = [m.strip() for m in args.models.split(",") if m.strip()]
    return main_estimate(models, args.price or [], media_resolution=args.media_resolution, fps=args.fps,
                         model_config=args.model_config or None)


def _models_flags(p: argparse.ArgumentParser, default: str = "") -> None:
    """``--models`` and ``--model-config``: the same for ``run``, ``estimate`` and ``probe``."""
    p.add_argument("--models", default=default, help="comma-separated model NAMEs of the models file, or inline "
                   "PROVIDER/MODEL names (gemini/…, openai/…, vllm/…, sglang/…) with their provider's defaults")
    p.add_argument("--model-config", default="", metavar="FILE",
                   help="the models file (default: models.toml at the project root, when there is one)")


def _location_flags(p: argparse.ArgumentParser, media: bool = False) -> None:
    """``--annotations DIR`` (and ``--media DIR``): this command's annotations and media roots (see settings.py)."""
    p.add_argument("--annotations", default=None, metavar="DIR",
                   help="annotations root: the upstream repositories as cloned, or the bundled layout "
                        "(default: $EPIC_LEVELS_ANNOTATIONS, else [data].annotations of epic-levels.toml, else data/annotations)")
    if media:
        p.add_argument("--media", default=None, metavar="DIR",
                       help="media root: source videos as the datasets' download tools lay them out, or <dataset>/<id>.mp4 "
                            "(default: $EPIC_LEVELS_MEDIA_ROOT, else [data].media of epic-levels.toml, else data/media)")


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
    _models_flags(p)
    p.add_argument("--endpoint", default="", help="base URL of the inline models' server, e.g. http://127.0.0.1:8000/v1 "
                   "(default: the provider's *_BASE_URL variable, else its usual address)")
    p.add_argument("--judge", default="", help="NAME or PROVIDER/MODEL that judges open replies the rules cannot decide, "
                   "or 'self' (the run's one model judges its own replies); default: $EPIC_LEVELS_JUDGE_MODEL, else "
                   "the models file's judge, else none (undecided replies stay undecided; cc_strict is the headline)")
    p.add_argument("--allow-self-judge", action="store_true",
                   help="let a judge that is also a model of the run judge its own replies (marked self_judged)")
    _media_flags(p)
    p.add_argument("--batch", action="store_true",
                   help="send the Gemini model calls as batch jobs (half price, answered within a day); "
                        "a killed run resumes the same jobs")
    _location_flags(p, media=True)
    p.set_defaults(fn=cmd_run)

    p = sub.add_parser("validate", help="validate annotation files; prints FILE:ROW:COLUMN: message")
    p.add_argument("paths", nargs="*", help="files or folders (default: the annotations root)")
    _location_flags(p)
    p.set_defaults(fn=cmd_validate)

    p = sub.add_parser("windows", help="write or extend the clip manifest with every window of every annotated video")
    p.add_argument("--width", type=float, default=30.0, help="window length in seconds (default 30)")
    p.add_argument("--stride", type=float, default=None, help="seconds between window starts (default: the width)")
    p.add_argument("--datasets", default=None, help="comma-separated datasets (default: epic_sounds,hd_epic)")
    p.add_argument("--videos", default=None, help="comma-separated video ids or shell patterns (P01_*)")
    p.add_argument("--split", choices=["train", "validation"], default=None,
                   help="only EPIC-SOUNDS videos of this split (HD-EPIC has no split and stays)")
    p.add_argument("--limit", type=int, default=None, help="at most N windows, spread evenly over the selection")
    p.add_argument("--require", choices=["any", "all"], default="any",
                   help="a video is annotated when it has labelled rows in any stream (default) or in all of them "
                        "(EPIC-SOUNDS: categorised sounds and labelled narrations; HD-EPIC: activities)")
    p.add_argument("--manifest", default="", help="manifest to write or extend (default data/clips.csv)")
    p.add_argument("--dry-run", action="store_true", help="print the summary, write nothing")
    _location_flags(p)
    p.set_defaults(fn=cmd_windows)

    p = sub.add_parser("media", help="list the manifest's source videos: found, missing, or disagreeing with the annotations")
    p.add_argument("--manifest", default="", help="manifest whose videos to check (default data/clips.csv)")
    p.add_argument("--problems", action="store_true", help="list only the videos that are not found as they should be")
    _location_flags(p, media=True)
    p.set_defaults(fn=cmd_media)

    p = sub.add_parser("questions", help="print a clip's questions (and format variants) as a person reads them")
    p.add_argument("--clip", required=True)
    p.add_argument("--format", choices=["yes_no", "multiple_choice", "statements", "open", "option_judgement", "open_with_reason"])
    _location_flags(p)
    p.set_defaults(fn=cmd_questions)

    p = sub.add_parser("captions", help="print a clip's caption reference structure beside a responder's caption")
    p.add_argument("--clip", required=True)
    p.add_argument("--responder", default="oracle", help="offline caption responder or model provider (default oracle)")
    p.add_argument("--condition", default="clip", choices=["clip", "silenced", "no_clip"])
    p.set_defaults(fn=cmd_captions)

    p = sub.add_parser("report", help="write the report (Markdown and HTML with plots) under data/reports/")
    p.set_defaults(fn=cmd_report)

    p = sub.add_parser("estimate", help="print the calls, tokens and cost a run with models would spend, before spending them")
    _models_flags(p, "gemini/gemini-2.5-flash")
    p.add_argument("--price", action="append", help="MODEL=IN,OUT[,AUDIO_IN] dollars per 1M input/output tokens "
                   "(repeatable; overrides the documented prices assumed)")
    _media_flags(p)
    _location_flags(p)
    p.set_defaults(fn=cmd_estimate)

    p = sub.add_parser("probe", help="one small request per route (text; video; video+audio) to each model, on a "
                       "clip made with ffmpeg: accepted or the server's error, latency, prompt tokens")
    _models_flags(p)
    p.add_argument("--endpoint", default="", help="base URL of the inline models' server")
    p.set_defaults(fn=cmd_probe)

    p = sub.add_parser("import-mcq", help="convert HD-EPIC's VQA benchmark files through the format steps")
    p.add_argument("paths", nargs="*", help="files or folders (default: ../shared/data/hd-epic/vqa-benchmark)")
    p.add_argument("--out", default="", help="output folder (default data/assets/hd_epic_vqa/)")
    p.add_argument("--strict", action="store_true", help="refuse the whole import when any question cannot be "
                   "converted (default: skip it, counted by reason)")
    p.set_defaults(fn=cmd_import_mcq)

    p = sub.add_parser("export", help="write the materialized benchmark as a Hugging Face dataset folder")
    p.add_argument("--out", required=True, help="output folder (Parquet per format and dataset, JSONL, clips.csv, card)")
    p.set_defaults(fn=cmd_export)

    p = sub.add_parser("import-replies", help="score replies made elsewhere (JSONL/CSV of item_id, condition, reply, "
                       "or an Inspect eval log) as a model of responder external")
    p.add_argument("file", nargs="?", default="", help="JSONL or CSV with item_id, condition, reply")
    p.add_argument("--model", required=True, help="the model name the replies are scored under")
    p.add_argument("--inspect-log", default="", help="an Inspect eval log of the export's task instead of FILE")
    p.set_defaults(fn=cmd_import_replies)

    p = sub.add_parser("inspect-logs", help="write the materialized verdicts as Inspect eval logs (inspect view)")
    p.add_argument("--out", required=True, help="log folder (one .eval log per responder × model)")
    p.set_defaults(fn=cmd_inspect_logs)

    args = parser.parse_args(argv)
    try:
        with locations(getattr(args, "annotations", None), getattr(args, "media", None)):
            return args.fn(args)
    except (AnnotationError, ManifestError, ClipKeyError, ConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
