"""``epic-levels import-mcq``: the VQA import from the command line (files or folders in, Parquet and the
report out)."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from .options import about, location_flags


def add_parser(sub) -> None:
    p = sub.add_parser("import-mcq", **about("convert HD-EPIC's VQA benchmark files through the format steps"))
    p.add_argument("paths", nargs="*", help="files or folders (default: the vqa-benchmark folder of HD-EPIC's "
                   "annotations under the annotations root)")
    p.add_argument("--out", default="", metavar="DIR", help="output folder (default data/assets/hd_epic_vqa/)")
    p.add_argument("--strict", action="store_true", help="refuse the whole import when any question cannot be "
                   "converted (default: skip it, counted by reason)")
    location_flags(p)
    p.set_defaults(fn=cmd_import_mcq)


def cmd_import_mcq(args: argparse.Namespace) -> int:
    return main_import([Path(p) for p in args.paths], Path(args.out) if args.out else None, strict=args.strict,
                       project=args.project)


def main_import(paths: list[Path], out_dir: Path | None = None, *, strict: bool = False,
                project: Paths | None = None) -> int:
    """CLI entry: import, print the per-file open / 4b / checker split, write Parquet + CSV; exit code.

    ``paths`` are files or folders (empty: the ``vqa-benchmark`` folder under the annotations root, 2 when there
    is none). Writes ``hd_epic_vqa_questions.parquet``, ``hd_epic_vqa_items.parquet`` and ``hd_epic_vqa_import_report.csv`` under ``out_dir`` (default
    ``data/assets/hd_epic_vqa/`` under the working directory). Returns 1 (nothing written) when a path is
    missing, no JSON file is found, or a file is invalid (problems printed to stderr as
    ``FILE:QID:FIELD: message``); else 0. Unless ``strict``, questions that cannot be converted honestly are
    skipped and counted by reason (printed, in the report); the report and the skipped questions are also
    written as the tables ``hd_epic_vqa_import_report`` and ``hd_epic_vqa_skipped`` of the project's table store
    (warehouse views of those names after the next ``epic-levels run``), or into ``out_dir`` when one is given.
    """
    import sys

    import pandas as pd

    from ..imports.vqa_conversion import DATASET, SKIPPED_COLUMNS, _expand, import_files
    from ..imports.vqa_reading import VqaFileError
    from ..settings import Paths
    from ..storage.parquet import write_parquet
    from ..storage.table_store import TableStore

    if not paths:
        from ..imports.vqa_source import find_vqa_folder

        found = find_vqa_folder((project or Paths.default()).annotations)
        if found is None:
            print(f"error: no vqa-benchmark folder under the annotations root {(project or Paths.default()).annotations}; name "
                  "the files or folders, or point --annotations at HD-EPIC's annotations", file=sys.stderr)
            return 2
        paths = [found]
    paths = [Path(p) for p in paths]
    missing = [p for p in paths if not p.exists()]
    for p in missing:
        print(f"{p}:-:-: no such file or folder", file=sys.stderr)
    if missing:
        return 1
    if not _expand(paths):
        print(f"no *.json files in {', '.join(map(str, paths))}", file=sys.stderr)
        return 1
    try:
        skipped: list[dict] = []
        questions, items, report = import_files(paths, strict=strict, skipped=skipped)
    except VqaFileError as exc:
        for p in exc.problems:
            print(p, file=sys.stderr)
        print(f"{len(exc.problems)} problem(s); nothing written", file=sys.stderr)
        return 1
    out = Path(out_dir) if out_dir is not None else Path.cwd() / "data" / "assets" / DATASET
    write_parquet(questions, out / f"{DATASET}_questions.parquet")
    write_parquet(items, out / f"{DATASET}_items.parquet")
    out.mkdir(parents=True, exist_ok=True)
    report.to_csv(out / f"{DATASET}_import_report.csv", index=False)
    store = TableStore((project or Paths.default()).assets if out_dir is None else out)  # a chosen --out keeps them with it
    write_parquet(report, store.path(f"{DATASET}_import_report"))
    write_parquet(pd.DataFrame(skipped, columns=SKIPPED_COLUMNS), store.path(f"{DATASET}_skipped"))
    shown = report[["file", "n_imported", "n_open", "n_option_judgement", "n_rejected_by_checker",
                    "n_rejected_markup_only", "top_reasons"]]
    total = shown.drop(columns=["file", "top_reasons"]).sum()
    with pd.option_context("display.max_colwidth", 90, "display.width", 250):
        print(shown.to_string(index=False))
    print(f"\nTOTAL: {total['n_imported']} questions, {total['n_open']} open, {total['n_option_judgement']} option_judgement "
          f"(4b), of which {total['n_rejected_by_checker']} rejected by the checker "
          f"({total['n_rejected_markup_only']} only for option text inside <TIME>/<BBOX> markup); "
          f"{len(items)} items → {out}")
    by_reason = Counter(s["reason"] for s in skipped)
    print(f"skipped as unconvertible: {len(skipped)}" + (" (" + ", ".join(
        f"{reason} {n}" for reason, n in sorted(by_reason.items())) + ")" if skipped else "")
          + ("" if strict else "; --strict refuses the import instead"))
    for note in report.loc[report["note"] != "", ["file", "note"]].itertuples(index=False):
        print(f"{note.file}: {note.note}")
    return 0
