"""The estimate's context caching and batch section, and --media-resolution / --fps reaching it."""

import io
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from epic_levels_pipeline.annotations.clips import Clip
from epic_levels_pipeline.cli.estimate import main_estimate
from epic_levels_pipeline.estimate import (BATCH_SHARE, CACHED_INPUT_SHARE, caching_and_batch, estimate,
                                           render_caching_and_batch)
from epic_levels_pipeline.responses.providers.gemini_tokens import media_tokens
from epic_levels_pipeline.settings import Paths

ROOT = Path(__file__).resolve().parents[1]
CLIPS = [Clip.from_key("epic_sounds__P09_08__45-75"), Clip.from_key("hd_epic__P09-20240623-120359__1440-1470")]


@pytest.fixture(scope="module")
def items():
    from epic_levels_pipeline.estimate import load_items

    return load_items(Paths(ROOT), CLIPS)[0]


def test_caching_bills_each_clip_window_once_then_at_the_cached_rate(items):
    frame = estimate(Paths(ROOT), ["gemini-2.5-flash"], items=items)
    table = caching_and_batch(frame).set_index("mode")
    direct, cached = table.loc["direct"], table.loc["caching"]
    groups = frame.attrs["media_groups"]
    assert len(groups) == 3  # epic_sounds clip + silenced, hd_epic clip
    saved = sum(g["calls"] * (g["video_tokens"] + g["audio_tokens"])
                - (1 + CACHED_INPUT_SHARE * (g["calls"] - 1)) * (g["video_tokens"] + g["audio_tokens"]) for g in groups)
    assert cached["billed_input_tokens"] == round(direct["billed_input_tokens"] - saved)
    assert cached["input_share"] <= 0.35 and cached["cost_usd"] < direct["cost_usd"]
    assert table.loc["batch", "cost_usd"] == pytest.approx(BATCH_SHARE * direct["cost_usd"])
    text = render_caching_and_batch(caching_and_batch(frame))
    assert "cached input billed at 10% of the input price" in text and "batch+caching" in text


def test_low_resolution_and_fps_change_the_tokens_and_the_cacheable_windows(items):
    low = estimate(Paths(ROOT), ["gemini-2.5-pro"], items=items, media_resolution="low", fps=0.5)
    assert low.attrs["video_tokens_per_s"] == 33 and low.attrs["media_resolution"] == "MEDIA_RESOLUTION_LOW"
    media = low[low["condition"] == "clip"]
    assert (media["video_tokens"] == media["calls"] * 33 * 30).all()
    table = caching_and_batch(low).set_index("mode")
    # 30 s x (33 + 32) = 1,950 tokens: below 2.5-pro's 4,096-token minimum, so nothing is cached
    assert table.loc["caching", "billed_input_tokens"] == table.loc["direct", "billed_input_tokens"]


@settings(deadline=None)
@given(st.floats(1, 600), st.sampled_from([None, "low", "medium", "high"]), st.sampled_from([None, 0.5, 1.0, 2.0]))
def test_media_tokens_scale_with_seconds_and_fps(seconds, resolution, fps):
    one = media_tokens(seconds, resolution, fps)
    assert media_tokens(2 * seconds, resolution, fps) == pytest.approx(2 * one, abs=1)
    assert media_tokens(seconds, "low", fps) <= media_tokens(seconds, resolution, fps)


def test_main_estimate_prints_both_sections_and_refuses_bad_fps():
    out = io.StringIO()
    assert main_estimate(["gemini-2.5-flash"], paths=Paths(ROOT), clips=CLIPS[:1], out=out,
                         media_resolution="low", fps=2) == 0
    text = out.getvalue()
    assert "132 video at 2 fps, media resolution MEDIA_RESOLUTION_LOW" in text
    assert "Context caching and batch mode" in text and "caching" in text
    assert main_estimate(["gemini-2.5-flash"], paths=Paths(ROOT), clips=CLIPS[:1], fps=0) == 2


def test_evaluation_resource_turns_media_flags_into_request_settings(monkeypatch, tmp_path):
    from epic_levels_pipeline.defs.evaluation import EvaluationResource
    from epic_levels_pipeline.plan import request_settings

    (tmp_path / "models.toml").write_text('evaluate = ["gemini/gemini-2.5-flash"]\n')
    monkeypatch.setenv("EPIC_LEVELS_MODEL_CONFIG", str(tmp_path / "models.toml"))
    (plain,) = EvaluationResource().plan().asked
    assert set(request_settings(plain)) == {"model_config"}
    (spec,) = EvaluationResource(media_resolution="high", fps=2).plan().asked
    settings = request_settings(spec)
    assert (settings["media_resolution"], settings["fps"]) == ("MEDIA_RESOLUTION_HIGH", 2.0)
    assert settings["model_config"] != request_settings(plain)["model_config"]  # another identity, another key
