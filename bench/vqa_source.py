"""HD-EPIC's VQA benchmark through the graph as a source: import every staged file, run its video partitions
(offline responders) and ``scores``, in a temporary project and Dagster instance; print the import's counts
(imported, skipped by reason), the seconds per stage, and the offline responders' rows in ``scores``.

    PYTHONPATH=$PWD python bench/vqa_source.py [--annotations ../shared/data]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import dagster as dg
import pandas as pd

from epic_levels_pipeline.defs.partitions import batches, range_tags
from epic_levels_pipeline.orchestration.local import asset_groups, load_definitions
from epic_levels_pipeline.storage.parquet import read_parquet
from epic_levels_pipeline.storage.table_store import TableStore

IMPORT = ["hd_epic_vqa_questions", "hd_epic_vqa_all_items", "hd_epic_vqa_import_report", "hd_epic_vqa_skipped"]
QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--annotations", default=str(Path(__file__).resolve().parents[1] / ".." / "shared" / "data"))
    args = parser.parse_args()
    if not Path(args.annotations).is_dir():
        raise SystemExit(f"{args.annotations}: no such folder (pass --annotations DIR)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        (root / "data").mkdir(parents=True)
        (root / "data" / "clips.csv").write_text("dataset,video_id,start_s,end_s\n")
        os.environ["EPIC_LEVELS_HOME"] = str(root)
        os.environ["EPIC_LEVELS_ANNOTATIONS"] = str(Path(args.annotations).resolve())
        for name in ("EPIC_LEVELS_MODELS", "EPIC_LEVELS_RESPONDERS"):
            os.environ.pop(name, None)
        defs = load_definitions()
        job = defs.resolve_implicit_global_asset_job_def()
        seconds = {}
        with dg.instance_for_test(temp_dir=tmp) as instance:
            def run(names, **kw):
                t = time.perf_counter()
                result = job.execute_in_process(instance=instance, asset_selection=names, run_config=QUIET,
                                                raise_on_error=False, **kw)
                assert result.success, names
                return time.perf_counter() - t
            seconds["import"] = run([dg.AssetKey(k) for k in IMPORT])
            keys = instance.get_dynamic_partitions("hd_epic_vqa")
            source = asset_groups(defs, partitions="hd_epic_vqa")[1]
            seconds["partitions"] = sum(run(source, partition_key=b[0] if len(b) == 1 else None, tags=range_tags(b))
                                        for b in batches(keys, keys))
            seconds["scores"] = run([dg.AssetKey("scores")])
        store = TableStore(root / "data" / "assets")
        report = read_parquet([store.path("hd_epic_vqa_import_report")])
        skipped = read_parquet([store.path("hd_epic_vqa_skipped")])
        scores = read_parquet([store.path("scores")])
    counts = report[[c for c in report.columns if c.startswith("n_")]].sum()
    print(f"files: {len(report)}; video partitions: {len(keys)}")
    print(counts.to_string())
    print("skipped by reason:", skipped["reason"].value_counts().to_dict() if len(skipped) else "none")
    print("seconds:", {k: round(v, 1) for k, v in seconds.items()})
    mine = scores[(scores["dataset"] == "hd_epic_vqa") & (scores["subtype"] == "*")]
    top = mine[mine["level"] == "*"]
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(top.pivot_table(index=["responder", "condition"], columns="format", values="chance_corrected",
                              aggfunc="first").round(3).to_string())
        print(top[top["format"] == "*"][["responder", "condition", "n", "accuracy", "chance", "chance_corrected",
                                         "ci_low", "ci_high", "n_skipped", "n_unparsed", "n_undecided",
                                         "n_clips"]].round(3).to_string(index=False))
        cats = mine[(mine["format"] == "*") & (mine["level"] != "*") & (mine["condition"] == "clip")]
        print(cats.pivot_table(index="level", columns="responder", values="chance_corrected", aggfunc="first")
              .round(3).to_string())


if __name__ == "__main__":
    main()
