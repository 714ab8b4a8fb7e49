"""Shared by the integration tests: one offline run of the whole graph, which several tests read."""

from dataclasses import dataclass

import dagster as dg
import pytest

from epic_levels_pipeline.orchestration.local import RunReport, run_pipeline
from epic_levels_pipeline.settings import Paths

from ..conftest import SEED_CLIPS, make_project

QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
OFFLINE_CLIPS = SEED_CLIPS + ["hd_epic__P09-20240623-120359__1440-1470"]


@dataclass
class GraphRun:
    project: Paths
    instance: dg.DagsterInstance
    report: RunReport


@pytest.fixture(scope="session")
def offline_graph(tmp_path_factory):
    """``epic-levels run``'s driver over the whole graph, once per session, in its own temporary Dagster
    instance on a copy of the bundled data (the same clips as the ``project`` fixture), with the default
    offline responders of both tracks. Read-only: a test that changes files or materializes again makes
    its own project."""
    paths = make_project(tmp_path_factory.mktemp("offline_graph") / "project", OFFLINE_CLIPS)
    with pytest.MonkeyPatch.context() as env, dg.instance_for_test() as instance:
        env.setenv("EPIC_LEVELS_HOME", str(paths.root))
        for name in ("EPIC_LEVELS_MODELS", "GEMINI_API_KEY", "GOOGLE_API_KEY", "EPIC_LEVELS_RESPONDERS",
                     "EPIC_LEVELS_CAPTION_RESPONDERS"):
            env.delenv(name, raising=False)
        report = run_pipeline(paths, instance=instance, run_config=QUIET, log=lambda *_: None)
        env.undo()
        yield GraphRun(paths, instance, report)
