"""The Celery launcher's worker health check, on an in-memory broker with the task states and pings faked (the
real cluster runs in ``defs/test_cluster.py``)."""

from __future__ import annotations

from types import SimpleNamespace

import dagster as dg
import pytest
from dagster_celery.tags import DAGSTER_CELERY_TASK_ID_TAG

from epic_levels_pipeline.orchestration.celery_launcher import CeleryWorkerRunLauncher

RUN = dg.DagsterRun(job_name="__ASSET_JOB", run_id="run-1", tags={DAGSTER_CELERY_TASK_ID_TAG: "task-1"})


@pytest.fixture
def launcher(monkeypatch):
    launcher = CeleryWorkerRunLauncher(default_queue="dagster", broker="memory://", backend="cache+memory://")
    state = {"state": "PENDING", "info": None, "alive": set()}

    def result(task_id):
        return SimpleNamespace(state=state["state"], info=state["info"], worker=None, result=None,
                               successful=lambda: state["state"] == "SUCCESS", failed=lambda: False)

    def ping(destination=None, timeout=None):
        names = state["alive"] if destination is None else state["alive"] & set(destination)
        return [{name: {"ok": "pong"}} for name in names]

    monkeypatch.setattr(launcher.celery, "AsyncResult", result)
    monkeypatch.setattr(launcher.celery.control, "ping", ping)
    launcher.state = state
    return launcher


def test_the_launchers_app_tracks_started_tasks_and_their_workers(launcher):
    assert launcher.celery.conf.task_track_started and launcher.celery.conf.result_extended


def test_a_queued_task_is_running_while_a_worker_lives(launcher):
    launcher.state["alive"] = {"worker1@host"}
    health = launcher.check_run_worker_health(RUN)
    assert health.status.name == "RUNNING" and "queued" in health.msg
    launcher.state["alive"] = set()
    assert launcher.check_run_worker_health(RUN).status.name == "UNKNOWN"


def test_a_started_task_whose_worker_does_not_answer_has_failed(launcher):
    launcher.state.update(state="STARTED", info={"hostname": "worker1@host", "pid": 1})
    launcher.state["alive"] = {"worker1@host"}
    assert launcher.worker_of(RUN) == "worker1@host"
    assert launcher.check_run_worker_health(RUN).status.name == "RUNNING"
    launcher.state["alive"] = {"worker2@host"}
    health = launcher.check_run_worker_health(RUN)
    assert health.status.name == "FAILED" and "worker1@host" in health.msg
