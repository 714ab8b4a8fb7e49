"""Shared fixtures (a temporary project: a copy of the bundled data; a temporary Dagster instance; the bundled
and staged annotations; the bundled offline bank; llama.cpp's server), the suite's markers and its hypothesis profiles.

Markers are set here, by path and by fixture, so a new test cannot forget them (``pytest --markers``):

- ``e2e``: starts other processes (``epic-levels``, ``dagster dev``, the daemon, llama.cpp's server), a browser
  or a cluster, or drives the whole graph against a local model server (``E2E_PATHS``, ``E2E_FIXTURES``);
- ``staged``: reads the full staged annotation files (``STAGED``): takes the ``staged`` fixture or skips with
  a reason naming the staged files;
- ``slow``: materializes Dagster assets (takes ``instance``, ``offline_graph``, ``graph_copy`` or
  ``graph_template``) or is ``e2e``.

The default run (``pytest``: ``addopts`` in pyproject.toml) deselects ``e2e`` and ``staged``; ``.ci/run``
then runs ``-m "e2e or staged"``. Hypothesis runs the ``dev`` profile, or ``ci`` (more examples) when
``CI=true``; ``HYPOTHESIS_PROFILE`` names either.
"""

import os
import shutil
from pathlib import Path

import dagster as dg
import pytest
from hypothesis import settings

from epic_levels_pipeline.annotations.readers import load_annotations
from epic_levels_pipeline.annotations.catalogue import build_catalogue
from epic_levels_pipeline.settings import Paths

ROOT = Path(__file__).resolve().parents[1]
STAGED = ROOT.parent / "shared" / "data"  # the full staged annotation files, when present
SEED_CLIPS = ["epic_sounds__P09_08__45-75", "epic_sounds__P02_133__15-45"]
OFFLINE_RESPONDERS = ["oracle", "chance", "presence", "blind"]

# No deadline in either profile: on shared machines one example's time varies tenfold, and speed figures come
# from bench/, not from tests. A test's own @settings says only what it needs (a health check suppressed, or
# a cap on examples that each build a bank or index tables: CI runs the default tests too, under 5 minutes).
settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile("ci", max_examples=100, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE")
                      or ("ci" if os.environ.get("CI", "").strip().lower() in ("true", "1", "yes") else "dev"))

# Paths (under this folder; a file or a test's node id) of end-to-end tests, with what they start.
E2E_PATHS = {
    "test_first_start.py": "`epic-levels run` and the Dagster daemon as processes",
    "test_runs_never_lie.py": "`epic-levels run` killed, corrupted and concurrent, and the Dagster daemon, as processes",
    "defs/test_ui_e2e.py": "`dagster dev` and headless Chromium",
    "defs/test_report_browser.py": "headless Chromium on the report",
    "sharing/test_inspect.py::test_the_documented_inspect_command_runs_the_clip_condition":
        "`inspect eval` as a process against the local Gemini server",
    "defs/test_cluster.py": "redis-server, PostgreSQL, Celery workers and the daemon",
    "defs/test_model_pipeline.py": "the whole graph against the local Gemini server",
    "defs/test_model_caching_batch.py": "the whole graph against the local Gemini server (caches, batch jobs)",
    "defs/test_openai_pipeline.py": "the whole graph (through the CLI) against the local OpenAI-compatible server",
    "defs/test_models_declared.py": "the whole graph (through the CLI, a launch and the sensor) several times against "
                                    "the local OpenAI-compatible server",
    "defs/test_judges_pipeline.py": "the whole graph with two judges, and a judge timing out (retried), against local "
                                    "OpenAI-compatible servers",
    "defs/test_caption_pipeline.py::test_caption_track_with_a_gemini_model": "the whole graph against the local Gemini server",
    # the sensor's cycle as the daemon runs it, several runs of the graph each (25-40 s on 2 cores alone)
    "defs/test_sensor.py::test_sensor_requests_exactly_the_changed_clip": "first tick on an empty instance, then every run it asks for",
    "defs/test_sensor.py::test_sensor_reruns_when_files_return_to_an_earlier_content": "two edits, each clip's update run",
    # one edited annotation row, then the clip's update run and the combine, against a full run (about 2.5 min)
    "defs/test_incremental_scores.py": "a whole run, an edit, and the update run it causes",
    # today's tables from every bundled verdict beside the combined partials (30-40 s on 2 cores each)
    "scoring/test_partials.py::test_combined_scores_and_pairs_are_todays_tables_on_the_bundled_run":
        "the reference tables of every bundled verdict",
    "scoring/test_partials.py::test_partials_combine_in_any_grouping_and_order": "the reference tables, per example",
    # the cross-clip tables again with a process per step (each loads the definitions: about 60 s)
    "defs/test_cross_clip_processes.py::test_step_processes_give_the_same_tables":
        "a process per cross-clip step",
}
E2E_FIXTURES = {"server", "browser", "cluster_project", "llama_server"}  # dagster dev, Chromium, a local cluster, llama.cpp
SLOW_FIXTURES = {"instance", "offline_graph", "graph_copy", "graph_template"}  # materialize Dagster assets
SLOW_SECONDS = 20.0  # the default run's limit per test (setup, call and teardown each), reported at its end


def _reads_staged(item) -> bool:
    if "staged" in item.fixturenames:
        return True
    return any("staged" in str(m.kwargs.get("reason", "")) for m in item.iter_markers("skipif"))


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).resolve().parent
    for item in items:
        try:
            where = Path(str(item.path)).resolve().relative_to(here).as_posix()
        except ValueError:
            continue
        test = f"{where}::{item.name.split('[')[0]}"
        if where in E2E_PATHS or test in E2E_PATHS or E2E_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.e2e)
        if _reads_staged(item):
            item.add_marker(pytest.mark.staged)
        if item.get_closest_marker("e2e") or SLOW_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.slow)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Name every test of the run (not ``e2e``) one of whose phases took longer than ``SLOW_SECONDS``."""
    if "e2e" in (config.getoption("markexpr") or "").replace("not e2e", ""):
        return
    over = [(r.duration, r.nodeid, r.when) for rs in terminalreporter.stats.values() for r in rs
            if getattr(r, "duration", 0) > SLOW_SECONDS and "e2e" not in getattr(r, "keywords", {})]
    if over:
        terminalreporter.write_sep("=", f"over {SLOW_SECONDS:g} s outside e2e (make it faster or move it to e2e)")
        for duration, nodeid, when in sorted(over, reverse=True):
            terminalreporter.write_line(f"{duration:7.1f}s {when:<8} {nodeid}")


def make_project(tmp: Path, clips: list[str] | None = None) -> Paths:
    """A project root in ``tmp`` with a copy of the bundled annotations and (a subset of) the manifest."""
    shutil.copytree(ROOT / "data" / "annotations", tmp / "data" / "annotations")
    lines = (ROOT / "data" / "clips.csv").read_text().splitlines()
    if clips is not None:
        from epic_levels_pipeline.annotations.clips import Clip

        keep = {(c.dataset, c.video_id, f"{c.start_s:g}", f"{c.end_s:g}") for c in map(Clip.from_key, clips)}
        body = [l for l in lines[1:] if not l.startswith("#") and tuple(l.split(",")) in keep]
        lines = [lines[0], *body]
    (tmp / "data" / "clips.csv").write_text("\n".join(lines) + "\n")
    return Paths(tmp)


@pytest.fixture
def project(tmp_path, monkeypatch):
    paths = make_project(tmp_path / "project", SEED_CLIPS + ["hd_epic__P09-20240623-120359__1440-1470"])
    monkeypatch.setenv("EPIC_LEVELS_HOME", str(paths.root))
    monkeypatch.delenv("EPIC_LEVELS_MODELS", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    return paths


@pytest.fixture(scope="session")
def llama_server():
    """llama.cpp's OpenAI-compatible server serving SmolLM2-135M-Instruct on 127.0.0.1 at a free port
    (:class:`.fakes.llama_server.LlamaServer`), once per test session; skips, saying why, without the ``llama``
    extra."""
    from .fakes.llama_server import LlamaServer, missing

    why = missing()
    if why:
        pytest.skip(why)
    with LlamaServer() as server:
        yield server


@pytest.fixture
def instance():
    with dg.instance_for_test() as inst:
        yield inst


@pytest.fixture(scope="session")
def bundled():
    """The bundled annotations and their catalogue, loaded once per test session."""
    ann = load_annotations(ROOT / "data" / "annotations")
    return ann, build_catalogue(ann)


@pytest.fixture(scope="session")
def staged():
    """The full staged annotation files (``STAGED``) loaded once per test session (read-only); skips the
    test, saying why, when they are absent."""
    if not STAGED.is_dir():
        pytest.skip(f"staged annotation files not present at {STAGED}")
    return load_annotations(STAGED)


def offline_tables(ann, cat) -> dict:
    """Questions, items, offline responses (``OFFLINE_RESPONDERS``) and verdicts for every bundled clip,
    each one frame, the items' rejections (a list), the banks' drops by reason (a Counter) and each clip's
    ``(clip, rows, bank)`` by clip key (``banks``)."""
    from collections import Counter

    import pandas as pd

    from epic_levels_pipeline.annotations.clip_rows import clip_annotations
    from epic_levels_pipeline.annotations.clip_keys import read_manifest
    from epic_levels_pipeline.pipeline import clip_chain

    out = {"questions": [], "items": [], "responses": [], "verdicts": [], "rejected": []}
    drops = Counter()
    banks = {}
    for clip in read_manifest(ROOT / "data" / "clips.csv"):
        rows = clip_annotations(ann, clip)
        chain = clip_chain(clip, rows, cat, responders=OFFLINE_RESPONDERS)
        banks[clip.key] = (clip, rows, chain.bank)
        out["questions"].append(chain.bank.questions)
        out["items"].append(chain.items)
        out["responses"].append(chain.responses)
        out["verdicts"].append(chain.verdicts)
        out["rejected"] += chain.rejected
        drops.update(chain.bank.drops)
    return {**{k: (pd.concat(v, ignore_index=True) if k != "rejected" else v) for k, v in out.items()}, "drops": drops,
            "banks": banks}


@pytest.fixture(scope="session")
def offline_bank(bundled):
    """Questions, items, offline responses and verdicts for every bundled clip, the banks' drops and each
    clip's bank (``offline_tables``; computed once; read-only: every test that needs the bundled bank reads
    it here)."""
    return offline_tables(*bundled)


def declare_models(root, *names: str, judge: str | None = None, tables: str = "") -> Path:
    """Write the project's ``models.toml``: ``names`` as its declared set (``evaluate``), ``judge``, then ``tables``."""
    import json

    path = Path(root) / "models.toml"
    lines = [f"evaluate = {json.dumps(list(names))}"] + ([f"judge = {json.dumps(judge)}"] if judge else [])
    path.write_text("\n".join(lines) + "\n" + tables)
    return path
