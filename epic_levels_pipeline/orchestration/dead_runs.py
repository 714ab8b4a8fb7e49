"""Runs whose process is gone, marked failed so they stop holding a run slot (Dagster layer). A run's process is read
from its tags (host, pid, process start time) or its first engine event; a run whose process cannot be told is
left alone (docs/design/orchestration.md)."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass

import dagster as dg
import psutil

HOST_TAG = "epic_levels/host"
PID_TAG = "epic_levels/pid"
STARTED_TAG = "epic_levels/process_started"
#: A run with a process that may still run (the queue counts these as holding a slot).
LIVE_STATUSES = [dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]
SLACK_S = 1.0  # process start times are read to a clock tick; event timestamps are taken after the start


@dataclass(frozen=True)
class RunProcess:
    """The process executing a run: its host and pid, and either its start time (``started``) or a moment it
    was known to be running (``seen``, the timestamp of its first engine event)."""

    host: str
    pid: int
    started: float | None = None
    seen: float | None = None


def this_host() -> str:
    return socket.gethostname()


def process_tags() -> dict[str, str]:
    """The tags naming this process as the one that executes a run (host, pid, start time)."""
    return {HOST_TAG: this_host(), PID_TAG: str(os.getpid()),
            STARTED_TAG: f"{psutil.Process().create_time():.3f}"}


def run_process(instance: dg.DagsterInstance, run: dg.DagsterRun) -> RunProcess | None:
    """The process executing ``run``: from its tags, else its first engine event naming a pid (None when
    neither says, or no host is tagged)."""
    tags = run.tags
    host = tags.get(HOST_TAG)
    if not host:
        return None
    if tags.get(PID_TAG):
        started = tags.get(STARTED_TAG)
        return RunProcess(host, int(tags[PID_TAG]), started=float(started) if started else None)
    records = instance.get_records_for_run(run.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT, limit=20).records
    for record in records:
        event = record.event_log_entry.dagster_event
        data = event.engine_event_data if event is not None else None
        pid = getattr(data.metadata.get("pid"), "value", None) if data is not None else None
        if pid and str(pid).isdigit():
            return RunProcess(host, int(pid), seen=record.event_log_entry.timestamp)
    return None


def process_gone(instance: dg.DagsterInstance, run: dg.DagsterRun) -> str | None:
    """Why ``run``'s process is known to be gone (a sentence), or None when it runs or cannot be told."""
    proc = run_process(instance, run)
    if proc is None or proc.host != this_host():
        return None
    where = f"process {proc.pid} on {proc.host}"
    try:
        found = psutil.Process(proc.pid)
        status, created = found.status(), found.create_time()
    except psutil.NoSuchProcess:
        return f"its {where} is gone"
    except psutil.AccessDenied:  # another user's process with that pid: it exists
        return None
    if status == psutil.STATUS_ZOMBIE:
        return f"its {where} has exited"
    if proc.started is not None and abs(created - proc.started) > SLACK_S:
        return f"its {where} is gone (the pid now belongs to a process started later)"
    if proc.seen is not None and created > proc.seen + SLACK_S:
        return f"its {where} is gone (the pid now belongs to a process started after the run)"
    return None


def failure_message(reason: str) -> str:
    return f"Marked failed: {reason} (killed, or the machine restarted); the run no longer holds a run slot."


def clear_dead_runs(instance: dg.DagsterInstance) -> list[tuple[str, str]]:
    """Report every unfinished run whose process is gone as failed; the (run id, reason) of each."""
    cleared = []
    for record in instance.get_run_records(filters=dg.RunsFilter(statuses=LIVE_STATUSES)):
        run = record.dagster_run
        reason = process_gone(instance, run)
        if reason is None:
            continue
        current = instance.get_run_by_id(run.run_id)
        if current is None or current.is_finished:
            continue
        instance.report_run_failed(current, failure_message(reason))
        cleared.append((run.run_id, reason))
    return cleared


__all__ = ["HOST_TAG", "PID_TAG", "STARTED_TAG", "RunProcess", "clear_dead_runs", "failure_message", "process_gone",
           "process_tags", "run_process", "this_host"]
