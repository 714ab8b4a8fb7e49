"""Shared by the integration tests: one materialized graph per session, which tests read or copy.

``graph_template`` materializes the whole graph once (the annotation tables and one offline run of the bundled
clips ``OFFLINE_CLIPS``, with the default offline responders of both tracks) in its own project folder and
Dagster instance folder. ``offline_graph`` reads it (read-only); ``graph_copy`` gives a test its own copy of
both folders (files and instance), to change and materialize again. A test that needs another configuration
(an empty instance, other clips, a model) makes its own ``project`` and ``instance`` and says why.
"""

import functools
import shutil
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest

from epic_levels_pipeline.orchestration.local import RunReport, load_definitions, run_pipeline
from epic_levels_pipeline.settings import Paths
from epic_levels_pipeline.storage.table_store import TableStore
from epic_levels_pipeline.storage.views import refresh_views

from ..conftest import SEED_CLIPS, make_project

QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
OFFLINE_CLIPS = SEED_CLIPS + ["hd_epic__P09-20240623-120359__1440-1470"]
TABLES = ["sounds", "narrations", "activities", "recipe_steps", "object_tracks", "vocabulary", "videos", "entity_catalogue"]
UNSET = ("EPIC_LEVELS_MODELS", "GEMINI_API_KEY", "GOOGLE_API_KEY", "EPIC_LEVELS_RESPONDERS",
         "EPIC_LEVELS_CAPTION_RESPONDERS")


@dataclass
class GraphRun:
    project: Paths
    instance: dg.DagsterInstance
    report: RunReport


@dataclass
class GraphTemplate:
    project: Paths
    dagster_home: Path  # the instance's folder (``dg.instance_for_test(temp_dir=...)`` opens it)
    report: RunReport


@functools.cache
def definitions() -> dg.Definitions:
    """The project's definitions, loaded once per session (no test changes them)."""
    return load_definitions()


def materialize(instance, selection, partition_key=None, tags=None):
    """One in-process run of the implicit asset job over ``selection`` (asset names)."""
    job = definitions().resolve_implicit_global_asset_job_def()
    return job.execute_in_process(instance=instance, asset_selection=[dg.AssetKey(k) for k in selection],
                                  partition_key=partition_key, tags=tags, raise_on_error=False, run_config=QUIET)


@pytest.fixture(scope="session")
def graph_template(tmp_path_factory) -> GraphTemplate:
    """``epic-levels run``'s driver over the whole graph, once per session, on a copy of the bundled data (the
    same clips as the ``project`` fixture) in an instance of its own folder. Never changed: read it through
    ``offline_graph``, change a ``graph_copy``."""
    base = tmp_path_factory.mktemp("graph_template")
    paths = make_project(base / "project", OFFLINE_CLIPS)
    home = base / "dagster_home"
    home.mkdir()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("EPIC_LEVELS_HOME", str(paths.root))
        for name in UNSET:
            env.delenv(name, raising=False)
        with dg.instance_for_test(temp_dir=str(home), set_dagster_home=False) as instance:
            report = run_pipeline(paths, instance=instance, run_config=QUIET, log=lambda *_: None)
    return GraphTemplate(paths, home, report)


@pytest.fixture(scope="session")
def offline_graph(graph_template):
    """The session's materialized graph (``graph_template``) and its instance. Read-only: a test that changes
    files or materializes again takes a ``graph_copy``."""
    with dg.instance_for_test(temp_dir=str(graph_template.dagster_home), set_dagster_home=False) as instance:
        yield GraphRun(graph_template.project, instance, graph_template.report)


@pytest.fixture
def graph_copy(graph_template, tmp_path, monkeypatch):
    """A private copy of the session's materialized graph: its project folder and its Dagster instance's
    folder copied, ``EPIC_LEVELS_HOME`` pointing at the copy, the warehouse's views re-pointed at the copy's
    files. Change it freely."""
    root = tmp_path / "project"
    shutil.copytree(graph_template.project.root, root)
    home = tmp_path / "dagster_home"
    shutil.copytree(graph_template.dagster_home, home)
    paths = Paths(root)
    monkeypatch.setenv("EPIC_LEVELS_HOME", str(root))
    for name in UNSET:
        monkeypatch.delenv(name, raising=False)
    if paths.warehouse.exists():
        refresh_views(paths.warehouse, TableStore(paths.assets))
    with dg.instance_for_test(temp_dir=str(home)) as instance:
        yield GraphRun(paths, instance, graph_template.report)


# Headless Chromium as the browser tests drive it (Debian's chromium and chromedriver; nothing is downloaded): only
# 127.0.0.1 is reachable from a page, every other host name fails to resolve.
CHROME_FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
                "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"]


def start_chromium(profile: Path, width: int, height: int, timeout_s: float = 60):
    """A headless Chromium driver with a window of ``width`` × ``height`` and its own profile folder; skips, saying
    why, when there is no ``chromium`` on PATH."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("no Chromium binary on PATH (`chromium`); install Debian's chromium and chromium-driver")
    chromedriver = shutil.which("chromedriver")
    assert chromedriver, "chromium is installed but chromedriver is not on PATH (Debian package chromium-driver)"
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in CHROME_FLAGS + [f"--window-size={width},{height}", f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
    driver.set_window_size(width, height)
    driver.set_page_load_timeout(timeout_s)
    return driver
