"""First start, as a user meets it: ``epic-levels run`` materializes everything, then the Dagster daemon
starts (what ``dagster dev`` runs beside the webserver) and must launch **nothing** for unchanged
annotations; a one-row edit then re-runs exactly that clip's partitions, and the cross-clip tables follow.

The daemon runs on a temporary copy of the project (``DAGSTER_HOME`` = ``EPIC_LEVELS_HOME`` = that copy,
its own ``dagster.yaml``), so the repository's ``data/`` is never touched. Its process group is always
ended. The wall time from the edit to fresh ``scores`` is printed (``-s`` shows it); it is a figure for
the notes, not an assertion beyond a generous timeout.
"""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest

from epic_levels_pipeline.orchestration.local import project_instance
from epic_levels_pipeline.settings import Paths

from .conftest import SEED_CLIPS, make_project


ROOT = Path(__file__).resolve().parents[1]
CLIPS = SEED_CLIPS + ["hd_epic__P09-20240623-120359__1440-1470"]
EDITED = "epic_sounds__P09_08__45-75"
SENSORS = ("annotation_change_sensor", "epic_levels_automation")
PER_CLIP = ("clip_annotations", "questions", "distractor_pools", "items", "responses", "verdicts")
CROSS_CLIP = ("scores", "paired_comparisons", "over_marking", "shortcut_audit")
QUIET_TIMEOUT = 240     # two sensor intervals (30 s each) plus the daemon's start on a loaded machine
CHANGE_TIMEOUT = 420


def executable(name: str) -> str:
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else (shutil.which(name) or name)


def environment(root: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "EPIC_LEVELS_MODELS") and not k.startswith("DAGSTER_")}
    env.update(DAGSTER_HOME=str(root), EPIC_LEVELS_HOME=str(root), PYTHONUNBUFFERED="1")
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


def sensor_ticks(instance: dg.DagsterInstance) -> dict[str, int]:
    counts = {}
    for state in instance.all_instigator_state():
        if state.instigator_name in SENSORS:
            ticks = instance.get_ticks(state.instigator_origin_id, state.selector_id, limit=20)
            counts[state.instigator_name] = len([t for t in ticks if t.status.value in ("SUCCESS", "SKIPPED")])
    return counts


def materialized_partitions(instance: dg.DagsterInstance, asset: str, after: float) -> list[str | None]:
    result = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), after_timestamp=after),
                                             limit=1000)
    return [r.partition_key for r in result.records]


def unfinished(instance: dg.DagsterInstance) -> int:
    statuses = [dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING,
                dg.DagsterRunStatus.STARTED]
    return len(instance.get_run_records(filters=dg.RunsFilter(statuses=statuses)))


def log_tail(path: Path, n: int = 40) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-n:]) if path.exists() else "(no log)"


def test_quiet_first_start_then_one_row_edit(tmp_path):
    paths = make_project(tmp_path / "project", CLIPS)
    root = paths.root
    for name in ("workspace.yaml", "dagster.yaml"):
        shutil.copy2(ROOT / name, root / name)
    env = environment(root)

    done = subprocess.run([executable("epic-levels"), "run"], cwd=root, env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Leaderboard" in done.stdout and "report.html" in done.stdout
    assert "Warning" not in done.stderr, done.stderr[-3000:]  # no library warning that says nothing to a user

    with project_instance(Paths(root)) as instance:
        runs_after_cli = len(instance.get_run_records())
    log = tmp_path / "daemon.log"
    with open(log, "w") as out:
        daemon = subprocess.Popen([executable("dagster-daemon"), "run", "-w", "workspace.yaml"], cwd=root, env=env,
                                  stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        with project_instance(Paths(root)) as instance:
            # 1. quiet: both sensors tick at least twice and nothing is launched
            deadline = time.monotonic() + QUIET_TIMEOUT
            while time.monotonic() < deadline:
                assert daemon.poll() is None, f"the daemon exited:\n{log_tail(log)}"
                ticks = sensor_ticks(instance)
                if all(ticks.get(name, 0) >= 2 for name in SENSORS):
                    break
                time.sleep(2)
            else:
                pytest.fail(f"sensors did not tick twice within {QUIET_TIMEOUT} s: {ticks}\n{log_tail(log)}")
            launched = len(instance.get_run_records()) - runs_after_cli
            assert launched == 0, [(r.dagster_run.job_name, r.dagster_run.tags.get("dagster/partition"))
                                   for r in instance.get_run_records()[:launched]]

            # 2. one row of one clip changes (sound P09_08_13 "tap running" starts 38 ms later)
            source = paths.annotations / "epic-sounds" / "EPIC_Sounds_validation.csv"
            text = source.read_text()
            assert "P09_08_13,P09,P09_08,00:00:47.662" in text
            edited_at = time.time()
            started = time.monotonic()
            source.write_text(text.replace("P09_08_13,P09,P09_08,00:00:47.662", "P09_08_13,P09,P09_08,00:00:47.700"))
            deadline = started + CHANGE_TIMEOUT
            fresh = None
            while time.monotonic() < deadline:
                assert daemon.poll() is None, f"the daemon exited:\n{log_tail(log)}"
                if all(materialized_partitions(instance, a, edited_at) for a in CROSS_CLIP) and not unfinished(instance):
                    fresh = time.monotonic() - started
                    break
                time.sleep(1)
            assert fresh is not None, f"scores not fresh within {CHANGE_TIMEOUT} s\n{log_tail(log)}"
            print(f"\none-row edit -> fresh cross-clip tables: {fresh:.1f} s (sensor intervals included)")

            # exactly the edited clip's partitions re-ran; the other clips were not touched
            for asset in PER_CLIP:
                assert materialized_partitions(instance, asset, edited_at) == [EDITED], asset
            # the clip's video cut depends on its window only, not on its rows
            assert materialized_partitions(instance, "clip_media", edited_at) in ([], [EDITED])
            failed = instance.get_run_records(filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.FAILURE]))
            assert not failed, [r.dagster_run.job_name for r in failed]
    finally:
        stop(daemon)
