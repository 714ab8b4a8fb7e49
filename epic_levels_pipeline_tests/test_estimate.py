"""Estimating calls, tokens and cost of a Gemini run before making it."""

import io
import math
from pathlib import Path

import pytest

from epic_levels_pipeline.annotations.clips import Clip
from epic_levels_pipeline.cli.estimate import main_estimate
from epic_levels_pipeline.estimate import MEDIA_TOKENS_PER_S, Price, estimate, parse_price, render_estimate
from epic_levels_pipeline.settings import Paths

ROOT = Path(__file__).resolve().parents[1]
CLIPS = [Clip.from_key("epic_sounds__P09_08__45-75"), Clip.from_key("hd_epic__P09-20240623-120359__1440-1470")]


@pytest.fixture(scope="module")
def frame():
    return estimate(Paths(ROOT), ["gemini-2.5-flash"], clips=CLIPS, assume_media=True)


def test_counts_calls_and_tokens(frame):
    assert frame.attrs["clips"] == 2
    responses = frame[frame["condition"] != "judge"]
    assert (responses["calls"] > 0).all()
    assert (responses["prompt_tokens"] > 0).all() and (responses["output_tokens"] > 0).all()
    assert (frame["cost_usd"] > 0).all()
    # one call per distinct request: epic_sounds items under clip, no_clip, silenced, hd_epic items under two;
    # identical no_clip prompts are one call; a caption per clip x condition; one integrity request per clip
    assert set(responses["condition"]) == {"clip", "no_clip", "silenced"}
    items = frame.attrs["items"]
    answers = responses[~responses["format"].isin(["caption", "integrity"])]
    assert answers[answers["condition"] == "no_clip"]["calls"].sum() <= items
    assert responses.loc[responses["format"] == "caption", "calls"].sum() == 3 + 2  # no_clip prompts differ here
    assert responses.loc[responses["format"] == "integrity", "calls"].sum() == 2


def test_calls_are_counted_as_the_run_makes_them():
    """No media calls for a clip without its source video (the run skips them), identical prompts once."""
    from epic_levels_pipeline.estimate import requests_of, load_items

    items, _ = load_items(Paths(ROOT), CLIPS)
    calls, _, integrity, media = requests_of(Paths(ROOT), items, media_available={c.key: False for c in CLIPS})
    assert {c["condition"] for c in calls} == {"no_clip"} and not integrity and not any(media.values())
    assert sum(c["format"] != "caption" for c in calls) == items["prompt"].nunique()
    calls, _, integrity, _ = requests_of(Paths(ROOT), items, media_available={CLIPS[0].key: True, CLIPS[1].key: False})
    clip = [c for c in calls if c["condition"] == "clip" and c["format"] != "caption"]
    assert len(clip) == items.loc[items["clip_key"] == CLIPS[0].key, "prompt"].nunique() and len(integrity) == 1


def test_media_tokens_only_with_media(frame):
    no_clip = frame[frame["condition"] == "no_clip"]
    assert (no_clip["video_tokens"] == 0).all() and (no_clip["audio_tokens"] == 0).all()
    assert (no_clip["input_tokens"] == no_clip["prompt_tokens"]).all()
    media = frame[frame["condition"].isin(["clip", "silenced"])]
    per_call = (media["video_tokens"] + media["audio_tokens"]) / media["calls"]
    assert per_call.tolist() == pytest.approx([30 * MEDIA_TOKENS_PER_S] * len(media))
    assert not frame[frame["condition"] == "judge"]["media"].any()


def test_unknown_model_has_tokens_but_no_cost():
    f = estimate(Paths(ROOT), ["gemini/no-such-model"], clips=CLIPS[:1], assume_media=True)
    assert f["cost_usd"].isna().all()
    assert (f["input_tokens"] > 0).all()
    assert "unknown" in render_estimate(f)


def test_price_overrides():
    assert parse_price("my-model=1,2") == ("my-model", Price(1.0, 2.0))
    assert parse_price("m=1,2,3") == ("m", Price(1.0, 2.0, 3.0))
    for bad in ("my-model", "m=1", "m=a,b", "m=-1,2"):
        with pytest.raises(ValueError):
            parse_price(bad)
    f = estimate(Paths(ROOT), ["gemini/my-model"], clips=CLIPS[:1], price_table=["my-model=1,0"])
    assert f["cost_usd"].sum() == pytest.approx(f["input_tokens"].sum() / 1e6)


def test_main_estimate_prints_a_table():
    out = io.StringIO()
    assert main_estimate(["gemini-2.5-flash"], ["x=1,2"], paths=Paths(ROOT), clips=CLIPS[:1], out=out) == 0
    text = out.getvalue()
    assert "gemini-2.5-flash" in text and "total" in text and "$" in text
    assert main_estimate([], None) == 2
    assert main_estimate(["m"], ["broken"]) == 2


def test_media_tokens_follow_each_providers_route():
    f = estimate(Paths(ROOT), ["gemini/gemini-2.5-flash", "openai/gpt-4o-mini-audio-preview", "vllm/Qwen/Qwen2.5-Omni-7B",
                               "sglang/Qwen/Qwen2.5-VL-7B-Instruct"], clips=CLIPS[:1], assume_media=True)
    clip = f[(f["condition"] == "clip")].groupby("model")[["video_tokens", "audio_tokens", "calls"]].sum()
    per_call = clip.div(clip["calls"], axis=0)
    assert per_call.loc["gemini/gemini-2.5-flash", "video_tokens"] == 30 * 258
    assert per_call.loc["openai/gpt-4o-mini-audio-preview", "video_tokens"] == 30 * 255  # 30 frames at 1 fps
    assert per_call.loc["openai/gpt-4o-mini-audio-preview", "audio_tokens"] == 30 * 10
    assert per_call.loc["vllm/Qwen/Qwen2.5-Omni-7B", "audio_tokens"] == 30 * 25
    routes = f.drop_duplicates("model").set_index("model")["route"].to_dict()
    assert routes["openai/gpt-4o-mini-audio-preview"] == "frames(1 fps)+input_audio"
    assert routes["vllm/Qwen/Qwen2.5-Omni-7B"] == "video_url+input_audio"  # the provider default: no name guess
    costs = f.groupby("model")["cost_usd"].sum(min_count=1)
    assert costs["openai/gpt-4o-mini-audio-preview"] > 0 and math.isnan(f.loc[f["provider"] == "vllm", "cost_usd"].iloc[0])
    priced = estimate(Paths(ROOT), ["vllm/Qwen/Qwen2.5-Omni-7B"], clips=CLIPS[:1],
                      price_table=["vllm/Qwen/Qwen2.5-Omni-7B=0.1,0.2"])
    assert (priced["cost_usd"] > 0).all()
    assert main_estimate(["Qwen/Qwen2.5-Omni-7B"], None, paths=Paths(ROOT), clips=CLIPS[:1]) == 2
