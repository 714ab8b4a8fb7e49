"""A real local cluster on the ``deploy/distributed/`` profile: redis-server, PostgreSQL, two Celery workers and
the Dagster daemon on 127.0.0.1 (``fakes/cluster.py``; skips, saying why, where they cannot be started).

Two clips' runs (one clip per dataset) go through the queue: every run succeeds, both workers run some, and the
warehouse equals a single-process run's (same digest of questions, verdicts and scores). Then one worker is
SIGKILLed in the middle of a run (holding no other run's task in reserve): the daemon's run monitoring notices
(the launcher pings the worker holding the run), resumes the run on the other worker, and no response row is
lost or duplicated.
"""

from __future__ import annotations

import time

import dagster as dg
import pytest

from epic_levels_pipeline.orchestration.distributed import run_distributed, submit, wait, workspace
from epic_levels_pipeline.orchestration.local import asset_groups, load_definitions, run_pipeline
from epic_levels_pipeline.storage.views import query, table_digest

from ..conftest import SEED_CLIPS, make_project
from ..fakes.cluster import REPO, LocalCluster
from ..test_bank_digest import PARTS
from .conftest import QUIET


# two clips, one per dataset, keep the test near 3 minutes on 2 cores (each worker runs one run at a time)
CLIPS = [SEED_CLIPS[0], "hd_epic__P09-20240623-120359__1440-1470"]
RESPONSE_KEY = ["item_id", "condition", "responder", "model"]


def digests(warehouse) -> dict:
    return {"questions": table_digest(warehouse, "questions", PARTS["questions"]),
            "verdicts": table_digest(warehouse, "verdicts", PARTS["verdicts"]),
            "scores": table_digest(warehouse, "scores")}


def responses_by_key(warehouse):
    rows = query(warehouse, "SELECT * FROM responses")
    return rows, rows.groupby(RESPONSE_KEY).size()


def started_run_on(instance, run_ids, hostname):
    """A run of ``run_ids`` that ``hostname`` is executing and that has finished at least one step."""
    for run_id in run_ids:
        run = instance.get_run_by_id(run_id)
        if run.status != dg.DagsterRunStatus.STARTED or instance.run_launcher.worker_of(run) != hostname:
            continue
        if instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.STEP_SUCCESS).records:
            return run_id
    return None


@pytest.fixture
def cluster_project(tmp_path, monkeypatch):
    for name in ("EPIC_LEVELS_MODELS", "GEMINI_API_KEY", "GOOGLE_API_KEY", "EPIC_LEVELS_RESPONDERS"):
        monkeypatch.delenv(name, raising=False)
    return make_project(tmp_path / "cluster", CLIPS)


def test_runs_spread_over_two_workers_match_one_process_and_survive_a_killed_worker(cluster_project, tmp_path,
                                                                                    monkeypatch):
    if why := LocalCluster.unavailable():
        pytest.skip(why)
    # the single-process reference: the same clips through `epic-levels run`'s driver, in-process
    reference = make_project(tmp_path / "reference", CLIPS)
    monkeypatch.setenv("EPIC_LEVELS_HOME", str(reference.root))
    with dg.instance_for_test() as single:
        assert run_pipeline(reference, clip_keys=CLIPS, instance=single, run_config=QUIET, log=lambda *_: None).failed == []
    expected = digests(reference.warehouse)
    monkeypatch.setenv("EPIC_LEVELS_HOME", str(cluster_project.root))

    with LocalCluster(cluster_project.root, workers=2) as cluster:
        instance = cluster.instance()
        cluster.wait_for_workers(instance)
        report = run_distributed(instance, REPO / "workspace.yaml", cluster_project, CLIPS, run_config=QUIET,
                                 timeout_s=240, log=lambda *_: None)
        assert report.failed == [], cluster.log("daemon")[-3000:]
        runs = instance.get_runs()
        assert len(runs) == report.runs == 1 + len(CLIPS) + 1
        assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)
        workers = {instance.run_launcher.worker_of(r) for r in runs}
        assert workers == {cluster.worker_name(1), cluster.worker_name(2)}, workers
        # one writer: only the warehouse asset's run opened the DuckDB file, and its views equal the reference
        assert digests(cluster_project.warehouse) == expected
        before, counts = responses_by_key(cluster_project.warehouse)
        assert (counts == 1).all()

        # again, and SIGKILL worker 1 (with the run process it forked) in the middle of one of its runs
        _, partitioned, _ = asset_groups(load_definitions())
        with workspace(instance, REPO / "workspace.yaml") as context:
            run_ids = [submit(instance, context, partitioned, partition=k, run_config=QUIET) for k in CLIPS]
        deadline, victim = time.monotonic() + 90, None
        while victim is None and time.monotonic() < deadline:
            victim = started_run_on(instance, run_ids, cluster.worker_name(1))
            time.sleep(0.2)
        assert victim, "worker 1 ran none of the second round's runs"
        # a busy worker holds no other run's task in reserve (worker_disable_prefetch): a task reserved by the
        # worker about to die would leave its run STARTING for the broker's visibility timeout
        reserved = instance.run_launcher.celery.control.inspect(timeout=2.0).reserved() or {}
        assert not any(reserved.values()), reserved
        cluster.kill_worker(1)
        statuses = wait(instance, run_ids, timeout_s=150)
        assert set(statuses.values()) == {dg.DagsterRunStatus.SUCCESS}, "\n".join(
            f"{e.dagster_event.event_type_value if e.dagster_event else ''}: {(e.message or '')[:400]}"
            for r, status in statuses.items() if status != dg.DagsterRunStatus.SUCCESS for e in instance.all_logs(r))
        resumed = [e for e in instance.all_logs(victim, of_type=dg.DagsterEventType.ENGINE_EVENT)
                   if "Resuming run" in (e.message or "")]
        assert resumed and "does not answer a ping" in resumed[0].message
        assert instance.run_launcher.worker_of(instance.get_run_by_id(victim)) == cluster.worker_name(2)

        after, counts = responses_by_key(cluster_project.warehouse)
        assert (counts == 1).all(), "a response row is duplicated"
        assert len(after) == len(before) and set(counts.index) == set(responses_by_key(reference.warehouse)[1].index)
        assert digests(cluster_project.warehouse) == expected
