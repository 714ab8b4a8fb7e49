"""The combine of the cross-clip tables from per-clip partials, at scale: time and peak resident memory.

What it does (say so when quoting its figures):

1. The manifest of the staged windows: ``annotations.clips.all_windows`` over the staged annotation files
   (``../shared/data``), printed per dataset.
2. Real per-clip partials: the bundled clips through the core (offline responders), each clip's
   ``score_partials`` / ``pair_partials`` / ``prior_partials`` / ``presence_partials`` / ``judge_partials``.
3. For each count N asked for: N staged window keys (spread evenly over the manifest) each get the partials of
   one bundled clip (round robin, clip_key replaced) — SYNTHESIZED partials, not those windows' own — written
   as one Parquet per clip per table in a TableStore (each of its declared schema, as the IO manager writes
   it; with ``--store DIR`` under ``DIR/<N>``, kept and reused by a later run); then, in a fresh process, the combine as the cross-clip
   assets run it (read every clip's partial files, combine scores, paired comparisons, over-marking, shortcut
   audit and the judge sample). Prints its wall time per table (reading: per partial table; the clustered
   McNemar p-values of paired_comparisons apart), the process's peak resident memory after reading and at the end.
   With ``--consolidated``, a second fresh process makes the consolidated copies the IO manager keeps
   (``warehouse.read_partitions``), writes one clip's partial files again, and then combines reading through
   the copies: what a cross-clip run after a one-clip change reads.
   With ``--models``, the bundled clips' verdicts of three offline responders are relabelled as models before
   their partials are made (``MODELS``: two configured models and an import named like one of them), so the
   partials also hold their model pairs (``paired_comparisons`` kind ``model``).

This is the part of "one changed row -> fresh cross-clip tables" that grows with the number of clips; the
changed clip's own steps do not (see ``epic_levels_pipeline_tests/defs/test_incremental_scores.py``).

    python bench/incremental_scores.py 100 300 [--source ../shared/data] [--store /tmp/partials] [--consolidated]
        [--models]
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from epic_levels_pipeline.scoring.metrics import partials as P  # noqa: E402
from epic_levels_pipeline.storage.consolidated import read_partitions  # noqa: E402
from epic_levels_pipeline.storage.parquet import read_parquet, write_parquet  # noqa: E402
from epic_levels_pipeline.storage.table_store import TableStore  # noqa: E402

STAGED = ROOT.parent / "shared" / "data"
# --models: offline responder -> (responder, model) its verdicts are relabelled as
MODELS = {"chance": ("vllm", "model-a"), "blind": ("vllm", "model-b"), "presence": ("external", "model-a")}


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def combine(store_root: str, consolidated: bool = False) -> None:
    store = TableStore(Path(store_root))
    timings, reads = {}, {}
    if consolidated:  # the copies as the last cross-clip run left them, then one clip's files written again
        files = {name: store.partition_files(name) for name in P.PARTIAL_COLUMNS}
        t = time.perf_counter()
        for name in P.PARTIAL_COLUMNS:
            read_partitions(files[name], store.consolidated_path(name))
        print(f"  consolidated copies made in {time.perf_counter() - t:.1f} s (once, after the first full read)")
        for name in P.PARTIAL_COLUMNS:
            write_parquet(read_parquet([files[name][0]]), files[name][0], name)
    t0 = time.perf_counter()
    tables = {}
    for name in P.PARTIAL_COLUMNS:
        t = time.perf_counter()
        paths = store.partition_files(name)
        tables[name] = read_partitions(paths, store.consolidated_path(name)) if consolidated else read_parquet(paths)
        reads[name.removesuffix("_partials")] = time.perf_counter() - t
    timings["read partials" + (" (consolidated copy, one clip changed)" if consolidated else "")] = time.perf_counter() - t0
    read_peak = _peak_mib()
    # the clustered McNemar p of each paired group (stats.mcnemar_clustered, as in the reference tables), timed apart
    home = sys.modules[P.paired_from_partials.__module__]
    mcnemar, mcnemar_s = home.mcnemar_clustered, [0.0]

    def timed(*args, **kwargs):
        t = time.perf_counter()
        try:
            return mcnemar(*args, **kwargs)
        finally:
            mcnemar_s[0] += time.perf_counter() - t

    home.mcnemar_clustered = timed
    steps = {
        "scores": lambda: P.scores_from_partials(tables["score_partials"]),
        "paired_comparisons": lambda: P.paired_from_partials(tables["pair_partials"]),
        "over_marking": lambda: P.over_marking_from_partials(tables["score_partials"]),
        "shortcut_audit": lambda: P.shortcut_audit_from_partials(
            tables["presence_partials"], tables["score_partials"], P.priors_from_partials(tables["prior_partials"])),
        "judge sample": lambda: P.judge_sample_from_partials(tables["judge_partials"]),
    }
    made = {}
    for name, step in steps.items():
        t = time.perf_counter()
        made[name] = step()
        timings[name] = time.perf_counter() - t
    total = time.perf_counter() - t0
    clips = tables["score_partials"]["clip_key"].nunique()
    print(f"  {clips} clips, {len(tables['score_partials'])} score_partials rows: combine {total:.1f} s ("
          + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())
          + f"); peak RSS {_peak_mib():.0f} MiB ({read_peak:.0f} MiB after reading)", flush=True)
    print("  read per table: " + ", ".join(f"{k} {v:.1f} s" for k, v in reads.items())
          + f"; paired_comparisons' clustered McNemar p-values {mcnemar_s[0]:.1f} s", flush=True)
    paired = made["paired_comparisons"]
    print(f"  pair_partials {len(tables['pair_partials']):,} rows -> paired_comparisons {len(paired):,} rows "
          f"({int((paired['kind'] == 'model').sum()):,} of kind model)", flush=True)


def synthesize(root: Path, keys: list[str], clips: list[str], real: dict) -> None:
    """Clip ``i``'s partial files: those of bundled clip ``i mod len(clips)`` with its clip_key, each file of
    its table's declared schema (as the IO manager writes them)."""
    store = TableStore(root)
    for i, key in enumerate(keys):
        for name, frame in real[clips[i % len(clips)]].items():
            write_parquet(frame.assign(clip_key=key), store.path(name, key), name)


def bundled_partials(models: bool = False) -> tuple[list[str], dict]:
    """The bundled clips through the core (offline responders; with ``models``, three of them relabelled as
    models, :data:`MODELS`) and each clip's partial tables."""
    from epic_levels_pipeline.annotations.catalogue import build_catalogue
    from epic_levels_pipeline.annotations.readers import load_annotations
    from epic_levels_pipeline_tests.conftest import offline_tables

    ann = load_annotations(ROOT / "data" / "annotations")
    t = time.perf_counter()
    core = offline_tables(ann, build_catalogue(ann))
    v, q, it = core["verdicts"], core["questions"], core["items"]
    if models:
        v = v.copy()
        for responder, (provider, name) in MODELS.items():
            mine = v["responder"] == responder
            v.loc[mine, "responder"], v.loc[mine, "model"] = provider, name
    clips = sorted(v["clip_key"].unique())
    real = {}
    for c in clips:
        pick = lambda f: f[f["clip_key"] == c]  # noqa: E731
        real[c] = {"score_partials": P.score_partials(pick(v)), "pair_partials": P.pair_partials(pick(v)),
                   "prior_partials": P.prior_partials(pick(q), pick(it)), "presence_partials": P.presence_partials(pick(q)),
                   "judge_partials": P.judge_partials(pick(v), pick(it))}
    print(f"real partials of {len(clips)} bundled clips in {time.perf_counter() - t:.1f} s")
    return clips, real


def main(counts: list[int], source: Path = STAGED, keep: Path | None = None, consolidated: bool = False,
         models: bool = False) -> None:
    from epic_levels_pipeline.annotations.clips import all_windows
    from epic_levels_pipeline.annotations.readers import load_annotations

    staged = load_annotations(source)
    windows = []
    for dataset in ("epic_sounds", "hd_epic"):
        found = all_windows(staged, dataset)
        print(f"staged windows, {dataset}: {len(found)}")
        windows += found
    print(f"staged windows: {len(windows)}")
    bundled = None
    for n in counts:
        keys = [windows[round(i * (len(windows) - 1) / max(n - 1, 1))].key for i in range(n)]
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) if keep is None else keep / str(n)
            done = root / ".synthesized"
            if not done.exists():
                bundled = bundled or bundled_partials(models)
                t = time.perf_counter()
                synthesize(root, keys, *bundled)
                done.write_text(f"{n}\n")
                print(f"{n} windows: partial files written in {time.perf_counter() - t:.1f} s")
            print(f"{n} windows (synthesized partials{', kept in ' + str(root) if keep else ''}):", flush=True)
            subprocess.run([sys.executable, __file__, "--combine", str(root)], check=True)
            if consolidated:
                print(f"{n} windows, read through the consolidated copies (the IO manager's path):", flush=True)
                subprocess.run([sys.executable, __file__, "--combine", str(root), "--consolidated"], check=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--combine"]:
        combine(sys.argv[2], consolidated="--consolidated" in sys.argv[3:])
    else:
        import argparse

        ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
        ap.add_argument("counts", nargs="*", type=int, default=[100, 300], help="windows to combine (each a run)")
        ap.add_argument("--source", type=Path, default=STAGED, help="the staged annotation files")
        ap.add_argument("--store", type=Path, default=None,
                        help="keep each count's partial files under STORE/<N> (reused when there: no synthesis)")
        ap.add_argument("--consolidated", action="store_true",
                        help="also combine after one clip changed, reading through the consolidated copies "
                             "(warehouse.read_partitions, as the IO manager does)")
        ap.add_argument("--models", action="store_true",
                        help="relabel three offline responders as models (MODELS), so the partials hold model pairs")
        args = ap.parse_args()
        main(args.counts, args.source, args.store, args.consolidated, args.models)
