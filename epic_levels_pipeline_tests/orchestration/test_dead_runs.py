"""Runs that never lie, in the instance: a run whose process is gone is marked failed (``orchestration/dead_runs.py``),
and a run the UI or the daemon starts passes the pre-flight first or fails with its one line as the run's message
(``orchestration/launcher.py``). The processes here are real (a child killed with SIGKILL); the daemon's side,
two killed ``epic-levels run``s and the sensor's next run, is ``test_runs_never_lie.py`` (end to end)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import dagster as dg
import psutil
import pytest

from epic_levels_pipeline.orchestration.dead_runs import (HOST_TAG, PID_TAG, STARTED_TAG, clear_dead_runs,
                                                          process_gone, process_tags, run_process, this_host)

LAUNCHER = {"run_launcher": {"module": "epic_levels_pipeline.orchestration.launcher", "class": "ProjectRunLauncher"}}


@dg.op
def wait_a_little() -> None:
    pass


@dg.job
def small_job():
    wait_a_little()


@pytest.fixture
def killed_process() -> dict[str, str]:
    """The tags of a process that ran and was killed with SIGKILL (and reaped): its pid is free."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    tags = {HOST_TAG: this_host(), PID_TAG: str(child.pid), STARTED_TAG: f"{psutil.Process(child.pid).create_time():.3f}"}
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    return tags


def started_run(instance, tags) -> dg.DagsterRun:
    return instance.create_run_for_job(small_job, status=dg.DagsterRunStatus.STARTED, tags=tags)


def failure_message(instance, run_id) -> str:
    records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.RUN_FAILURE).records
    assert len(records) == 1
    return records[0].event_log_entry.dagster_event.message


def test_a_run_of_this_process_is_alive(instance):
    run = started_run(instance, process_tags())
    assert run_process(instance, run).pid == os.getpid()
    assert process_gone(instance, run) is None


def test_a_killed_process_is_gone(instance, killed_process):
    run = started_run(instance, killed_process)
    assert process_gone(instance, run) == f"its process {killed_process[PID_TAG]} on {this_host()} is gone"


def test_a_pid_taken_by_a_later_process_is_not_the_runs(instance):
    """After a restart the pid may belong to another process: its start time tells them apart."""
    tags = {**process_tags(), STARTED_TAG: "1000.000"}
    assert "the pid now belongs to a process started later" in process_gone(instance, started_run(instance, tags))


def test_a_run_that_cannot_be_told_is_left_alone(instance, killed_process):
    assert process_gone(instance, started_run(instance, {**killed_process, HOST_TAG: "another-machine"})) is None
    assert process_gone(instance, started_run(instance, {})) is None  # no host: not started by this project


def test_the_pid_of_a_run_launched_elsewhere_comes_from_its_first_engine_event(instance):
    """A run the daemon launched carries only the host tag; its run worker's pid is in its engine events."""
    result = small_job.execute_in_process(instance=instance, tags={HOST_TAG: this_host()})
    found = run_process(instance, instance.get_run_by_id(result.run_id))
    assert found.pid == os.getpid() and found.started is None and found.seen is not None


def test_the_next_run_marks_dead_runs_failed_and_leaves_the_others(instance, killed_process):
    dead = started_run(instance, killed_process)
    alive = started_run(instance, process_tags())
    unknown = started_run(instance, {})
    cleared = clear_dead_runs(instance)
    assert cleared == [(dead.run_id, f"its process {killed_process[PID_TAG]} on {this_host()} is gone")]
    assert instance.get_run_by_id(dead.run_id).status == dg.DagsterRunStatus.FAILURE
    assert failure_message(instance, dead.run_id) == (
        f"Marked failed: its process {killed_process[PID_TAG]} on {this_host()} is gone (killed, or the machine "
        "restarted); the run no longer holds a run slot.")
    for run in (alive, unknown):
        assert instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.STARTED
    assert clear_dead_runs(instance) == []


def test_the_launchers_health_check_tells_run_monitoring(killed_process):
    from dagster._core.launcher import WorkerStatus

    with dg.instance_for_test(overrides=LAUNCHER) as instance:
        launcher = instance.run_launcher
        assert launcher.supports_check_run_worker_health
        dead = launcher.check_run_worker_health(started_run(instance, killed_process))
        assert dead.status == WorkerStatus.FAILED and "is gone" in dead.msg
        assert launcher.check_run_worker_health(started_run(instance, process_tags())).status == WorkerStatus.RUNNING


def test_a_run_started_from_the_ui_fails_the_preflight_with_its_one_line(project):
    """The launcher refuses the run before any step: the run's failure message is the problem's line exactly
    (Dagster's RUN_FAILURE event, what the UI shows), nothing starts, nothing is materialized."""
    (project.root / "epic-levels.toml").write_text('[data]\nanotations = "data/annotations"\n')
    with dg.instance_for_test(overrides=LAUNCHER) as instance:
        run = instance.create_run_for_job(small_job)
        instance.launch_run(run.run_id, workspace=None)  # the daemon's or the UI's call; no code server is needed
        assert instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.FAILURE
        assert failure_message(instance, run.run_id) == (
            f"{project.root / 'epic-levels.toml'}: [data].anotations: unknown key (known: annotations, media)")
        types = {e.dagster_event.event_type for e in instance.all_logs(run.run_id) if e.dagster_event}
        assert types == {dg.DagsterEventType.RUN_STARTING, dg.DagsterEventType.RUN_FAILURE}
