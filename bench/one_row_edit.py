"""Benchmark: one-row edit -> fresh cross-clip tables, on the path the first-start test drives
(``epic_levels_pipeline_tests/test_first_start.py``): ``epic-levels run``, then the Dagster daemon (what
``dagster dev`` runs beside the webserver) with the project's sensors on, then one annotation row edited.

A temporary project root gets a copy of the bundled annotations, the manifest (the test's three clips, or
every bundled clip with ``--all-clips``), ``workspace.yaml`` and ``dagster.yaml`` (stock SQLite storage);
the child processes get ``DAGSTER_HOME`` = ``EPIC_LEVELS_HOME`` = that root and no model or key variables, so
the repository's ``data/`` is never touched and no model is called.

Prints the peak resident memory of every process of the daemon's tree (the run processes it launches), and the wall time of ``epic-levels run`` (the main job on those clips; and the command's own figure), then for each of ``--repeat N``
edits of sound P09_08_13 (its start moves by 38 ms, then 40 ms more each time) the wall time from the
write to the moment every cross-clip table (scores, paired_comparisons, over_marking, shortcut_audit) has a
materialization after the edit and no run is queued or running, split into the wait for the sensor's tick
(edit -> the run's creation) and the runs themselves. Each edit starts right after a sensor tick (as in the
test, where the daemon has just ticked twice), so the sensor's 30 s interval is included. The daemon's
process group is always ended.

At scale (``--project DIR``): a project ``epic-levels run`` has already materialized (as ``bench/full_run.py
--project DIR [--limit N]`` leaves it) is used as it is, with no run of its own. Its annotations (``--annotations
DIR``, the staged files by default) are copied once to ``DIR/edited-annotations`` (the staged folder is
read-only; the copy has the same content fingerprint, so the sensor sees no change) and the daemon reads the
copy (``EPIC_LEVELS_ANNOTATIONS``). The row edited is a sound of the manifest's first ``epic_sounds`` window
that starts inside it (its start moves by 38 ms, then 40 ms more each time, staying inside the window). Before
each edit the bench waits until no run is queued or running (the daemon's first ticks may start some).

Usage (from the repo root): ``python bench/one_row_edit.py [--all-clips] [--repeat N]``, or
``python bench/one_row_edit.py --project DIR [--annotations DIR] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import dagster as dg  # noqa: E402

from epic_levels_pipeline.annotations.clips import Clip  # noqa: E402
from epic_levels_pipeline.annotations.clip_keys import read_manifest  # noqa: E402
from epic_levels_pipeline.orchestration.local import project_instance  # noqa: E402
from epic_levels_pipeline.settings import Paths  # noqa: E402
from full_run import Sampler  # noqa: E402  (bench/, this script's folder)

TEST_CLIPS = ["epic_sounds__P09_08__45-75", "epic_sounds__P02_133__15-45", "hd_epic__P09-20240623-120359__1440-1470"]
ROW = "P09_08_13,P09,P09_08,00:00:47."
START_MS = 662
SENSORS = ("annotation_change_sensor", "epic_levels_automation")
CROSS_CLIP = ("scores", "paired_comparisons", "over_marking", "shortcut_audit")
UNFINISHED = [dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING,
              dg.DagsterRunStatus.STARTED]
TIMEOUT = 600


def executable(name: str) -> str:
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else (shutil.which(name) or name)


def make_root(tmp: Path, all_clips: bool) -> Path:
    root = tmp / "project"
    shutil.copytree(REPO / "data" / "annotations", root / "data" / "annotations")
    lines = (REPO / "data" / "clips.csv").read_text("utf-8").splitlines()
    if not all_clips:
        keep = {(c.dataset, c.video_id, f"{c.start_s:g}", f"{c.end_s:g}") for c in map(Clip.from_key, TEST_CLIPS)}
        lines = [lines[0], *[line for line in lines[1:] if tuple(line.split(",")) in keep]]
    (root / "data" / "clips.csv").write_text("\n".join(lines) + "\n", "utf-8")
    for name in ("workspace.yaml", "dagster.yaml"):
        shutil.copy2(REPO / name, root / name)
    return root


STAGED = REPO.parent / "shared" / "data"
SOUNDS = Path("epic-sounds") / "EPIC_Sounds_validation.csv"


def seconds_of(stamp: str) -> float:
    h, m, sec = stamp.split(":")
    return int(h) * 3600 + int(m) * 60 + float(sec)


def stamp_of(seconds: float) -> str:
    ms = round(seconds * 1000)
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


def row_to_edit(source: Path, manifest: Path) -> tuple[str, float, float]:
    """(the row's text up to its start time, its start in seconds, the window's end): a sound of the
    manifest's first epic_sounds window that starts inside it, at least 2 s before its end."""
    window = next(c for c in read_manifest(manifest) if c.dataset == "epic_sounds")
    for line in source.read_text("utf-8").splitlines()[1:]:
        cells = line.split(",")
        start = seconds_of(cells[3])
        if cells[2] == window.video_id and window.start_s <= start < window.end_s - 2:
            return ",".join(cells[:3]) + ",", start, window.end_s
    raise SystemExit(f"no sound of {window.key} in {source}")


def environment(root: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "EPIC_LEVELS_MODELS", "EPIC_LEVELS_JUDGE_MODEL",
                        "EPIC_LEVELS_RESPONDERS") and not k.startswith("DAGSTER_")}
    env.update(DAGSTER_HOME=str(root), EPIC_LEVELS_HOME=str(root), PYTHONUNBUFFERED="1",
               PYTHONPATH=os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]))
    return env


def stop(proc: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGINT, 30), (signal.SIGTERM, 10)):
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, sig)
                proc.wait(timeout=wait)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def last_tick(instance: dg.DagsterInstance) -> dict[str, float]:
    """The time of each sensor's newest finished tick (success or skipped). A time, not a count of the ticks
    listed: a project the daemon has run on before holds more ticks than one listing returns."""
    newest = {}
    for state in instance.all_instigator_state():
        if state.instigator_name in SENSORS:
            found = instance.get_ticks(state.instigator_origin_id, state.selector_id, limit=10)  # newest first
            newest[state.instigator_name] = max((t.timestamp for t in found if t.status.value in ("SUCCESS", "SKIPPED")),
                                                default=0.0)
    return newest


def fresh(instance: dg.DagsterInstance, after: float) -> bool:
    for asset in CROSS_CLIP:
        found = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), after_timestamp=after), limit=1)
        if not found.records:
            return False
    return not instance.get_run_records(filters=dg.RunsFilter(statuses=UNFINISHED))


def runs_since(instance: dg.DagsterInstance, after: float) -> list:
    return sorted((r for r in instance.get_run_records() if r.create_timestamp.timestamp() > after),
                  key=lambda r: r.create_timestamp)


def wait_for_tick(instance: dg.DagsterInstance, daemon: subprocess.Popen, name: str, after: float) -> None:
    """Wait for a tick of sensor ``name`` newer than ``after`` (a tick's time)."""
    deadline = time.monotonic() + TIMEOUT
    while last_tick(instance).get(name, 0.0) <= after:
        if daemon.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the daemon exited or the sensor {name} did not tick")
        time.sleep(0.2)


def idle(instance: dg.DagsterInstance, daemon: subprocess.Popen) -> None:
    """Wait until no run is queued or running (runs the daemon's first ticks start, before an edit)."""
    deadline = time.monotonic() + TIMEOUT
    while instance.get_run_records(filters=dg.RunsFilter(statuses=UNFINISHED), limit=1):
        if daemon.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("the daemon exited or its runs did not finish")
        time.sleep(1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--all-clips", action="store_true", help="every bundled clip, not the first-start test's three")
    ap.add_argument("--repeat", type=int, default=1, metavar="N", help="N edits, one after the other")
    ap.add_argument("--project", type=Path, help="a project `epic-levels run` has materialized (no run of its own)")
    ap.add_argument("--annotations", type=Path, default=STAGED,
                    help="with --project: the annotations it was run on (copied once; default the staged files)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-one-row-edit-") as tmp:
        if args.project:
            root = args.project.resolve()
            annotations = root / "edited-annotations"
            if not annotations.exists():
                shutil.copytree(args.annotations, annotations)
            for name in ("workspace.yaml", "dagster.yaml"):
                if not (root / name).exists():
                    shutil.copy2(REPO / name, root / name)
            env = dict(environment(root), EPIC_LEVELS_ANNOTATIONS=str(annotations))
            source = annotations / SOUNDS
            prefix, start_s, end_s = row_to_edit(source, root / "data" / "clips.csv")
            n_clips = len(read_manifest(root / "data" / "clips.csv"))
            run_s, inside = float("nan"), "materialized before"
            print(f"{n_clips} clips in {root} (materialized before); the row edited: {prefix}{stamp_of(start_s)}")
        else:
            root = make_root(Path(tmp), args.all_clips)
            env = environment(root)
            source = root / "data" / "annotations" / SOUNDS
            prefix, start_s, end_s = ROW, 47 + START_MS / 1000, 75.0
            n_clips = len((root / "data" / "clips.csv").read_text().splitlines()) - 1
            t = time.perf_counter()
            done = subprocess.run([executable("epic-levels"), "run"], cwd=root, env=env, capture_output=True, text=True)
            run_s = time.perf_counter() - t
            if done.returncode != 0:
                print(done.stdout[-3000:] + done.stderr[-3000:])
                return 1
            inside = next((line.strip() for line in done.stdout.splitlines()[::-1] if " runs, " in line), "")
            print(f"{n_clips} clips; `epic-levels run`: {run_s:.1f} s wall ({inside})")
        log = Path(tmp) / "daemon.log"
        with open(log, "w") as out:
            daemon = subprocess.Popen([executable("dagster-daemon"), "run", "-w", "workspace.yaml"], cwd=root, env=env,
                                      stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        sampler = Sampler(daemon.pid, 0.5, log, 0)  # the daemon and every run process it launches
        sampler.start()
        figures = []
        try:
            with project_instance(Paths(root)) as instance:
                started_at = time.time()  # the daemon has started and ticked twice
                wait_for_tick(instance, daemon, SENSORS[0], started_at)
                wait_for_tick(instance, daemon, SENSORS[0], last_tick(instance)[SENSORS[0]])
                for i in range(args.repeat):
                    idle(instance, daemon)
                    before = last_tick(instance).get(SENSORS[0], 0.0)
                    wait_for_tick(instance, daemon, SENSORS[0], before)  # edit right after a tick, as the test
                    text = source.read_text()
                    old = start_s + (0.038 * min(i, 1) + 0.040 * max(i - 1, 0))
                    new = start_s + 0.038 + 0.040 * i
                    assert new < end_s and f"{prefix}{stamp_of(old)}" in text, stamp_of(old)
                    edited_at = time.time()
                    started = time.monotonic()
                    source.write_text(text.replace(f"{prefix}{stamp_of(old)}", f"{prefix}{stamp_of(new)}"))
                    while not fresh(instance, edited_at):
                        if daemon.poll() is not None or time.monotonic() - started > TIMEOUT:
                            print(f"not fresh within {TIMEOUT} s:\n" + log.read_text()[-3000:])
                            return 1
                        time.sleep(0.25)
                    seconds = time.monotonic() - started
                    runs = runs_since(instance, edited_at)
                    first = runs[0].create_timestamp.timestamp() - edited_at if runs else float("nan")
                    in_runs = sum((r.end_time or 0) - (r.start_time or 0) for r in runs)
                    failed = [r.dagster_run.job_name for r in runs if r.dagster_run.status != dg.DagsterRunStatus.SUCCESS]
                    figures.append(seconds)
                    print(f"edit {i + 1}/{args.repeat}: fresh cross-clip tables after {seconds:.1f} s "
                          f"(edit -> first run created {first:.1f} s; {len(runs)} runs "
                          f"[{', '.join(r.dagster_run.job_name for r in runs)}], {in_runs:.1f} s from start to end"
                          f"{'; FAILED: ' + ', '.join(failed) if failed else ''})")
        finally:
            sampler.stop.set()
            stop(daemon)
            sampler.join()
        print("peak resident memory per process of the daemon's tree (VmHWM, sampled every 0.5 s):")
        for pid, peak in sorted(sampler.peak.items(), key=lambda kv: -kv[1])[:6]:
            print(f"  {peak / 1024 ** 3:6.2f} GiB  pid {pid}  {sampler.names[pid][:100]}")
    print("\nfigures:")
    print(f"  clips: {n_clips}; `epic-levels run` {run_s:.1f} s wall, the command's own figure: {inside}")
    print(f"  one-row edit -> fresh cross-clip tables: median {statistics.median(figures):.1f} s of {len(figures)} "
          f"({', '.join(f'{s:.1f}' for s in figures)} s; sensor interval 30 s included)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
