"""Shared fixtures: a temporary project (a copy of the bundled data) and a temporary Dagster instance."""

import os
import shutil
from pathlib import Path

import dagster as dg
import pytest

from epic_levels_pipeline.annotations.readers import load_annotations
from epic_levels_pipeline.annotations.catalogue import build_catalogue
from epic_levels_pipeline.settings import Paths

ROOT = Path(__file__).resolve().parents[1]
STAGED = ROOT.parent / "shared" / "data"  # the full staged annotation files, when present
SEED_CLIPS = ["epic_sounds__P09_08__45-75", "epic_sounds__P02_133__15-45"]
OFFLINE_RESPONDERS = ["oracle", "chance", "presence", "blind"]


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
    each one frame, the items' rejections (a list) and the banks' drops by reason (a Counter)."""
    from collections import Counter

    import pandas as pd

    from epic_levels_pipeline.bank.clip_view import ClipView
    from epic_levels_pipeline.annotations.clips import clip_annotations, read_manifest
    from epic_levels_pipeline.formats.items import build_items
    from epic_levels_pipeline.bank.build import build_bank
    from epic_levels_pipeline.responses.runner import offline_responses
    from epic_levels_pipeline.scoring.verdicts import verdicts

    out = {"questions": [], "items": [], "responses": [], "verdicts": [], "rejected": []}
    drops = Counter()
    for clip in read_manifest(ROOT / "data" / "clips.csv"):
        rows = clip_annotations(ann, clip)
        bank = build_bank(clip, rows, cat)
        items, rejected = build_items(bank.questions, ClipView(clip, rows, cat), cat)
        responses = offline_responses(clip, items, bank.questions, rows, cat, OFFLINE_RESPONDERS)
        out["questions"].append(bank.questions)
        out["items"].append(items)
        out["responses"].append(responses)
        out["verdicts"].append(verdicts(responses, items))
        out["rejected"] += rejected
        drops.update(bank.drops)
    return {**{k: (pd.concat(v, ignore_index=True) if k != "rejected" else v) for k, v in out.items()}, "drops": drops}


@pytest.fixture(scope="session")
def offline_bank(bundled):
    """Questions, items, offline responses and verdicts for every bundled clip, and the banks' drops
    (computed once; read-only)."""
    return offline_tables(*bundled)
