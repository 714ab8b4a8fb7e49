"""Benchmark: several judges through the whole graph, against local servers that answer differently.

Two runs of ``epic-levels run`` (in process) on a copy of the bundled project, with the offline responders
(``oracle``, ``chance``, ``blind``, ``presence``; the caption track's ``oracle`` and ``corrupted`` among its own),
each judge a local OpenAI-compatible server (``epic_levels_pipeline_tests/fakes/judge_server.py``, the real
``openai`` SDK):

1. **two judges**: ``reader`` (picks the candidate the reply names; scores descriptions by shared words) and
   ``positional`` (always the first candidate; always agrees; always 5), ``judge = "reader"``. Printed:
   ``judge_agreement`` (Cohen's κ per pair, Krippendorff's α), ``judge_swap`` (each responder's score with each
   judge's answers, its shift and the Spearman ρ of the ranking), ``judge_audit`` and the caption track's
   semantic scores (per clip, then over clips, beside pooled) with the schema gate;
2. **a judge that times out**: ``slow`` (``reader``'s answers after ``--slow-latency`` s, ``timeout_s`` below it)
   decides, ``reader`` beside it; the caption track's ``oracle`` alone (its pairs are decided by rule), since
   every failed call is retried with backoff before it counts. Printed: the verdicts by ``scored_by`` (``judge_failed`` apart from
   ``undecided``), and ``scores``' counts per responder (``n_judge_failed`` left out of ``n``, never wrong).

Usage (from the repo root): ``python bench/judges.py [--clips N] [--timeout-clips N] [--slow-latency S]``
(``--clips``: N bundled clips, half of each dataset, default 8; 0 leaves a run out).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import pandas as pd  # noqa: E402

from epic_levels_pipeline import cli  # noqa: E402
from epic_levels_pipeline.annotations.clip_keys import read_manifest  # noqa: E402
from epic_levels_pipeline.storage.views import query  # noqa: E402
from epic_levels_pipeline_tests.fakes.judge_server import judge_reply  # noqa: E402
from epic_levels_pipeline_tests.fakes.openai_server import OpenAITestServer  # noqa: E402
from orchestration import offline_process, temp_project  # noqa: E402

RESPONDERS = "oracle,chance,blind,presence"
TOP = "dataset = '*' AND level = '*' AND subtype = '*' AND format = '*' AND distractor_strategy = '*'"


def entry(name: str, server, timeout_s: float = 30) -> str:
    return (f'[models.{name}]\nprovider = "vllm"\nmodel = "{name}"\nendpoint = "{server.base_url}"\n'
            f"timeout_s = {timeout_s}\n")


def spread(paths, n: int) -> list[str]:
    """The manifest's first ``n`` clips, half of each dataset."""
    clips = read_manifest(paths.manifest)
    by = {ds: [c.key for c in clips if c.dataset == ds] for ds in ("epic_sounds", "hd_epic")}
    return by["epic_sounds"][: (n + 1) // 2] + by["hd_epic"][: n // 2]


def run(paths, models_toml: str, clips: list[str]) -> float:
    (paths.root / "models.toml").write_text(models_toml)
    started = time.perf_counter()
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = cli.main(["run", "--clips", ",".join(clips), "--responders", RESPONDERS])
    if code != 0:
        raise SystemExit(f"epic-levels run failed (exit {code}):\n{out.getvalue()[-3000:]}")
    return time.perf_counter() - started


def show(title: str, frame: pd.DataFrame) -> None:
    print(f"\n{title}")
    print(frame.round(3).to_string(index=False) if len(frame) else "(no rows)")


def two_judges(tmp: Path, n_clips: int) -> None:
    paths = temp_project(tmp / "two", None)
    os.environ["EPIC_LEVELS_HOME"] = str(paths.root)
    clips = spread(paths, n_clips)
    with OpenAITestServer(judge_reply("reader"), models=("reader",), record=False) as reader, \
            OpenAITestServer(judge_reply("first"), models=("positional",), record=False) as positional:
        seconds = run(paths, 'judge = "reader"\njudges = ["reader", "positional"]\n\n'
                      + entry("reader", reader) + "\n" + entry("positional", positional), clips)
        calls = reader.chat_calls, positional.chat_calls
    w = paths.warehouse
    print(f"1. two judges (reader decides, positional beside it) on {len(clips)} clips: {seconds:.0f} s, "
          f"judge calls reader {calls[0]}, positional {calls[1]}")
    show("verdicts by scored_by:", query(w, "SELECT scored_by, count(*) AS n FROM verdicts GROUP BY 1 ORDER BY 1"))
    show("judge_agreement:", query(w, "SELECT track, judge_a, judge_b, n, agreement, cohen_kappa, krippendorff_alpha, "
                                      "note FROM judge_agreement ORDER BY track, judge_a"))
    swap = query(w, "SELECT track, metric, responder, condition, judge, n, value, chance_corrected, shift, rank, "
                    "spearman_rho FROM judge_swap WHERE judge <> 'verdict' ORDER BY track, metric, condition, judge, "
                    "responder")
    show("judge_swap, QA track (chance-corrected, every format pooled; shift from the verdict's):",
         swap[swap["track"] == "qa"].drop(columns=["value"]))
    caption = swap[(swap["track"] != "qa") & (swap["condition"] == "clip")
                   & swap["metric"].isin(["action_label_f1", "semantic_action_p", "semantic_action_r",
                                          "semantic_reference_p", "semantic_reference_r"])]
    show("judge_swap, caption track (condition clip; label F1 and semantic scores, 1-5):",
         caption.drop(columns=["chance_corrected"]))
    summary = swap.assign(abs_shift=swap["shift"].abs()).groupby(["track", "metric", "judge"]).agg(
        models=("responder", "nunique"), largest_abs_shift=("abs_shift", "max"), mean_rho=("spearman_rho", "mean"))
    show("judge swap in short (every condition):", summary.reset_index())
    show("judge_audit (each judge against the rules and itself):",
         query(w, "SELECT judge_model, responder, n, judge_rule_agreement, judge_self_agreement, judge_none_rate, "
                  "judge_errors FROM judge_audit ORDER BY judge_model, responder"))
    semantic(w)


def semantic(w) -> None:
    frame = query(w, "SELECT responder, condition, metric, n, value FROM caption_scores WHERE dataset = '*' AND "
                     "matcher = 'greedy' AND (metric LIKE 'semantic_%' OR metric = 'schema_gate')")
    wide = frame.pivot_table(index=["responder", "condition"], columns="metric", values="value", aggfunc="first")
    cols = ["schema_gate"] + [f"semantic_{k}_{m}{p}" for k in ("event", "action", "reference") for m in ("p", "r")
                              for p in ("", "_pooled")]
    show("caption semantic layer (reader's verdicts, 1-5; per clip then over clips, and pooled over pairs):",
         wide.reindex(columns=[c for c in cols if c in wide.columns]).reset_index())


def timeout_judge(tmp: Path, n_clips: int, latency: float) -> None:
    paths = temp_project(tmp / "slow", None)
    os.environ["EPIC_LEVELS_HOME"] = str(paths.root)
    os.environ["EPIC_LEVELS_CAPTION_RESPONDERS"] = "oracle"  # its pairs are decided by rule: the QA judge's calls only
    clips = spread(paths, n_clips)
    with OpenAITestServer(judge_reply("reader"), models=("slow",), latency_s=latency, record=False) as slow, \
            OpenAITestServer(judge_reply("reader"), models=("reader",), record=False) as reader:
        seconds = run(paths, 'judge = "slow"\njudges = ["slow", "reader"]\n\n'
                      + entry("slow", slow, timeout_s=latency / 10) + "\n" + entry("reader", reader), clips)
    w = paths.warehouse
    print(f"\n2. a judge that times out (slow decides: {latency:g} s per answer, timeout_s {latency / 10:g}; reader "
          f"beside it) on {len(clips)} clips: {seconds:.0f} s")
    show("verdicts by scored_by:", query(w, "SELECT scored_by, count(*) AS n FROM verdicts GROUP BY 1 ORDER BY 1"))
    show("a judge_failed verdict's note:", query(w, "SELECT note FROM verdicts WHERE scored_by = 'judge_failed' "
                                                    "LIMIT 1"))
    show("scores (condition clip, every format): judge_failed left out of n, never counted wrong",
         query(w, f"SELECT responder, n, n_judge_failed, n_undecided, accuracy, accuracy_strict, chance_corrected "
                  f"FROM scores WHERE {TOP} AND condition = 'clip' ORDER BY responder"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clips", type=int, default=8, help="bundled clips in the two-judge run (half per dataset)")
    ap.add_argument("--timeout-clips", type=int, default=2, help="bundled clips in the timing-out judge's run")
    ap.add_argument("--slow-latency", type=float, default=2.0, help="seconds the slow judge takes to answer")
    args = ap.parse_args(argv)
    offline_process()
    os.environ["EPIC_LEVELS_CONCURRENCY"] = "16"
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-judges-") as tmp, \
            pd.option_context("display.width", 220, "display.max_columns", 30, "display.max_colwidth", 70):
        if args.clips:
            two_judges(Path(tmp), args.clips)
        if args.timeout_clips:
            timeout_judge(Path(tmp), args.timeout_clips, args.slow_latency)
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
