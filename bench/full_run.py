"""The staged windows through ``epic-levels run`` (offline responders): wall time, runs, peak memory per process.

What it does (say so when quoting its figures):

1. A scratch project (``--project DIR``, created if missing: this repository's ``dagster.yaml`` and an empty
   ``data/``), never this repository's ``data/``.
2. ``epic-levels windows --require all [--limit N] --annotations ANNOTATIONS`` writes its manifest (the
   staged files, ``../shared/data``, by default: 5,799 windows with no limit).
3. ``epic-levels run --annotations ANNOTATIONS`` in that project, as a child process, while a sampler reads
   ``/proc/<pid>/status`` (``VmHWM``, the kernel's own peak resident set, and ``VmRSS``) of the command and
   of every process below it every ``--interval`` seconds. The command's own peak is also taken from
   ``wait4``'s ``ru_maxrss`` when it exits (exact, not sampled).
4. Prints the command's last lines (clips, runs, failed), the wall time, the peak resident memory per
   process, and the rows of the main warehouse tables (questions, items, responses, verdicts).

    python bench/full_run.py --project /tmp/full --limit 300
    python bench/full_run.py --project /tmp/full             # every staged window

Progress of the run goes to ``<project>/run.log``; every 10 s the tree's resident memory and the log's last line
go to ``<project>/memory.tsv``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAGED = ROOT.parent / "shared" / "data"  # elsewhere: --annotations DIR
GIB = 1024 ** 3


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "epic_levels_pipeline.cli", *args]


def child_env(project: Path) -> dict:
    env = dict(os.environ, EPIC_LEVELS_HOME=str(project), PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def status(pid: int) -> dict[str, int]:
    """``VmHWM`` / ``VmRSS`` of a process in bytes (empty once it has gone)."""
    out = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                out[key] = int(value.split()[0]) * 1024
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return out


def children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            pass
    return out


def tree(pid: int) -> list[int]:
    todo, seen = [pid], []
    while todo:
        p = todo.pop()
        seen.append(p)
        todo += children(p)
    return seen


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except (FileNotFoundError, ProcessLookupError):
        return "?"


class Sampler(threading.Thread):
    """Peak ``VmHWM`` of every process of a tree, sampled."""

    def __init__(self, root: int, interval: float, log: Path, kill_above: float):
        super().__init__(daemon=True)
        self.root, self.interval, self.log, self.kill_above = root, interval, log, kill_above
        self.peak: dict[int, int] = {}
        self.names: dict[int, str] = {}
        self.phase: dict[int, str] = {}  # the run log's last line when each process reached its peak
        self.killed = ""
        self.total_rss = 0
        self.stop = threading.Event()

    def run(self):
        started, next_line = time.monotonic(), 0.0
        timeline = self.log.with_name("memory.tsv").open("w")
        while not self.stop.is_set():
            now = time.monotonic() - started
            if now >= next_line:  # a line every 10 s: seconds, resident GiB of the tree, the run log's last line
                timeline.write(f"{now:.0f}\t{sum(status(p).get('VmRSS', 0) for p in tree(self.root)) / GIB:.2f}"
                               f"\t{last_line(self.log)}\n")
                timeline.flush()
                next_line = now + 10
            rss = 0
            for pid in tree(self.root):
                s = status(pid)
                if not s:
                    continue
                if pid not in self.names:
                    self.names[pid] = cmdline(pid)
                if s.get("VmHWM", 0) > self.peak.get(pid, 0) + 64 * 1024 ** 2 or pid not in self.peak:
                    self.phase[pid] = last_line(self.log)
                self.peak[pid] = max(self.peak.get(pid, 0), s.get("VmHWM", 0))
                rss += s.get("VmRSS", 0)
                if self.kill_above and s.get("VmRSS", 0) > self.kill_above * GIB and not self.killed:
                    self.killed = f"pid {pid} killed at {s['VmRSS'] / GIB:.2f} GiB resident ({last_line(self.log)})"
                    os.kill(pid, 9)
            self.total_rss = max(self.total_rss, rss)
            self.stop.wait(self.interval)


def last_line(path: Path) -> str:
    try:
        with path.open("rb") as f:
            f.seek(max(0, f.seek(0, 2) - 4096))
            lines = [x for x in f.read().decode(errors="replace").splitlines() if x.strip()]
    except FileNotFoundError:
        return ""
    return lines[-1].strip()[:100] if lines else ""


def table_rows(project: Path) -> dict[str, int]:
    import pyarrow.dataset as ds

    out = {}
    for name in ("questions", "items", "responses", "verdicts", "scores"):
        for folder in (project / "data" / "assets" / name, project / "data" / "warehouse" / name):
            if folder.exists():
                out[name] = ds.dataset(str(folder), format="parquet").count_rows()
                break
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--project", type=Path, required=True, help="scratch project folder (created if missing)")
    ap.add_argument("--annotations", type=Path, default=STAGED)
    ap.add_argument("--limit", type=int, help="at most N windows (spread evenly); default every window")
    ap.add_argument("--interval", type=float, default=0.5, help="seconds between memory samples")
    ap.add_argument("--kill-above", type=float, default=8.0,
                    help="GiB: kill a process whose resident memory passes this (a guard for a shared machine; 0: none)")
    ap.add_argument("--fresh", action="store_true", help="delete the scratch project first")
    args = ap.parse_args()
    project = args.project.resolve()
    if args.fresh and project.exists():
        shutil.rmtree(project)
    (project / "data").mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "dagster.yaml", project / "dagster.yaml")
    env = child_env(project)
    manifest = project / "data" / "clips.csv"
    if not manifest.exists():
        windows = ["windows", "--require", "all", "--annotations", str(args.annotations), "--manifest", str(manifest)]
        if args.limit:
            windows += ["--limit", str(args.limit)]
        subprocess.run(command(*windows), env=env, check=True, cwd=project)
    clips = sum(1 for line in manifest.read_text().splitlines()[1:] if line and not line.startswith("#"))
    print(f"project {project}: {clips} clips in the manifest", flush=True)

    log = project / "run.log"
    started = time.monotonic()
    with log.open("w") as out:
        proc = subprocess.Popen(command("run", "--annotations", str(args.annotations)), env=env, cwd=project,
                                stdout=out, stderr=subprocess.STDOUT)
        sampler = Sampler(proc.pid, args.interval, log, args.kill_above)
        sampler.start()
        _, code, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(code)
    wall = time.monotonic() - started
    sampler.stop.set()
    sampler.join()
    lines = log.read_text().splitlines()
    print("  " + "\n  ".join([x for x in lines if " runs, " in x and "failed:" in x] or lines[-3:]))
    if sampler.killed:
        print(f"GUARD: {sampler.killed}")
    print(f"exit {proc.returncode}; wall {wall:.1f} s ({wall / 60:.1f} min); load {os.getloadavg()[0]:.1f}")
    print(f"peak resident memory of `epic-levels run` (wait4 ru_maxrss): {usage.ru_maxrss / 1024 ** 2:.2f} GiB")
    print(f"peak resident memory per process (VmHWM, sampled every {args.interval} s):")
    for pid, peak in sorted(sampler.peak.items(), key=lambda kv: -kv[1]):
        print(f"  {peak / GIB:6.2f} GiB  pid {pid}  {sampler.names[pid][:100]}")
        if peak > 0.1 * GIB:
            print(f"            reached while: {sampler.phase.get(pid, '')}")
    print(f"largest sum of resident memory over the tree at one sample: {sampler.total_rss / GIB:.2f} GiB")
    rows = table_rows(project)
    print("rows: " + ", ".join(f"{k} {v:,}" for k, v in rows.items()))
    worst = max([usage.ru_maxrss * 1024, *sampler.peak.values()])
    print(f"every process <= 4 GiB: {'yes' if worst <= 4 * GIB else 'NO'} (largest {worst / GIB:.2f} GiB)")


if __name__ == "__main__":
    main()
