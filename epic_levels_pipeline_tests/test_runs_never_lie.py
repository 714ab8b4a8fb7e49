"""The reliability probes as tests (end to end: ``epic-levels run`` and the Dagster daemon as processes).

1. Two ``epic-levels run``s killed with SIGKILL while their runs are STARTED hold both run slots
   (``max_concurrent_runs: 2``) until the daemon's run monitoring finds their processes gone and marks them failed;
   the sensor's ``retire_clips_job`` for a clip removed from the manifest then starts. The time from the sensor's
   tick to that run's start is printed (``-s`` shows it): a figure for the notes, asserted only against a generous
   timeout. A manifest row whose video has no annotations then fails the runs the sensor and the UI start, each
   with the pre-flight's one line as its failure message.
2. Runs killed inside the annotation tables, inside the per-clip batch and inside the cross-clip tables, a truncated
   clip file, a garbled consolidated copy, a deleted warehouse, two runs at once, a clip whose video has no
   annotations (refused; kept when marked deliberate, then removed from the manifest and retired), a configuration
   error and a step that fails: every following ``epic-levels run`` ends in the clean run's warehouse digest
   (:func:`warehouse_digest`), a refused run leaves it untouched, and the failing one prints what failed and no
   table.

Each test works on its own copy of the project (``DAGSTER_HOME`` = ``EPIC_LEVELS_HOME`` = that copy, the
repository's ``dagster.yaml``); every process it starts is ended.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import dagster as dg
import pytest

from epic_levels_pipeline.orchestration.dead_runs import LIVE_STATUSES
from epic_levels_pipeline.orchestration.local import project_instance
from epic_levels_pipeline.settings import Paths
from epic_levels_pipeline.storage.views import query, table_digest

from .conftest import SEED_CLIPS, make_project
from .test_first_start import environment, executable, log_tail, stop

ROOT = Path(__file__).resolve().parents[1]
CLIPS = SEED_CLIPS + ["hd_epic__P09-20240623-120359__1440-1470"]
REMOVED = "hd_epic,P09-20240623-120359,1440,1470"
UNKNOWN_VIDEO = "epic_sounds,P99_99,0,30"
# Columns that differ between a first run and a re-run of the same inputs: a call's latency, whether it was cached.
VOLATILE = {"latency_s", "cached"}
START_TIMEOUT = 300  # the daemon's start, a sensor interval (30 s) and a monitoring poll (10 s) on a loaded machine


def project_copy(tmp_path: Path, name: str) -> Paths:
    paths = make_project(tmp_path / name, CLIPS)
    for file in ("workspace.yaml", "dagster.yaml"):
        shutil.copy2(ROOT / file, paths.root / file)
    return paths


def warehouse_digest(paths: Paths) -> dict[str, tuple[int, str]]:
    """Every warehouse table's (rows, sha256) in a canonical row order, without the ``VOLATILE`` columns and with
    the project's root written as ``<root>`` (paths in messages)."""
    columns = query(paths.warehouse, "SELECT table_name, column_name, data_type FROM information_schema.columns "
                                     "WHERE table_schema = 'main' ORDER BY table_name, ordinal_position")
    out = {}
    for table, rows in columns.groupby("table_name", sort=True):
        exprs = [f"replace(\"{c}\", '{paths.root}', '<root>') AS \"{c}\"" if t == "VARCHAR" else f'"{c}"'
                 for c, t in zip(rows["column_name"], rows["data_type"]) if c not in VOLATILE]
        out[table] = table_digest(paths.warehouse, table, exprs)
    return out


def run_cli(paths: Paths, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([executable("epic-levels"), "run"], cwd=paths.root, env=environment(paths.root),
                          capture_output=True, text=True, timeout=timeout)


def start_cli(paths: Paths) -> subprocess.Popen:
    return subprocess.Popen([executable("epic-levels"), "run"], cwd=paths.root, env=environment(paths.root),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def kill(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def wait_for_line(proc: subprocess.Popen, start: str) -> None:
    """Read ``proc``'s output until a line starting with ``start``."""
    for line in proc.stdout:
        if line.startswith(start):
            return
    pytest.fail(f"the run ended (exit {proc.wait()}) before a line starting {start!r}")


def live_runs(paths: Paths) -> list[dg.DagsterRun]:
    with project_instance(paths) as instance:
        return [r.dagster_run for r in instance.get_run_records(filters=dg.RunsFilter(statuses=LIVE_STATUSES))]


def wait_for(condition, timeout: float, what: str, poll: float = 1.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(poll)
    pytest.fail(f"not within {timeout:.0f} s: {what}")


def failure_message(instance: dg.DagsterInstance, run_id: str) -> str:
    records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.RUN_FAILURE).records
    return records[-1].event_log_entry.dagster_event.message if records else ""


def test_two_killed_runs_do_not_stop_the_sensors_next_run(tmp_path):
    paths = project_copy(tmp_path, "project")
    env = environment(paths.root)
    # two `epic-levels run`s at once, both SIGKILLed once each has a run STARTED: both run slots held by dead
    # processes (started one after the other, the second would mark the first's run failed as it starts)
    both = [start_cli(paths), start_cli(paths)]
    try:
        wait_for(lambda: len([r for r in live_runs(paths) if r.status == dg.DagsterRunStatus.STARTED]) >= 2,
                 300, "two runs STARTED")
    finally:
        for proc in both:
            kill(proc)
    stale = [r.run_id for r in live_runs(paths)]
    assert len(stale) == 2

    lines = paths.manifest.read_text().splitlines()
    assert lines[-1] == REMOVED
    paths.manifest.write_text("\n".join(lines[:-1]) + "\n")
    log = tmp_path / "daemon.log"
    daemon_started = time.time()
    with open(log, "w") as out:
        daemon = subprocess.Popen([executable("dagster-daemon"), "run", "-w", "workspace.yaml"], cwd=paths.root,
                                  env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        with project_instance(paths) as instance:
            def retire_run():
                assert daemon.poll() is None, f"the daemon exited:\n{log_tail(log)}"
                records = instance.get_run_records(filters=dg.RunsFilter(job_name="retire_clips_job"))
                return records[0] if records and records[0].start_time else None

            record = wait_for(retire_run, START_TIMEOUT, f"retire_clips_job started\n{log_tail(log)}")
            tick = next(t for s in instance.all_instigator_state() if s.instigator_name == "annotation_change_sensor"
                        for t in instance.get_ticks(s.instigator_origin_id, s.selector_id, limit=50)
                        if record.dagster_run.run_id in t.run_ids)
            cleared = []
            for run_id in stale:
                run = instance.get_run_by_id(run_id)
                assert run.status == dg.DagsterRunStatus.FAILURE
                assert "is gone (killed, or the machine restarted)" in failure_message(instance, run_id)
                event = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.RUN_FAILURE).records[-1]
                cleared.append(event.event_log_entry.timestamp - tick.timestamp)
            print(f"\nsensor tick -> retire_clips_job started: {record.start_time - tick.timestamp:.1f} s; the two "
                  f"killed runs marked failed by run monitoring at {', '.join(f'{t:+.1f}' for t in cleared)} s from "
                  f"the tick; daemon started {daemon_started - tick.timestamp:+.1f} s from the tick")
            wait_for(lambda: instance.get_run_by_id(record.dagster_run.run_id).is_finished, 300, "retire finished")
            assert instance.get_run_by_id(record.dagster_run.run_id).status == dg.DagsterRunStatus.SUCCESS
            assert "hd_epic__P09-20240623-120359__1440-1470" not in instance.get_dynamic_partitions("clips")

            # a manifest row with no annotations: the sensor's run and a run started as the UI starts one both
            # fail with the pre-flight's line as their message, before any step
            before = {r.dagster_run.run_id for r in instance.get_run_records()}
            paths.manifest.write_text(paths.manifest.read_text() + UNKNOWN_VIDEO + "\n")
            line = f"{paths.manifest}:{len(lines)}:video_id: video P99_99 has no rows in any epic_sounds annotation table"
            from epic_levels_pipeline.orchestration.run_queue import submit, workspace

            with workspace(instance, paths.root / "workspace.yaml") as context:
                ui_run = submit(instance, context, [dg.AssetKey("scores")])

            def refused():
                runs = [r.dagster_run for r in instance.get_run_records() if r.dagster_run.run_id not in before]
                done = [r for r in runs if r.is_finished]
                return done if len(done) >= 2 and len(done) == len(runs) else None

            for run in wait_for(refused, START_TIMEOUT, f"the sensor's run and the UI's run refused\n{log_tail(log)}"):
                assert run.status == dg.DagsterRunStatus.FAILURE, run.job_name
                message = failure_message(instance, run.run_id)
                assert message.startswith(line) and "\n" not in message, message
                assert not instance.get_records_for_run(run.run_id, of_type=dg.DagsterEventType.STEP_START).records
            assert ui_run in {r.dagster_run.run_id for r in instance.get_run_records()}
    finally:
        stop(daemon)


def test_killed_corrupted_and_concurrent_runs_end_in_the_clean_digest(tmp_path):
    clean = project_copy(tmp_path, "clean")
    first = run_cli(clean)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    assert "Tables below: made by this command's 3 run(s)" in first.stdout
    reference = warehouse_digest(clean)
    assert reference["questions"][0] > 0 and reference["caption_responses"][0] > 0

    paths = project_copy(tmp_path, "probed")
    # killed while the annotation tables are materialized, then again inside the per-clip batch (a step of it done),
    # then run again: the dead runs are cleared by the next run
    proc = start_cli(paths)
    try:
        wait_for_line(proc, "materializing annotation tables")
        time.sleep(2)
    finally:
        kill(proc)
    proc = start_cli(paths)
    try:
        def batch_step_done():
            with project_instance(paths) as instance:
                for run in [r.dagster_run for r in instance.get_run_records(
                        filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED]))]:
                    if run.tags.get("dagster/asset_partition_range_start") and instance.get_records_for_run(
                            run.run_id, of_type=dg.DagsterEventType.STEP_SUCCESS).records:
                        return run.run_id
        wait_for(batch_step_done, 600, "a per-clip step done")
    finally:
        kill(proc)
    again = run_cli(paths)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert "marked run " in again.stdout and "is gone" in again.stdout
    assert warehouse_digest(paths) == reference

    # killed inside the cross-clip tables
    proc = start_cli(paths)
    try:
        wait_for_line(proc, "materializing cross-clip tables")
        time.sleep(3)
    finally:
        kill(proc)
    assert run_cli(paths).returncode == 0
    assert warehouse_digest(paths) == reference

    # a truncated clip file, a garbled consolidated copy, a deleted warehouse
    clip_file = paths.assets / "questions" / f"{CLIPS[0]}.parquet"
    clip_file.write_bytes(clip_file.read_bytes()[: clip_file.stat().st_size // 2])
    copies = sorted((paths.assets / ".all-clips").glob("*.parquet"))
    assert copies
    copies[0].write_bytes(b"not parquet" * 100)
    paths.warehouse.unlink()
    assert run_cli(paths).returncode == 0
    assert warehouse_digest(paths) == reference

    # two runs at once
    both = [start_cli(paths), start_cli(paths)]
    outputs = [proc.communicate(timeout=900)[0] for proc in both]
    assert [proc.returncode for proc in both] == [0, 0], "\n".join(o[-2000:] for o in outputs)
    assert warehouse_digest(paths) == reference

    # a clip whose video has no annotations: refused (exit 2, one line, nothing written); kept when marked
    # deliberate; then the row removed again: the run retires the clip, says so, and the digest is the clean one
    manifest = paths.manifest.read_text()
    paths.manifest.write_text(manifest + UNKNOWN_VIDEO + "\n")
    refused = run_cli(paths)
    assert refused.returncode == 2 and "video P99_99 has no rows" in refused.stderr, refused.stderr
    assert warehouse_digest(paths) == reference
    lines = manifest.splitlines()
    paths.manifest.write_text("\n".join([lines[0] + ",deliberate", *lines[1:], UNKNOWN_VIDEO + ",yes"]) + "\n")
    kept = run_cli(paths)
    assert kept.returncode == 0, kept.stdout[-3000:] + kept.stderr[-3000:]
    assert "kept (marked deliberate): video P99_99 has no rows" in kept.stdout
    unknown_clip = "epic_sounds__P99_99__0-30"
    assert (paths.assets / "questions" / f"{unknown_clip}.parquet").exists()
    assert warehouse_digest(paths) != reference
    paths.manifest.write_text(manifest)
    removed = run_cli(paths)
    assert removed.returncode == 0, removed.stdout[-3000:] + removed.stderr[-3000:]
    assert f"retired 1 clips no longer in {paths.manifest}: {unknown_clip}" in removed.stdout
    assert not list(paths.assets.glob(f"*/{unknown_clip}.parquet"))
    assert (paths.assets / "questions" / "retired" / f"{unknown_clip}.parquet").exists()
    assert warehouse_digest(paths) == reference

    # a configuration error: refused before any step (exit 2, one line), no table printed, the warehouse untouched
    (paths.root / "epic-levels.toml").write_text('[data]\nanotations = "data/annotations"\n')
    refused = run_cli(paths)
    assert refused.returncode == 2 and refused.stdout == ""
    assert [line for line in refused.stderr.splitlines() if line.startswith("error: ")] == [
        f"error: {paths.root / 'epic-levels.toml'}: [data].anotations: unknown key (known: annotations, media)"]
    assert warehouse_digest(paths) == reference
    (paths.root / "epic-levels.toml").unlink()

    # a step that fails: what failed and where, no table; the last good tables stay and the next run is clean
    questions = paths.assets / "questions"
    shutil.rmtree(questions)
    questions.write_text("a file where the questions' folder should be")
    failed = run_cli(paths)
    assert failed.returncode == 1
    assert "Failed:" in failed.stderr and "run " in failed.stderr and "http://127.0.0.1:3000/runs/" in failed.stderr
    assert "Question bank" not in failed.stdout and "Main score table" not in failed.stdout
    questions.unlink()
    assert run_cli(paths).returncode == 0
    assert warehouse_digest(paths) == reference
