"""End to end: the real ``dagster dev`` server on a copy of the project, driven through its GraphQL API and
looked at in headless Chromium (Debian's ``chromium`` + ``chromedriver``; nothing is downloaded).

1. A temporary project root gets copies of ``data/annotations/``, ``data/clips.csv``, ``workspace.yaml`` and
   ``dagster.yaml``; ``DAGSTER_HOME`` and ``EPIC_LEVELS_HOME`` point at it, so the repository's ``data/``
   is never touched. The two sensors (on by default) are stopped with ``dagster sensor stop`` (both commands
   at once, on storage created beforehand) before the server starts: the daemon ticks before the webserver
   answers, and the test launches its own runs.
2. ``dagster dev`` is started on a free port of 127.0.0.1 and polled until the code location is loaded.
3. GraphQL: ``addDynamicPartition`` (clips / the seed clip), ``launchRun`` of the implicit asset job for the
   annotation tables, then for the clip's ``clip_annotations``, ``questions``, ``distractor_pools``; each
   run is polled with ``runOrError`` until SUCCESS (the queued-run coordinator needs the daemon).
4. Chromium: ``/asset-groups`` (global asset lineage; groups expanded with the UI's own Alt+E shortcut)
   must show every group expanded, and the catalogue ``/assets`` every asset by name; ``/assets/questions`` must show the materialization's metadata
   (``by_level_and_subtype`` with its subtypes, and ``sample_questions`` opened as markdown).

Screenshots go to ``tmp_path`` and are copied to ``/tmp/epic_levels_ui_*.png``. The server's process group
is always ended. The test skips only when no ``chromium`` binary is on PATH.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from epic_levels_pipeline.orchestration.local import project_instance
from epic_levels_pipeline.settings import Paths

from .conftest import start_chromium


ROOT = Path(__file__).resolve().parents[2]
CLIP = "epic_sounds__P09_08__45-75"
REPO = {"repositoryLocationName": "epic_levels_pipeline", "repositoryName": "__repository__"}
TABLES = ["sounds", "narrations", "activities", "recipe_steps", "object_tracks", "vocabulary", "videos", "entity_catalogue"]
PER_CLIP = ["clip_annotations", "questions", "distractor_pools"]
SENSORS = ["annotation_change_sensor", "epic_levels_automation"]
SERVER_TIMEOUT = 120
RUN_TIMEOUT = 180
UI_TIMEOUT = 60


# -- the server -----------------------------------------------------------------------------------------

def dagster_cli() -> str:
    beside = Path(sys.executable).parent / "dagster"
    return str(beside) if beside.exists() else (shutil.which("dagster") or "dagster")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_root(tmp: Path) -> Path:
    root = tmp / "project"
    shutil.copytree(ROOT / "data" / "annotations", root / "data" / "annotations")
    shutil.copy2(ROOT / "data" / "clips.csv", root / "data" / "clips.csv")
    for name in ("workspace.yaml", "dagster.yaml"):  # dagster.yaml's storage paths are relative to the cwd: root
        shutil.copy2(ROOT / name, root / name)
    # No ".nux" marker is written: dagster.yaml's `nux: enabled: false` must keep the "join the community"
    # dialog off the pages, or the clicks below would land on it.
    return root


def server_env(root: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "EPIC_LEVELS_MODELS") and not k.startswith("DAGSTER_")}
    env.update(DAGSTER_HOME=str(root), EPIC_LEVELS_HOME=str(root), PYTHONUNBUFFERED="1")
    return env


def _default_sigint():  # runs in the child: a SIGINT ignored by our parent must not stay ignored in dagster dev
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def stop_server(proc: subprocess.Popen) -> None:
    """Ctrl-C to ``dagster dev`` (it shuts its webserver and daemon down), then TERM, then KILL the group."""
    pgid = proc.pid  # start_new_session: the group's id is the leader's pid
    steps = [(lambda: proc.send_signal(signal.SIGINT), 30), (lambda: os.killpg(pgid, signal.SIGTERM), 10)]
    for send, wait in steps:
        if proc.poll() is None:
            try:
                send()
                proc.wait(timeout=wait)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                pass
    try:  # whatever is left in the group (code server, run workers), also when the leader already exited
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def log_tail(path: Path, n: int = 60) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


class Server:
    def __init__(self, base: str, log: Path, proc: subprocess.Popen):
        self.base, self.log, self.proc = base, log, proc

    def gql(self, query: str, variables: dict | None = None, timeout: float = 60) -> dict:
        body = json.dumps({"query": query, "variables": variables or {}}).encode()
        request = urllib.request.Request(self.base + "/graphql", data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            data = json.loads(response.read())
        assert not data.get("errors"), f"GraphQL errors: {data['errors']}"
        return data["data"]

    def wait_until_loaded(self) -> None:
        """``/server_info`` answers, then the code location's repository is listed by GraphQL."""
        deadline = time.monotonic() + SERVER_TIMEOUT
        last = None
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"dagster dev exited with {self.proc.returncode}:\n{log_tail(self.log)}"
            try:
                with urllib.request.urlopen(self.base + "/server_info", timeout=5) as response:
                    json.loads(response.read())
                repos = self.gql("{ repositoriesOrError { __typename ... on RepositoryConnection "
                                 "{ nodes { name location { name } } } } }")["repositoriesOrError"]
                names = {(n["location"]["name"], n["name"]) for n in repos.get("nodes", [])}
                if (REPO["repositoryLocationName"], REPO["repositoryName"]) in names:
                    return
                last = repos
            except (urllib.error.URLError, ConnectionError, TimeoutError, json.JSONDecodeError) as exc:
                last = exc
            time.sleep(0.5)
        raise AssertionError(f"server not ready in {SERVER_TIMEOUT}s (last: {last!r}):\n{log_tail(self.log)}")

    def add_partition(self, key: str) -> None:
        result = self.gql("""
            mutation($repo: RepositorySelector!, $name: String!, $key: String!) {
              addDynamicPartition(repositorySelector: $repo, partitionsDefName: $name, partitionKey: $key) {
                __typename
                ... on AddDynamicPartitionSuccess { partitionsDefName partitionKey }
                ... on Error { message }
              }
            }""", {"repo": REPO, "name": "clips", "key": key})["addDynamicPartition"]
        assert result["__typename"] == "AddDynamicPartitionSuccess", result

    def launch(self, assets: list[str], partition: str | None = None) -> str:
        params = {
            "selector": {**REPO, "jobName": "__ASSET_JOB", "assetSelection": [{"path": [a]} for a in assets]},
            "executionMetadata": {"tags": [{"key": "dagster/partition", "value": partition}] if partition else []},
        }
        result = self.gql("""
            mutation($params: ExecutionParams!) {
              launchRun(executionParams: $params) {
                __typename
                ... on LaunchRunSuccess { run { runId status } }
                ... on RunConfigValidationInvalid { errors { message } }
                ... on Error { message }
              }
            }""", {"params": params})["launchRun"]
        assert result["__typename"] == "LaunchRunSuccess", result
        return result["run"]["runId"]

    def wait_for_run(self, run_id: str) -> float:
        started = time.monotonic()
        status = None
        while time.monotonic() - started < RUN_TIMEOUT:
            run = self.gql("query($id: ID!) { runOrError(runId: $id) { __typename ... on Run { status } "
                           "... on Error { message } } }", {"id": run_id})["runOrError"]
            assert run["__typename"] == "Run", run
            status = run["status"]
            if status == "SUCCESS":
                return time.monotonic() - started
            if status in ("FAILURE", "CANCELED", "CANCELING"):
                raise AssertionError(f"run {run_id} ended {status}:\n{self.run_errors(run_id)}")
            time.sleep(1)
        raise AssertionError(f"run {run_id} still {status} after {RUN_TIMEOUT}s:\n{log_tail(self.log)}")

    def run_errors(self, run_id: str) -> str:
        logs = self.gql("""
            query($id: ID!) { logsForRun(runId: $id) { __typename
              ... on EventConnection { events { __typename ... on MessageEvent { message level } } } } }""",
                        {"id": run_id})["logsForRun"]
        lines = [e.get("message", "") for e in logs.get("events", []) if e.get("level") in ("ERROR", "CRITICAL")]
        return "\n".join(lines[-20:]) or log_tail(self.log)

    def latest_metadata(self, asset: str, partition: str) -> dict[str, str]:
        data = self.gql("""
            query($key: AssetKeyInput!, $partitions: [String!]) { assetOrError(assetKey: $key) { __typename
              ... on Asset { assetMaterializations(partitions: $partitions, limit: 1) {
                partition metadataEntries { label ... on MarkdownMetadataEntry { mdStr } } } } } }""",
                        {"key": {"path": [asset]}, "partitions": [partition]})["assetOrError"]
        events = data.get("assetMaterializations") or []
        assert events and events[0]["partition"] == partition, data
        return {e["label"]: e.get("mdStr") for e in events[0]["metadataEntries"]}


@pytest.fixture
def server(tmp_path):
    root = make_root(tmp_path)
    env = server_env(root)
    dagster = dagster_cli()
    # The instance's storage is created here first, so the two `dagster sensor stop` commands (each loads
    # the code location, ~10 s) can run at once: each only writes its sensor's row.
    with project_instance(Paths(root)) as instance:
        instance.all_instigator_state()
    stops = {sensor: subprocess.Popen([dagster, "sensor", "stop", sensor, "-w", "workspace.yaml"], cwd=root, env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for sensor in SENSORS}
    for sensor, stop in stops.items():
        try:
            out, err = stop.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            stop.kill()
            out, err = stop.communicate()
        assert stop.returncode == 0, f"dagster sensor stop {sensor}:\n{out}\n{err}"
    with project_instance(Paths(root)) as instance:
        states = {s.instigator_name: s.status.value for s in instance.all_instigator_state()}
    assert all(states.get(sensor) == "STOPPED" for sensor in SENSORS), states
    port = free_port()
    log = tmp_path / "dagster_dev.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([dagster, "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
                                cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, preexec_fn=_default_sigint)
    try:
        srv = Server(f"http://127.0.0.1:{port}", log, proc)
        srv.wait_until_loaded()
        yield srv
    finally:
        stop_server(proc)


# -- the browser ----------------------------------------------------------------------------------------

@pytest.fixture
def browser(tmp_path):
    driver = start_chromium(tmp_path / "chromium-profile", 1600, 1300, UI_TIMEOUT)
    try:
        yield driver
    finally:
        driver.quit()


def page_text(driver) -> str:
    return driver.find_element(By.TAG_NAME, "body").text


def shown(word: str, text: str) -> bool:
    """``word`` is on the page in full, or as the graph draws a long name: ``caption_re…_scores``
    (its start and end kept around a middle ellipsis)."""
    if word in text:
        return True
    for token in text.split():
        head, sep, tail = token.partition("…")
        if sep and len(head) >= 3 and word.startswith(head) and word.endswith(tail) and len(head) + len(tail) < len(word):
            return True
    return False


def wait_for_text(driver, words, what: str, timeout: float = UI_TIMEOUT) -> str:
    """Wait (explicitly, polling the rendered page) until every word is visible; return the page text."""
    words = list(words)
    try:
        WebDriverWait(driver, timeout, poll_frequency=0.25, ignored_exceptions=(StaleElementReferenceException,)).until(
            lambda d: all(shown(w, page_text(d)) for w in words))
    except TimeoutException:
        text = page_text(driver)
        missing = [w for w in words if not shown(w, text)]
        raise AssertionError(f"{what} ({driver.current_url}): not shown after {timeout}s: {missing}\n"
                             f"page text:\n{text[:3000]}") from None
    return page_text(driver)


def save(driver, tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"ui_{name}.png"
    assert driver.save_screenshot(str(path)), f"screenshot {name} not saved"
    shutil.copy2(path, f"/tmp/epic_levels_ui_{name}.png")
    return path


def md_table_rows(md: str) -> list[str]:
    """A markdown table's header and body rows, cells joined by one space (as the UI's table reads as text)."""
    rows = [line.strip() for line in md.splitlines() if line.strip().startswith("|")]
    rows = [rows[0], *rows[2:]] if len(rows) > 1 else rows
    return [" ".join(cell.strip() for cell in row.strip("|").split("|")) for row in rows]


# -- the test -------------------------------------------------------------------------------------------

def test_launch_through_graphql_and_see_it_in_the_ui(browser, server, tmp_path):
    # `browser` comes first so a missing Chromium skips before the server is started.
    timings = {}
    server.add_partition(CLIP)
    timings["tables_run_s"] = server.wait_for_run(server.launch(TABLES))
    timings["clip_run_s"] = server.wait_for_run(server.launch(PER_CLIP, partition=CLIP))

    meta = server.latest_metadata("questions", CLIP)
    assert {"by_level_and_subtype", "sample_questions"} <= set(meta), meta.keys()
    level_table = md_table_rows(meta["by_level_and_subtype"])  # "subtype L1 L2 L3", "easy_sound_object 3 0 0", ...
    assert len(level_table) > 1 and level_table[0].startswith("subtype L1"), meta["by_level_and_subtype"]
    first_sample = meta["sample_questions"].split("```")[1]  # the first question, as rendered by the asset
    sample_lines = [line.strip() for line in first_sample.splitlines() if line.strip()]
    assert sample_lines and sample_lines[0].startswith("[L"), meta["sample_questions"]
    asset_names = sorted(n["assetKey"]["path"][-1] for n in server.gql("{ assetNodes { assetKey { path } } }")["assetNodes"])
    assert {"questions", "clip_annotations", "items", "scores"} <= set(asset_names)

    started = time.monotonic()
    try:
        # Global asset lineage. Groups start collapsed (only group names are drawn); Alt+E expands them all.
        browser.get(server.base + "/asset-groups")
        wait_for_text(browser, ["Global asset lineage", "question_bank", "scoring"], "asset graph")
        ActionChains(browser).key_down(Keys.ALT).send_keys("e").key_up(Keys.ALT).perform()
        # Zoomed to fit, the graph stops drawing node labels once it holds this many assets: the expanded
        # graph must show every group, each expanded (the UI records that in its address); the catalogue
        # (below) lists every asset by name.
        groups = sorted({n["groupName"] for n in server.gql("{ assetNodes { groupName } }")["assetNodes"]})
        wait_for_text(browser, groups, "asset graph with expanded groups")
        WebDriverWait(browser, UI_TIMEOUT).until(
            lambda d: all(f"global%3A{g}" in d.current_url for g in groups))
        save(browser, tmp_path, "asset_graph")

        # The asset catalogue: every asset by name (scrolling through the list, which draws the rows in view).
        browser.get(server.base + "/assets")
        wait_for_text(browser, ["Assets"], "asset catalogue")
        seen: set[str] = set()
        deadline = time.monotonic() + UI_TIMEOUT
        while time.monotonic() < deadline and not set(asset_names) <= seen:
            text = page_text(browser)
            seen |= {name for name in asset_names if shown(name, text)}
            browser.execute_script(
                "for (const el of document.querySelectorAll('*')) {"
                " if (el.scrollHeight > el.clientHeight + 20) { el.scrollTop += 400; } }")
            time.sleep(0.5)
        assert set(asset_names) <= seen, f"assets not listed in the catalogue: {sorted(set(asset_names) - seen)}"
        save(browser, tmp_path, "asset_catalogue")

        # The questions asset: latest materialization (our partition) and its metadata.
        browser.get(server.base + "/assets/questions")
        wait_for_text(browser, ["Latest materialization", CLIP, "Metadata", "by_level_and_subtype",
                               "sample_questions", *level_table], "questions asset page")
        key_cell = browser.find_element(By.XPATH, "//td[normalize-space()='by_level_and_subtype']")
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", key_cell)
        save(browser, tmp_path, "questions_metadata")

        # sample_questions is markdown: shown on demand in a dialog.
        row = browser.find_element(By.XPATH, "//tr[td[normalize-space()='sample_questions']]")
        row.find_element(By.XPATH, ".//*[contains(normalize-space(), 'Show Markdown')][not(*)]").click()
        wait_for_text(browser, sample_lines, "sample_questions dialog")
        save(browser, tmp_path, "sample_questions")
    except BaseException:
        try:
            save(browser, tmp_path, "failure")
        except Exception:
            pass
        raise
    timings["ui_s"] = time.monotonic() - started
    print("timings:", {k: round(v, 1) for k, v in timings.items()})
