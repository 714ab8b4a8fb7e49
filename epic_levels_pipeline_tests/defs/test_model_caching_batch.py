"""The whole graph with a Gemini model on the real SDK against the local server, with context caching
(direct calls: one cached content per clip file × condition, deleted after the clip's calls) and then in
batch mode (``epic-levels run --batch``: one job per clip, progress in the ``responses`` metadata)."""

import pytest

from epic_levels_pipeline.captions.models import JUDGE_INSTRUCTION
from epic_levels_pipeline.orchestration.local import run_pipeline
from epic_levels_pipeline.responses.cache import CallCache
from epic_levels_pipeline.responses.media import make_test_video
from epic_levels_pipeline.storage.views import query

from ..fakes.gemini_server import GeminiTestServer
from ..conftest import declare_models
from .conftest import QUIET
from .test_model_pipeline import is_integrity, reply


CLIP = "epic_sounds__P09_08__45-75"


def config(**evaluation) -> dict:
    return {**QUIET, "resources": {"evaluation": {"config": {"responders": "oracle", **evaluation}}}}


def test_caching_then_batch_through_the_graph(project, instance, monkeypatch):
    # its own project and instance, not a graph_copy: another configuration (Gemini models, caching, batch): every asset runs again anyway
    make_test_video(project.media / "epic_sounds" / "P09_08.mp4", 80.0)
    with GeminiTestServer(reply, processing_polls=0, file_part_tokens=8700, batch_running_polls=1) as server:
        monkeypatch.setenv("GEMINI_API_KEY", "test-key-not-secret")
        monkeypatch.setenv("GEMINI_BASE_URL", server.base_url)
        monkeypatch.setenv("EPIC_LEVELS_RPM", "100000")
        monkeypatch.setenv("EPIC_LEVELS_CONCURRENCY", "8")
        declare_models(project.root, "gemini/gemini-2.5-flash")
        report = run_pipeline(project, clip_keys=[CLIP], instance=instance, log=lambda *_: None,
                              run_config=config(judge_model="gemini/gemini-judge"))
        assert report.failed == []
        rows = query(project.warehouse, "select * from responses where responder = 'gemini'")
        media_rows = rows[rows["condition"].isin(["clip", "silenced"])]
        assert (rows["status"] == "ok").all() and len(media_rows)
        # clip and silenced copy, each one cache for all its items; the media-integrity request (the clip without its
        # audio track) is sent uncached
        assert server.cache_creates == 2 and server.uploads == 3
        captions = query(project.warehouse, "select * from caption_responses where responder = 'gemini'")
        caption_media = captions[captions["condition"].isin(["clip", "silenced"])]
        assert len(caption_media) and (caption_media["status"] == "ok").all()
        # the clip's captions use the same two caches as its questions
        assert server.cached_generates == media_rows["cache_key"].nunique() + caption_media["cache_key"].nunique()
        assert server.cache_deletes == 2 and not server.caches  # deleted once the clip's calls were done
        with CallCache(project.cache / "calls.sqlite") as cache:
            assert cache.context_caches() == []
            stored = {r["cache_key"]: r for r in cache.rows()}
        assert {stored[k]["cached_tokens"] for k in media_rows["cache_key"]} == {8700}
        # the responses rows carry the same count and the route (main's columns), not a second field
        assert set(media_rows["cached_tokens"]) == {8700}
        assert media_rows["route"].str.startswith("video=cached_content(").all()
        assert (rows.loc[rows["condition"] == "no_clip", "cached_tokens"] == 0).all()
        assert set(media_rows["provider"]) == {"gemini"}
        generates_before = server.generate_calls

        # the same clip with another model in batch mode: one job, no direct answer calls
        declare_models(project.root, "gemini/gemini-2.5-pro")  # flash leaves the declaration: its rows leave the tables
        report = run_pipeline(project, clip_keys=[CLIP], instance=instance, log=lambda *_: None,
                              run_config=config(judge_model="gemini/gemini-judge", batch=True,
                                                media_resolution="low", fps=0.5))
        assert report.failed == []
        rows = query(project.warehouse, "select * from responses where responder = 'gemini'")
        assert (rows["status"] == "ok").all() and set(rows["model"]) == {"gemini/gemini-2.5-pro"}
        assert set(rows["served_model"]) == {"gemini-2.5-pro"}
        assert server.batch_creates == 1 and server.batch_items == rows["cache_key"].nunique()
        job = next(iter(server.batches.values()))
        requests = [it["request"] for it in job["items"]]
        assert all(r["generationConfig"]["mediaResolution"] == "MEDIA_RESOLUTION_LOW" for r in requests)
        assert any(p.get("videoMetadata", {}).get("fps") == 0.5 for r in requests for p in r["contents"][0]["parts"])
        # only the judges, the caption track (which calls direct, batch mode or not) and the one media-integrity
        # request went direct
        direct = [str(b) for b in server.generate_requests[generates_before:] if not is_integrity(server, b)]
        assert len(direct) < len(server.generate_requests[generates_before:])
        assert all(any(mark in b for mark in ("You check what a short answer means", JUDGE_INSTRUCTION,
                                              "Describe it as a structured caption")) for b in direct)
        mat = instance.get_latest_materialization_event(__import__("dagster").AssetKey("responses"))
        meta = mat.asset_materialization.metadata
        assert "1 jobs (1 succeeded)" in meta["batch_progress"].value
        assert "JOB_STATE_SUCCEEDED" in meta["batch_jobs"].value
