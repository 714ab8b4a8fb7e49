"""A real local cluster on 127.0.0.1 for the distributed profile: redis-server, a PostgreSQL cluster in a
temporary directory, N Celery workers (``dagster-celery worker start``) and the Dagster daemon, all on the
``deploy/distributed/`` profile. Every process is started here and stopped by its PID (its process group).

``LocalCluster.unavailable()`` says why the cluster cannot start on this machine (None when it can).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROFILE = REPO / "deploy" / "distributed"
PG_BIN = Path("/usr/lib/postgresql/15/bin")
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pg_user() -> str | None:
    """PostgreSQL refuses to run as root: run it as ``postgres`` then (None when there is no such user)."""
    if os.geteuid() != 0:
        return ""
    import pwd

    try:
        pwd.getpwnam("postgres")
        return "postgres"
    except KeyError:
        return None


class LocalCluster:
    def __init__(self, project_root: Path, workers: int = 2, model_call_slots: int = 4, automation: bool = False):
        self.project_root = Path(project_root)
        self.n_workers = workers
        self.model_call_slots = model_call_slots
        # the sensors (and the automation sensor) are stopped unless asked for: the runs are the caller's
        self.automation = automation
        self.tmp = Path(tempfile.mkdtemp(prefix="epic-levels-cluster-"))
        self.procs: dict[str, subprocess.Popen] = {}
        self.env: dict[str, str] = {}
        self._saved_env: dict[str, str | None] = {}

    @staticmethod
    def unavailable() -> str | None:
        if not (shutil.which("redis-server") and shutil.which("redis-cli")):
            return "redis-server is not installed (Debian: apt-get install redis-server; .ci/run does this)"
        if not (PG_BIN / "postgres").exists():
            return f"PostgreSQL 15 is not installed ({PG_BIN}/postgres missing)"
        if _pg_user() is None:
            return "running as root with no 'postgres' user to run PostgreSQL as"
        return None

    # --- processes -------------------------------------------------------------------------------------------

    def _start(self, name: str, cmd: list[str], user: str = "", cwd: Path | None = None) -> subprocess.Popen:
        log = open(self.tmp / f"{name}.log", "wb")
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=cwd or REPO, env={**os.environ, **self.env},
                                start_new_session=True, user=user or None)
        self.procs[name] = proc
        return proc

    def log(self, name: str) -> str:
        path = self.tmp / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def _wait(self, what: str, ready, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return
            time.sleep(0.3)
        raise RuntimeError(f"{what} did not come up within {timeout:.0f} s")

    def start(self) -> "LocalCluster":
        redis_port, pg_port = free_port(), free_port()
        self._start("redis", ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                              "--appendonly", "no", "--dir", str(self.tmp)])
        self._wait("redis-server", lambda: _ready(["redis-cli", "-h", "127.0.0.1", "-p", str(redis_port), "ping"]))

        user = _pg_user() or ""
        pgdata = self.tmp / "pg"
        pgdata.mkdir()
        if user:
            import pwd

            entry = pwd.getpwnam(user)
            os.chmod(self.tmp, 0o755)
            os.chown(pgdata, entry.pw_uid, entry.pw_gid)
        subprocess.run([str(PG_BIN / "initdb"), "-D", str(pgdata), "-U", "postgres", "--auth=trust", "-E", "UTF8"],
                       check=True, capture_output=True, user=user or None, cwd=self.tmp)
        self._start("postgres", [str(PG_BIN / "postgres"), "-D", str(pgdata), "-p", str(pg_port), "-h", "127.0.0.1",
                                 "-k", str(pgdata), "-c", "fsync=off", "-c", "max_connections=200"],
                    user=user, cwd=self.tmp)
        url = f"postgresql+psycopg2://postgres@127.0.0.1:{pg_port}/postgres"
        self._wait("PostgreSQL", lambda: _ready([str(PG_BIN / "pg_isready"), "-h", "127.0.0.1", "-p", str(pg_port)]))

        home = self.tmp / "dagster_home"
        home.mkdir()
        shutil.copy(PROFILE / "dagster.yaml", home / "dagster.yaml")
        self.env = {"DAGSTER_HOME": str(home), "DAGSTER_PG_URL": url,
                    "DAGSTER_CELERY_BROKER": f"redis://127.0.0.1:{redis_port}/0",
                    "DAGSTER_CELERY_BACKEND": f"redis://127.0.0.1:{redis_port}/1",
                    "EPIC_LEVELS_HOME": str(self.project_root),
                    "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
        for i in range(1, self.n_workers + 1):
            self.start_worker(i)
        if not self.automation:
            self.stop_sensors()
        self._start("daemon", [str(BIN / "dagster-daemon"), "run", "-w", str(REPO / "workspace.yaml")])
        return self

    def worker_name(self, i: int) -> str:
        return f"w{i}@{socket.gethostname()}"

    def start_worker(self, i: int) -> None:
        self._start(f"worker{i}", [str(BIN / "dagster-celery"), "worker", "start", "-A", "dagster_celery.app",
                                   "-y", str(PROFILE / "celery.yaml"), "-n", f"w{i}", "-l", "WARNING",
                                   "--", "--concurrency", "1"])

    def instance(self):
        """The Dagster instance on the profile (Postgres storage, the Celery launcher), pools set. The profile
        reads its URLs from the environment: this process's environment gains them until ``stop``."""
        import dagster as dg

        for key, value in self.env.items():
            self._saved_env.setdefault(key, os.environ.get(key))
            os.environ[key] = value

        instance = dg.DagsterInstance.from_config(self.env["DAGSTER_HOME"])
        instance.event_log_storage.set_concurrency_slots("warehouse_writer", 1)
        instance.event_log_storage.set_concurrency_slots("model_calls", self.model_call_slots)
        return instance

    def stop_sensors(self) -> None:
        """Record every sensor of the code location as stopped, so the daemon launches only what is submitted."""
        from epic_levels_pipeline.orchestration.distributed import workspace

        instance = self.instance()
        with workspace(instance, REPO / "workspace.yaml") as context:
            for location in context.code_locations:
                for repository in location.get_repositories().values():
                    for sensor in repository.get_sensors():
                        instance.stop_sensor(sensor.get_remote_origin_id(), sensor.selector_id, sensor)

    def wait_for_workers(self, instance, timeout: float = 90.0) -> None:
        app = instance.run_launcher.celery
        names = {self.worker_name(i) for i in range(1, self.n_workers + 1)}
        self._wait("the Celery workers",
                   lambda: names <= {k for r in (app.control.ping(timeout=1.0) or []) for k in r}, timeout)

    def kill_worker(self, i: int) -> None:
        """SIGKILL the worker and the run process it forked (its process group), as a lost machine would."""
        proc = self.procs[f"worker{i}"]
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)

    def stop(self) -> None:
        for name in sorted(self.procs, key=lambda n: (n in ("redis", "postgres"), n)):  # the stores go last
            proc = self.procs[name]
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGINT if name == "postgres" else signal.SIGTERM)
                    proc.wait(15)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    _quiet(lambda: os.killpg(proc.pid, signal.SIGKILL))
                    _quiet(lambda: proc.wait(5))
        self.procs.clear()
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc):
        self.stop()


def _ready(cmd: list[str]) -> bool:
    return subprocess.run(cmd, capture_output=True).returncode == 0


def _quiet(fn):
    try:
        return fn() or True
    except Exception:  # noqa: BLE001 - "not ready yet"
        return False
