"""The models file: validation errors named FILE: [models.NAME].KEY before any call, routes configured (never
guessed from a served name), both audio routes cached apart, defaults stated, flags that do not apply refused,
limits per model, the judge only when named, and ``epic-levels probe`` against the fake servers."""

from __future__ import annotations

import io
import json
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from epic_levels_pipeline import cli
from epic_levels_pipeline.orchestration import local as orchestrate
from epic_levels_pipeline.annotations.clips import Clip
from epic_levels_pipeline.defs.evaluation import EvaluationResource
from epic_levels_pipeline.defs.judging import qa_judge
from epic_levels_pipeline.cli.probe import main_probe
from epic_levels_pipeline.responses.cache import CallCache
from epic_levels_pipeline.responses.media import make_test_video, sha256_file, silence_audio
from epic_levels_pipeline.responses.models_config import (ModelConfigError, default_limits, inline_spec,
                                                          load_models_file)
from epic_levels_pipeline.responses.runner import ClipMediaInfo, model_responses

from ..fakes.gemini_server import GeminiTestServer
from ..fakes.openai_server import OpenAITestServer, message_parts

SERVED = "qwen"  # a served name with no "omni" in it (vllm serve … --served-model-name qwen)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for var in ("EPIC_LEVELS_RPM", "EPIC_LEVELS_CONCURRENCY", "EPIC_LEVELS_JUDGE_MODEL", "EPIC_LEVELS_MODEL_CONFIG",
                "EPIC_LEVELS_MODELS", "VLLM_API_KEY", "VLLM_BASE_URL", "OPENAI_API_KEY", "GEMINI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def evaluate(*names: str) -> str:
    """The models file's declared set (top-level keys come before the tables)."""
    return f"evaluate = {json.dumps(list(names))}\n"


def specs_of(resource: EvaluationResource) -> list:
    return [m.spec for m in resource.plan().models]


def entry(name: str, endpoint: str, **keys) -> str:
    lines = [f"[models.{name}]", 'provider = "vllm"', f'model = "{keys.pop("model", SERVED)}"', f'endpoint = "{endpoint}"']
    lines += [f"{k} = {json.dumps(v)}" for k, v in keys.items()]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def media(tmp_path_factory) -> ClipMediaInfo:
    d = tmp_path_factory.mktemp("media")
    clip = make_test_video(d / "clip.mp4", 3.0)
    silenced = silence_audio(clip, d / "clip.silenced.mp4")
    return ClipMediaInfo("ready", "", str(clip), str(silenced), sha256_file(clip), sha256_file(silenced))


CLIP = Clip("epic_sounds", "P09_08", 45.0, 75.0)
ITEMS = pd.DataFrame([{"item_id": f"i{n}", "question_id": f"q{n}", "clip_key": CLIP.key, "dataset": CLIP.dataset,
                       "level": "L2", "subtype": "low_sound_moment", "distractor_strategy": "same_clip",
                       "format": "multiple_choice", "base_format": "multiple_choice", "prompt": f"[{n}] Which sound?",
                       "audio_annotated": True}
                      for n in range(3)])


# -- validation ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("bad, where", [
    ('colour = "red"\n', "[models.m].colour: unknown key"),
    ('fps = "fast"\n', "[models.m].fps: must be a valid number"),
    ("max_concurrency = 2.5\n", "[models.m].max_concurrency"),
    ('audio = "inside"\n', "[models.m].audio: must be 'in_video', 'separate' or 'none'"),
])
def test_unknown_key_and_wrong_type_name_file_model_and_key(tmp_path, bad, where):
    path = write(tmp_path / "models.toml", entry("m", "http://127.0.0.1:8000/v1") + bad)
    with pytest.raises(ModelConfigError) as err:
        load_models_file(path)
    assert str(err.value).startswith(f"{path}: {where}"), str(err.value)


def test_missing_endpoint_and_impossible_combinations_are_errors(tmp_path):
    path = write(tmp_path / "models.toml", '[models.local]\nprovider = "sglang"\nmodel = "m"\n'
                 '[models.frames-omni]\nprovider = "vllm"\nmodel = "m"\nendpoint = "http://h:1/v1"\n'
                 'video = "frames"\naudio = "in_video"\n'
                 '[models.gpt]\nprovider = "openai"\nmodel = "gpt-4o"\nmedia_resolution = "low"\n')
    with pytest.raises(ModelConfigError) as err:
        load_models_file(path)
    problems = err.value.problems
    assert f"{path}: [models.local].endpoint: required for provider sglang" in problems[0]
    assert problems[1].startswith(f"{path}: [models.frames-omni].audio: \"in_video\" reads the video's own track")
    assert problems[2].startswith(f"{path}: [models.gpt].media_resolution: applies only to gemini")


def test_a_bad_file_fails_the_run_before_any_call(tmp_path, monkeypatch, capsys):
    started = []
    monkeypatch.setattr(orchestrate, "run_pipeline", lambda *a, **k: started.append(1))
    with OpenAITestServer(models=(SERVED,)) as server:
        for bad, key in (('colour = "red"\n', "colour"), ("rpm = \"many\"\n", "rpm")):
            path = write(tmp_path / "models.toml", entry("m", server.base_url) + bad)
            assert cli.main(["run", "--model-config", str(path), "--models", "m", "--responders", "oracle"]) == 2
            assert f"{path}: [models.m].{key}:" in capsys.readouterr().err
        path = write(tmp_path / "models.toml", '[models.m]\nprovider = "vllm"\nmodel = "qwen"\n')
        assert cli.main(["run", "--model-config", str(path), "--models", "m"]) == 2
        assert f"{path}: [models.m].endpoint: required" in capsys.readouterr().err
        assert server.chat_calls == 0 and not started


# -- routes: configured, sent on every media request, cached apart -------------------------------------

def test_configured_audio_route_is_sent_on_every_media_request_and_routes_are_cached_apart(tmp_path, media):
    with OpenAITestServer(models=(SERVED,), strict_models=True) as server:
        path = write(tmp_path / "models.toml", evaluate("in-video", "separate")
                     + entry("in-video", server.base_url, audio="in_video")
                     + entry("separate", server.base_url, audio="separate"))
        cache = CallCache(tmp_path / "calls.sqlite")
        rows = {}
        for name in ("in-video", "separate"):
            before = len(server.chat_bodies())
            runs = EvaluationResource(models=name, model_config_file=str(path)).model_runs(cache)
            (run,) = [r for r in runs if r.asked]  # --models narrows: the other declared model reads the cache only
            assert run.model == name and len(runs) == 2
            rows[name], stats = model_responses(CLIP, ITEMS, media, run)
            assert (rows[name]["status"] == "ok").all() and stats.calls_made == 9
            bodies = server.chat_bodies()[before:]
            with_media = [b for b in bodies if len(message_parts(b)) > 1]
            assert len(with_media) == 7  # clip and silenced, three items each; the media-integrity request …
            heard = lambda b: "mm_processor_kwargs" in b or "input_audio" in {p["type"] for p in message_parts(b)}  # noqa: E731
            (without_audio,) = [b for b in with_media if not heard(b)]  # an item again, its audio left out
            with_media.remove(without_audio)
            if name == "in-video":
                assert all(b["mm_processor_kwargs"] == {"use_audio_in_video": True} for b in with_media)
                assert all("input_audio" not in {p["type"] for p in message_parts(b)} for b in bodies)
            else:
                assert all("input_audio" in {p["type"] for p in message_parts(b)} for b in with_media)
                assert all("mm_processor_kwargs" not in b for b in bodies)
            config = json.loads(rows[name]["model_config"].iloc[0])
            assert config["audio"] == name.replace("-", "_") and config["model"] == SERVED
            assert set(rows[name]["model"]) == {name} and set(rows[name]["served_model"]) == {SERVED}
        assert not set(rows["in-video"]["cache_key"]) & set(rows["separate"]["cache_key"])
        calls = server.chat_calls
        for name in ("in-video", "separate"):  # each route's answers come back from its own cache entries
            (run,) = [r for r in EvaluationResource(models=name, model_config_file=str(path)).model_runs(cache)
                       if r.asked]
            again, stats = model_responses(CLIP, ITEMS, media, run)
            assert stats.calls_made == 0 and again["cached"].all()
            assert list(again["reply"]) == list(rows[name]["reply"])
        assert server.chat_calls == calls
        cache.close()


def test_defaults_are_stated_and_flags_that_do_not_apply_are_errors(tmp_path):
    spec = inline_spec("vllm/qwen", "http://127.0.0.1:8000/v1")
    assert (spec.video, spec.audio) == ("video_url", "separate")
    assert ('vllm/qwen: audio: separate (default for vllm; set audio = "in_video" for Omni models)'
            in spec.notes())
    with pytest.raises(ModelConfigError, match="model vllm/qwen .*--media-resolution applies only to gemini"):
        spec.with_flags(media_resolution="low")
    assert spec.with_flags(fps=2.0).fps == 2.0  # mapped: the server samples at 2 fps (mm_processor_kwargs)
    path = write(tmp_path / "models.toml", evaluate("mute")
                 + entry("mute", "http://127.0.0.1:8000/v1", video="none", audio="none"))
    with pytest.raises(dg.Failure, match="model mute: --fps does not apply: its route sends no video"):
        EvaluationResource(models="mute", model_config_file=str(path), fps=2.0).plan()


def test_fps_on_video_url_goes_to_the_servers_processor_bounded_by_max_frames(tmp_path, media):
    with OpenAITestServer(models=(SERVED,)) as server:
        path = write(tmp_path / "models.toml", evaluate("m")
                     + entry("m", server.base_url, audio="in_video", fps=8.0, max_frames=12))
        (run,) = EvaluationResource(models="m", model_config_file=str(path)).model_runs(None)
        rows, _ = model_responses(CLIP, ITEMS.iloc[:1], media, run)
        (body, *_) = [b for b in server.chat_bodies() if len(message_parts(b)) > 1]
    # a 3 s clip, at most 12 frames: 4 fps
    assert body["mm_processor_kwargs"] == {"use_audio_in_video": True, "fps": 4.0}
    assert set(rows.loc[rows["condition"] == "clip", "route"]) == {"video=video_url(4fps);audio=use_audio_in_video"}


# -- limits -------------------------------------------------------------------------------------------

def test_limits_per_model_with_the_environment_overriding(tmp_path, monkeypatch):
    assert default_limits("vllm", "m", "http://10.0.0.5:8000/v1")[:2] == (16, 0.0)
    assert default_limits("openai", "gpt-4o", "http://127.0.0.1:9/v1")[:2] == (16, 0.0)  # a local endpoint
    assert default_limits("openai", "gpt-4o", "https://api.openai.com/v1")[:2] == (32, 500.0)
    assert default_limits("gemini", "gemini-2.5-flash", "https://generativelanguage.googleapis.com")[:2] == (32, 1000.0)
    path = write(tmp_path / "models.toml", evaluate("a", "b") + entry("a", "http://127.0.0.1:8000/v1")
                 + entry("b", "http://127.0.0.1:8001/v1", max_concurrency=3, rpm=90))
    specs = specs_of(EvaluationResource(models="a,b", model_config_file=str(path)))
    assert [(s.max_concurrency, s.rpm) for s in specs] == [(16, 0.0), (3, 90.0)]
    monkeypatch.setenv("EPIC_LEVELS_CONCURRENCY", "5")
    monkeypatch.setenv("EPIC_LEVELS_RPM", "30")
    specs = specs_of(EvaluationResource(models="a,b", model_config_file=str(path)))
    assert [(s.max_concurrency, s.rpm) for s in specs] == [(5, 30.0), (5, 30.0)]


def test_a_default_vllm_model_keeps_many_requests_in_flight(tmp_path, media):
    items = pd.concat([ITEMS.assign(item_id=ITEMS["item_id"] + f"-{k}", prompt=ITEMS["prompt"] + f" {k}")
                       for k in range(8)], ignore_index=True)
    with OpenAITestServer(models=(SERVED,), latency_s=0.15) as server:
        path = write(tmp_path / "models.toml", evaluate(f"vllm/{SERVED}"))
        (run,) = EvaluationResource(model_config_file=str(path), endpoint=server.base_url).model_runs(None)
        assert (run.concurrency, run.rpm) == (16, 0.0)
        rows, _ = model_responses(CLIP, items, media, run)
    assert (rows["status"] == "ok").all() and len(rows) == 72
    assert server.max_in_flight >= 12


# -- the judge --------------------------------------------------------------------------------------

def test_no_judge_unless_named_and_self_judging_only_when_asked(tmp_path):
    path = write(tmp_path / "models.toml", evaluate("m") + entry("m", "http://127.0.0.1:8000/v1")
                 + entry("other", "http://127.0.0.1:8001/v1", model="judge-model"))
    cfg = {"models": "m", "model_config_file": str(path)}
    judge_of = lambda **more: qa_judge(EvaluationResource(**cfg, **more), None)  # noqa: E731
    assert judge_of() == (None, "")
    with pytest.raises(dg.Failure, match="would judge its own replies: pass --judge self"):
        judge_of(judge_model="m")
    judge, name = judge_of(judge_model="self")
    assert judge.self_judging and name == "m (judging its own replies)"
    judge, name = judge_of(judge_model="m", allow_self_judge=True)
    assert judge.self_judging
    judge, name = judge_of(judge_model="other")
    assert not judge.self_judging and name == "other"
    filed = write(tmp_path / "judged.toml", 'judge = "other"\n' + path.read_text())
    assert EvaluationResource(models="m", model_config_file=str(filed)).plan().judge.name == "other"


# -- probe --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("audio, drop, sent, verdict, rc", [
    ("in_video", False, "video=video_url;audio=use_audio_in_video", "audio: used", 0),
    ("separate", False, "video=video_url;audio=input_audio", "audio: used", 0),
    ("in_video", True, "video=video_url;audio=use_audio_in_video", "audio: IGNORED", 1),
    ("separate", True, "video=video_url;audio=input_audio", "audio: IGNORED", 1),
])
def test_probe_prints_each_route_and_says_when_the_server_ignored_the_audio(tmp_path, audio, drop, sent,
                                                                              verdict, rc):
    with OpenAITestServer(models=(SERVED,), drop_audio=drop) as server:
        path = write(tmp_path / "models.toml", entry("m", server.base_url, audio=audio))
        out = io.StringIO()
        assert main_probe(["m"], str(path), out=out) == rc
        assert server.chat_calls == 4
        base_url = server.base_url
    lines = out.getvalue().splitlines()
    assert lines[0].startswith(f"probe m (vllm/{SERVED} at {base_url}; video = video_url, audio = {audio})")
    assert [line.split()[:2] for line in lines[1:5]] == [["text", "accepted"], ["video", "accepted"],
                                                          ["video+audio", "accepted"], ["structured", "accepted"]]
    assert lines[2].endswith("video=video_url;audio=none") and lines[3].endswith(sent)
    assert lines[4].endswith("structured_output = json_schema")
    assert lines[5].strip().startswith(verdict)


def test_probe_prints_the_servers_error_and_works_for_gemini(tmp_path, monkeypatch):
    with OpenAITestServer(models=(SERVED,), reject_audio=True) as server:
        path = write(tmp_path / "models.toml", entry("m", server.base_url, audio="separate"))
        out = io.StringIO()
        assert main_probe(["m"], str(path), out=out) == 1
    line = out.getvalue().splitlines()[3]
    assert line.split()[:2] == ["video+audio", "error"] and "At most 0 audio(s) may be provided" in line
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    for drop, verdict in ((False, "audio: used"), (True, "audio: IGNORED")):
        with GeminiTestServer(audio_part_tokens=96, drop_audio=drop) as server:
            path = write(tmp_path / "g.toml", f'[models.g]\nprovider = "gemini"\nmodel = "gemini-2.5-flash"\n'
                                              f'endpoint = "{server.base_url}"\n')
            out = io.StringIO()
            main_probe(["g"], str(path), out=out)
        text = out.getvalue()
        assert text.count("accepted") == 3 and verdict in text, text


def test_self_judged_verdicts_are_marked_and_counted_in_scores():
    from epic_levels_pipeline.responses.providers.base import ProviderIdentity
    from epic_levels_pipeline.scoring.metrics.tables import scores
    from epic_levels_pipeline.scoring.verdicts import verdicts

    from ..scoring.test_judge_audit import _item, _response

    items = pd.DataFrame([_item(k) for k in range(4)])
    rows = []
    for who, endpoint in (("vllm", "http://127.0.0.1:8000/v1"), ("other", "http://127.0.0.1:9000/v1")):
        for k in range(4):  # an open reply naming no option: the rules cannot decide, the judge does
            rows.append({**_response(_item(k), who, "clip", "Answer: something shiny"), "provider": "vllm",
                         "endpoint": endpoint})
    responses = pd.DataFrame(rows)

    def judge(requests):
        return [(0, '{"choice": "A"}') for _ in requests]

    judge.identity = ProviderIdentity("vllm", "m1", "http://127.0.0.1:8000/v1")
    v = verdicts(responses, items, judge=judge)
    assert (v["scored_by"] == "judge").all()
    assert v.groupby("responder")["self_judged"].all().to_dict() == {"vllm": True, "other": False}
    top = scores(v, n_boot=10)
    top = top[(top["dataset"] == "*") & (top["level"] == "*") & (top["subtype"] == "*") & (top["format"] == "*")]
    assert top.set_index("responder")["n_self_judged"].to_dict() == {"vllm": 4, "other": 0}


def test_estimate_prints_the_wall_time_at_each_models_limits(tmp_path, monkeypatch):
    from epic_levels_pipeline.estimate import estimate, render_estimate
    from epic_levels_pipeline.settings import Paths

    from ..test_estimate import CLIPS, ROOT

    path = write(tmp_path / "models.toml", entry("slow", "http://127.0.0.1:8000/v1", max_concurrency=4, rpm=30))
    frame = estimate(Paths(ROOT), ["vllm/qwen", "slow", "gemini/gemini-2.5-flash"], clips=CLIPS[:1],
                     model_config=path, judge_share=0)
    wall = {w["model"]: w for w in frame.attrs["wall"]}
    calls = wall["vllm/qwen"]["calls"]
    assert calls == int(frame.loc[frame["model"] == "vllm/qwen", "calls"].sum()) > 0
    assert wall["vllm/qwen"]["wall_s"] == pytest.approx(calls * 2.0 / 16)       # 16 in flight, no rate limit
    assert wall["slow"]["wall_s"] == pytest.approx(calls * 60 / 30)             # the rate limit binds
    assert wall["gemini/gemini-2.5-flash"]["wall_s"] == pytest.approx(calls * max(60 / 1000, 2.0 / 32))
    text = render_estimate(frame)
    assert "wall time: " in text and "at 16 in flight, no request-rate limit, ~2 s a call (assumed)" in text
    monkeypatch.setenv("EPIC_LEVELS_CONCURRENCY", "8")  # the override a run applies, the estimate applies too
    again = estimate(Paths(ROOT), ["vllm/qwen"], clips=CLIPS[:1], judge_share=0)
    assert again.attrs["wall"][0]["wall_s"] == pytest.approx(calls * 2.0 / 8)
