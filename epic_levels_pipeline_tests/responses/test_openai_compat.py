"""OpenAICompatCaller on the real ``openai`` SDK against the local OpenAI-compatible server.

Covers: provider-qualified model names (with the deprecation of bare Gemini names), endpoints and keys
from the environment, identities in the cache key; the content parts sent for ``clip``, ``silenced``
and ``no_clip`` on both video routes (a ``video_url`` part / sampled frames with timestamps; a wav
whose RMS is the tone's or silence; text only), ``use_audio_in_video`` and ``file://`` routes;
structured output (``json_schema``) and the judge; 429/5xx/timeouts retried by ``run_calls`` with
every attempt counted; other errors and malformed bodies as error rows; tokens incl. cached tokens;
a cached re-run making 0 calls; the API key never in the request log nor in any result field.

Test media: ``media.make_test_video`` — a 4 s 160x120 testsrc clip at 10 fps with a 440 Hz tone
(RMS about 0.088), and its ``media.silence_audio`` copy.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import warnings
from pathlib import Path

import pytest

from epic_levels_pipeline.responses.cache import CallCache, cache_key
from epic_levels_pipeline.responses.calls import CallRequest, CallResult, RetryableError, run_calls_sync
from epic_levels_pipeline.responses.media import audio_rms, make_test_video, probe, silence_audio
from epic_levels_pipeline.responses.providers.base import IDENTITY_SETTING, ProviderIdentity, normalise_endpoint
from epic_levels_pipeline.responses.providers.registry import (identify, make_provider, parse_model_name,
                                                               resolve_api_key, resolve_endpoint)
from epic_levels_pipeline.responses.providers.openai_compat import (OpenAICompatCaller, OpenAICompatSettings,
                                                                    default_settings, json_schema_of,
                                                                    response_format_of, retry_after_seconds)
from epic_levels_pipeline_tests.fakes.openai_server import OpenAITestServer, message_parts, prompt_text

FAST = dict(rpm=None, base_delay=0.01, max_delay=0.05)
CANARY = "sk-canary-7f3a9c1e5b2d4e6f"
TONE_RMS = 0.088


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("media")
    clip = make_test_video(d / "P09_08_45_75.mp4", 4.0)
    return {"clip": clip, "silenced": silence_audio(clip, d / "P09_08_45_75.silenced.mp4"),
            "mute": make_test_video(d / "mute.mp4", 2.0, tone_hz=None)}


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "VLLM_BASE_URL", "VLLM_API_KEY", "SGLANG_BASE_URL",
                "SGLANG_API_KEY", "GEMINI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


def caller_for(server: OpenAITestServer, name: str = "vllm/test-model", **settings) -> OpenAICompatCaller:
    identity = identify(name, server.base_url)
    return OpenAICompatCaller(identity, default_settings(identity, **{"timeout_s": 10, **settings}), api_key=CANARY)


def request_for(caller: OpenAICompatCaller, prompt: str, condition: str, media: Path | None = None,
                start=None, end=None, responder: str = "vllm") -> CallRequest:
    settings = caller.generation_settings()
    key = cache_key(responder, caller.identity.model, prompt, str(media) if media else None, condition, settings)
    return CallRequest(key, responder, caller.identity.model, condition, prompt,
                       media_path=str(media) if media else None, start_offset_s=start, end_offset_s=end,
                       settings=settings)


def three_conditions(caller: OpenAICompatCaller, clips: dict[str, Path]) -> list[CallRequest]:
    return [request_for(caller, "Which object makes the knocking sound?", "clip", clips["clip"]),
            request_for(caller, "Which object makes the knocking sound?", "silenced", clips["silenced"]),
            request_for(caller, "Which object makes the knocking sound?", "no_clip")]


def wav_rms(b64: str, tmp_path: Path, name: str) -> float:
    path = tmp_path / f"{name}.wav"
    path.write_bytes(base64.b64decode(b64))
    return audio_rms(path)


def parts_per_condition(server: OpenAITestServer) -> dict[str, list[dict]]:
    """The parts of the chat requests received, keyed by the condition the test put in the prompt."""
    out = {}
    for body in server.chat_bodies():
        condition = prompt_text(body).split("]", 1)[0].lstrip("[")
        out[condition] = message_parts(body)
    return out


def tagged_requests(caller: OpenAICompatCaller, clips: dict[str, Path]) -> list[CallRequest]:
    return [request_for(caller, f"[{c}] Which object makes the knocking sound?", c,
                        clips[c] if c != "no_clip" else None) for c in ("clip", "silenced", "no_clip")]


# -- names, endpoints, keys, identities ------------------------------------------------------------

def test_model_names_carry_the_provider_and_bare_gemini_names_are_deprecated():
    assert parse_model_name("gemini/gemini-2.5-flash") == ("gemini", "gemini-2.5-flash")
    assert parse_model_name("vllm/Qwen/Qwen2.5-Omni-7B") == ("vllm", "Qwen/Qwen2.5-Omni-7B")
    assert parse_model_name("sglang/Qwen/Qwen2.5-VL-7B-Instruct") == ("sglang", "Qwen/Qwen2.5-VL-7B-Instruct")
    assert parse_model_name("openai/gpt-4o-mini") == ("openai", "gpt-4o-mini")
    with pytest.warns(DeprecationWarning, match="gemini/gemini-2.5-flash"):
        assert parse_model_name("gemini-2.5-flash") == ("gemini", "gemini-2.5-flash")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse_model_name("gemini/gemini-2.5-pro")  # no warning for the qualified spelling
    for bad, hint in (("Qwen/Qwen2.5-Omni-7B", "vllm/Qwen/Qwen2.5-Omni-7B"), ("gpt-4o", "PROVIDER/MODEL"),
                      ("vllm/", "no model"), ("", "empty")):
        with pytest.raises(ValueError, match=hint.replace(".", r"\.")):
            parse_model_name(bad)


def test_endpoints_and_keys_come_from_the_environment(monkeypatch):
    assert resolve_endpoint("vllm") == "http://localhost:8000/v1"
    assert resolve_endpoint("sglang") == "http://localhost:30000/v1"
    assert resolve_endpoint("openai") == "https://api.openai.com/v1"
    monkeypatch.setenv("VLLM_BASE_URL", "http://GPU-Box:8001/v1/")
    assert resolve_endpoint("vllm") == "http://gpu-box:8001/v1"
    assert resolve_endpoint("vllm", "http://127.0.0.1:9/v1") == "http://127.0.0.1:9/v1"  # --endpoint wins
    # credentials in a URL never reach an identity
    assert normalise_endpoint(f"https://user:{CANARY}@proxy.example/v1?key={CANARY}") == "https://proxy.example/v1"
    with pytest.raises(ValueError, match="http"):
        normalise_endpoint("localhost:8000")
    assert resolve_api_key("vllm") == "EMPTY"
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        resolve_api_key("openai")
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    assert resolve_api_key("openai") == CANARY and resolve_api_key("sglang") == CANARY
    monkeypatch.setenv("VLLM_API_KEY", "local")
    assert resolve_api_key("vllm") == "local"


def test_identity_separates_cache_keys_and_never_holds_the_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    a = identify("vllm/Qwen/Qwen2.5-Omni-7B", "http://127.0.0.1:8000/v1")
    b = identify("vllm/Qwen/Qwen2.5-Omni-7B", "http://10.0.0.5:8000/v1")
    c = identify("sglang/Qwen/Qwen2.5-Omni-7B", "http://127.0.0.1:8000/v1")
    assert a.cache_identity() == identify("vllm/Qwen/Qwen2.5-Omni-7B", "http://127.0.0.1:8000/v1/").cache_identity()
    assert len({a.cache_identity(), b.cache_identity(), c.cache_identity()}) == 3
    assert json.loads(a.cache_identity()) == {"provider": "vllm", "model": "Qwen/Qwen2.5-Omni-7B",
                                              "endpoint": "http://127.0.0.1:8000/v1"}
    keys = {cache_key("vllm", i.model, "q", None, "no_clip", OpenAICompatCaller(i).generation_settings())
            for i in (a, b, c)}
    assert len(keys) == 3
    caller = OpenAICompatCaller(a)
    assert CANARY not in repr(caller) and CANARY not in json.dumps(caller.generation_settings())
    assert caller.generation_settings()[IDENTITY_SETTING] == a.cache_identity()
    with pytest.raises(ValueError, match="OpenAI-compatible"):
        OpenAICompatCaller(ProviderIdentity("gemini", "gemini-2.5-flash", "https://x"))


def test_route_settings_are_checked_and_chosen_per_model():
    with pytest.raises(ValueError, match="needs video_route video_url or file_url"):
        OpenAICompatSettings(video_route="frames", audio_route="use_audio_in_video")
    with pytest.raises(ValueError, match="video_route 'gif'"):
        OpenAICompatSettings(video_route="gif")
    # the route is the provider's default whatever the model's name says: an Omni model is configured
    omni = default_settings(identify("vllm/Qwen/Qwen2.5-Omni-7B", "http://h/v1"))
    assert (omni.video_route, omni.audio_route) == ("video_url", "input_audio")
    gpt = default_settings(identify("openai/gpt-4o-mini", "http://h/v1"))
    assert (gpt.video_route, gpt.audio_route, gpt.max_tokens_field) == ("frames", "input_audio",
                                                                        "max_completion_tokens")
    vl = default_settings(identify("vllm/Qwen/Qwen2.5-VL-7B-Instruct", "http://h/v1"), audio_route="none")
    assert (vl.video_route, vl.audio_route) == ("video_url", "none")


def test_gemini_schema_becomes_json_schema():
    gemini = {"type": "OBJECT", "properties": {"choice": {"type": "STRING", "enum": ["A", "B", "none"]},
                                               "why": {"type": "STRING", "nullable": True}},
              "required": ["choice"]}
    js = json_schema_of(gemini)
    assert js == {"type": "object", "properties": {"choice": {"type": "string", "enum": ["A", "B", "none"]},
                                                   "why": {"type": ["string", "null"]}},
                  "required": ["choice"], "additionalProperties": False}
    fmt, schema = response_format_of({"response_schema": gemini})
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is False and schema == js
    fmt, _ = response_format_of({"response_schema": {**gemini, "required": ["choice", "why"]}})
    assert fmt["json_schema"]["strict"] is True
    assert response_format_of({"response_mime_type": "application/json"}) == ({"type": "json_object"}, None)
    assert response_format_of({}) == (None, None)
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_seconds({"retry-after": "soon"}) is None and retry_after_seconds({}) is None


# -- what each route sends ---------------------------------------------------------------------------

def test_video_url_route_sends_video_and_wav_per_condition(tmp_path, clips):
    with OpenAITestServer() as server:
        caller = caller_for(server, video_route="video_url", audio_route="input_audio")
        results, stats = run_calls_sync(tagged_requests(caller, clips), caller, None, **FAST)
        assert [r.status for r in results] == ["ok"] * 3 and stats.calls_made == 3
        sent = parts_per_condition(server)

    clip, silenced, no_clip = sent["clip"], sent["silenced"], sent["no_clip"]
    assert [p["type"] for p in clip] == ["video_url", "input_audio", "text"]
    assert [p["type"] for p in silenced] == ["video_url", "input_audio", "text"]
    assert [p["type"] for p in no_clip] == ["text"]
    for part, path in ((clip[0], clips["clip"]), (silenced[0], clips["silenced"])):
        url = part["video_url"]["url"]
        assert url.startswith("data:video/mp4;base64,")
        assert base64.b64decode(url.split(",", 1)[1]) == path.read_bytes()  # the whole clip, unchanged
    assert clip[1]["input_audio"]["format"] == "wav"
    assert wav_rms(clip[1]["input_audio"]["data"], tmp_path, "clip") == pytest.approx(TONE_RMS, abs=0.01)
    assert wav_rms(silenced[1]["input_audio"]["data"], tmp_path, "silenced") < 1e-4
    assert [r.route for r in results] == ["video=video_url;audio=input_audio"] * 2 + ["text"]
    assert [caller.route_for(r) for r in tagged_requests(caller, clips)] == [r.route for r in results]


def test_frames_route_sends_timestamped_frames_and_wav_per_condition(tmp_path, clips):
    with OpenAITestServer() as server:
        caller = caller_for(server, video_route="frames", frames_fps=1.0, max_frames=32)
        results, _ = run_calls_sync(tagged_requests(caller, clips), caller, None, **FAST)
        assert [r.status for r in results] == ["ok"] * 3
        sent = parts_per_condition(server)

    for condition in ("clip", "silenced"):
        parts = sent[condition]
        kinds = [p["type"] for p in parts]
        assert kinds == ["text", "image_url"] * 4 + ["input_audio", "text"], condition
        stamps = [p["text"] for p in parts[0:8:2]]
        assert stamps == ["Frame at 0.0 s:", "Frame at 1.0 s:", "Frame at 2.0 s:", "Frame at 3.0 s:"]
        for p in parts[1:8:2]:
            jpg = base64.b64decode(p["image_url"]["url"].split(",", 1)[1])
            assert p["image_url"]["url"].startswith("data:image/jpeg;base64,") and jpg[:2] == b"\xff\xd8"
    assert wav_rms(sent["clip"][8]["input_audio"]["data"], tmp_path, "c") == pytest.approx(TONE_RMS, abs=0.01)
    assert wav_rms(sent["silenced"][8]["input_audio"]["data"], tmp_path, "s") < 1e-4
    assert [p["type"] for p in sent["no_clip"]] == ["text"]
    assert results[0].route == "video=frames(4@1fps);audio=input_audio" and results[2].route == "text"


def test_frames_within_a_window_are_capped_and_stamped_from_the_clip_start(clips):
    with OpenAITestServer() as server:
        caller = caller_for(server, video_route="frames", frames_fps=4.0, max_frames=4, audio_route="none")
        req = request_for(caller, "q", "clip", clips["clip"], start=1.0, end=3.0)
        (res,), _ = run_calls_sync([req], caller, None, **FAST)
        parts = message_parts(server.chat_bodies()[0])
    # 2 s at 4 fps would be 8 frames; max_frames=4 lowers the rate to 2 fps over the whole window
    assert [p["text"] for p in parts if p["type"] == "text"][:-1] == [
        "Frame at 1.0 s:", "Frame at 1.5 s:", "Frame at 2.0 s:", "Frame at 2.5 s:"]
    assert res.route == "video=frames(4@2fps);audio=none" == caller.route_for(req)


def test_omni_route_asks_for_the_videos_own_track_and_file_url_points_at_the_file(tmp_path, clips):
    with OpenAITestServer() as server:
        caller = caller_for(server, "vllm/Qwen/Qwen2.5-Omni-7B", video_route="file_url",
                            audio_route="use_audio_in_video")
        results, _ = run_calls_sync(tagged_requests(caller, clips), caller, None, **FAST)
        sent = parts_per_condition(server)
        bodies = {prompt_text(b).split("]")[0][1:]: b for b in server.chat_bodies()}
    assert [r.status for r in results] == ["ok"] * 3
    assert [p["type"] for p in sent["silenced"]] == ["video_url", "text"]
    assert sent["silenced"][0]["video_url"]["url"] == clips["silenced"].resolve().as_uri()
    assert bodies["clip"]["mm_processor_kwargs"] == {"use_audio_in_video": True}
    assert "mm_processor_kwargs" not in bodies["no_clip"]
    assert bodies["clip"]["model"] == "Qwen/Qwen2.5-Omni-7B"
    assert results[0].route == "video=file_url;audio=use_audio_in_video"

    # a window is cut to work_dir first, and the server gets that file
    with OpenAITestServer() as server:
        caller = caller_for(server, video_route="file_url", audio_route="none", work_dir=str(tmp_path / "w"))
        (res,), _ = run_calls_sync([request_for(caller, "q", "clip", clips["clip"], 1.0, 3.0)], caller, None,
                                   **FAST)
        url = message_parts(server.chat_bodies()[0])[0]["video_url"]["url"]
    cut = Path(url.removeprefix("file://"))
    assert res.status == "ok" and cut.parent == (tmp_path / "w").resolve()
    assert probe(cut).duration_s == pytest.approx(2.0, abs=0.15)


def test_clip_without_audio_track_says_so_in_the_route(clips):
    with OpenAITestServer() as server:
        caller = caller_for(server)
        (res,), _ = run_calls_sync([request_for(caller, "q", "clip", clips["mute"])], caller, None, **FAST)
        kinds = [p["type"] for p in message_parts(server.chat_bodies()[0])]
    assert res.status == "ok" and kinds == ["video_url", "text"]
    assert res.route == "video=video_url;audio=none(no audio track)"


def test_a_windows_media_is_encoded_once_for_its_items_and_the_next_window_ahead(clips, monkeypatch):
    with OpenAITestServer() as server:
        caller = caller_for(server)
        prepared: list[tuple[str, int]] = []  # (file, requests the server had received by then)
        prepare = caller._media.prepare

        def counting(request, r):
            prepared.append((Path(request.media_path).name, len(server.chat_bodies())))
            return prepare(request, r)

        monkeypatch.setattr(caller._media, "prepare", counting)
        requests = [request_for(caller, f"[{c}] q{i}", c, clips[c]) for c in ("clip", "silenced") for i in range(12)]
        results, _ = run_calls_sync(requests, caller, None, concurrency=4, **FAST)
        bodies = server.chat_bodies()
    assert all(r.status == "ok" for r in results)
    assert sorted(name for name, _ in prepared) == sorted([clips["clip"].name, clips["silenced"].name])  # once each
    (received,) = [n for name, n in prepared if name == clips["silenced"].name]
    assert received < 12  # the silenced copy was prepared while the clip's items were being sent
    by_file = {}
    for body in bodies:  # every item of a window carries the same media parts, as a list before its prompt
        parts = body["messages"][-1]["content"]
        by_file.setdefault(prompt_text(body).split("]")[0], set()).add(json.dumps(parts[:-1]))
        assert parts[-1] == {"type": "text", "text": prompt_text(body)}
    assert {k: len(v) for k, v in by_file.items()} == {"[clip": 1, "[silenced": 1}


def test_missing_media_and_bad_offsets_are_error_rows(clips, tmp_path):
    with OpenAITestServer() as server:
        caller = caller_for(server)
        reqs = [request_for(caller, "q1", "clip", tmp_path / "gone.mp4"),
                request_for(caller, "q2", "clip", clips["clip"], 3.0, 1.0)]
        results, _ = run_calls_sync(reqs, caller, None, **FAST)
        assert server.chat_calls == 0
    assert "media file not found" in results[0].error and "invalid offsets" in results[1].error
    assert all(r.status == "error" and r.attempts == 1 for r in results)


# -- replies, tokens, structured output --------------------------------------------------------------

def test_reply_tokens_and_cached_tokens(clips):
    with OpenAITestServer(reply_fn=lambda body: "the plastic lid", cached_tokens=700) as server:
        caller = caller_for(server, temperature=0.2, max_output_tokens=64, seed=7)
        req = request_for(caller, "Which object makes the knocking sound?", "clip", clips["clip"])
        (res,), _ = run_calls_sync([req], caller, None, **FAST)
        body = server.chat_bodies()[0]
    assert isinstance(res, CallResult) and res.status == "ok" and res.reply == "the plastic lid"
    # 6 words + 1000 (video part) + 200 (audio part) in the test server's count
    assert (res.prompt_tokens, res.output_tokens, res.cached_tokens) == (1206, 3, 700)
    assert res.latency_s > 0
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.2, 64, 7)
    assert "response_format" not in body


def test_judge_sends_json_schema_and_is_cached(tmp_path):
    with OpenAITestServer(reply_fn=lambda body: '{"choice": "B"}') as server:
        cache = CallCache(tmp_path / "calls.sqlite")
        identity = identify("sglang/Qwen/Qwen2.5-VL-7B-Instruct", server.base_url)
        caller = OpenAICompatCaller(identity, default_settings(identity, timeout_s=10), cache, api_key=CANARY)
        choice, raw, res = asyncio.run(caller.judge_choice("Question ... Reply ... Candidates A B C", 3))
        assert (choice, raw, res.status) == ("B", '{"choice": "B"}', "ok")
        fmt = server.chat_bodies()[0]["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
        assert fmt["json_schema"]["schema"] == {"type": "object", "required": ["choice"],
                                                "additionalProperties": False, "properties": {
                                                    "choice": {"type": "string", "enum": ["A", "B", "C", "none"]}}}
        assert [p["type"] for p in message_parts(server.chat_bodies()[0])] == ["text"]
        again = asyncio.run(caller.judge_choice("Question ... Reply ... Candidates A B C", 3))
        assert again[0] == "B" and again[2].cached and server.chat_calls == 1
        cache.close()


def test_structured_reply_that_breaks_the_schema_is_an_error_row():
    with OpenAITestServer(reply_fn=lambda body: '{"choice": "Z"}') as server:
        caller = caller_for(server)
        req = caller.judge_request("judge this", 3)
        (res,), _ = run_calls_sync([req], caller, None, **FAST)
    assert res.status == "error" and "not one of" in res.error and res.reply == '{"choice": "Z"}'
    assert res.attempts == 1


def test_default_reply_answers_json_when_a_schema_is_asked():
    with OpenAITestServer() as server:
        caller = caller_for(server)
        (res,), _ = run_calls_sync([caller.judge_request("judge this", 4)], caller, None, **FAST)
    assert res.status == "ok" and json.loads(res.reply) == {"choice": "A"}


@pytest.mark.parametrize("kind", ["no_choices", "not_json"])
def test_malformed_bodies_are_error_rows_not_retried(kind):
    with OpenAITestServer(malformed_rate=1.0, malformed=kind) as server:
        caller = caller_for(server)
        (res,), _ = run_calls_sync([request_for(caller, "q", "no_clip")], caller, None, **FAST)
    assert res.status == "error" and "malformed response" in res.error and res.attempts == 1


def test_served_models_lists_what_the_server_serves():
    with OpenAITestServer(models=("Qwen/Qwen2.5-Omni-7B",), api_key=CANARY) as server:
        caller = caller_for(server, "vllm/Qwen/Qwen2.5-Omni-7B")
        assert asyncio.run(caller.served_models()) == ["Qwen/Qwen2.5-Omni-7B"]
        assert server.model_lists == 1
        wrong = OpenAICompatCaller(caller.identity, caller.settings, api_key="sk-wrong-key-1")
        with pytest.raises(ValueError, match="HTTP 401"):
            asyncio.run(wrong.served_models())


def test_other_http_errors_are_error_rows_with_the_servers_message():
    with OpenAITestServer(models=("served-model",), strict_models=True) as server:
        caller = caller_for(server, "vllm/not-served")
        (res,), stats = run_calls_sync([request_for(caller, "q", "no_clip")], caller, None, **FAST)
    assert res.status == "error" and res.attempts == 1 and stats.calls_made == 1
    assert "HTTP 404" in res.error and "not-served" in res.error


# -- retries, cache ----------------------------------------------------------------------------------

def test_429_and_5xx_raise_retryable_errors_with_retry_after():
    with OpenAITestServer(fault_rate=1.0, retry_after_s=0.25, seed=3) as server:
        caller = caller_for(server)
        seen = set()
        for i in range(12):
            with pytest.raises(RetryableError) as info:
                asyncio.run(caller(request_for(caller, f"q{i}", "no_clip")))
            err = info.value
            seen.add(err.status)
            assert err.retry_after == (0.25 if err.status == 429 else None)
        assert seen == {429, 500, 503}


def test_timeouts_and_refused_connections_are_retryable():
    with OpenAITestServer(latency_s=1.0) as server:
        caller = caller_for(server, timeout_s=0.2)
        with pytest.raises(RetryableError, match="Timeout") as info:
            asyncio.run(caller(request_for(caller, "q", "no_clip")))
        assert info.value.status == 0
        port = server.port
    identity = identify("vllm/test-model", f"http://127.0.0.1:{port}/v1")
    gone = OpenAICompatCaller(identity, default_settings(identity, timeout_s=2))
    with pytest.raises(RetryableError, match="Connection") as info:
        asyncio.run(gone(request_for(gone, "q", "no_clip")))
    assert info.value.status == 0


def test_faults_are_retried_by_run_calls_counting_every_attempt_and_rerun_makes_no_calls(tmp_path, clips):
    with OpenAITestServer(fault_rate=0.4, retry_after_s=0.01, seed=11) as server:
        cache = CallCache(tmp_path / "calls.sqlite")
        caller = caller_for(server)
        requests = [request_for(caller, f"[{c}] q{i}", c, clips[c] if c != "no_clip" else None)
                    for i in range(10) for c in ("clip", "silenced", "no_clip")]
        results, stats = run_calls_sync(requests, caller, cache, concurrency=4, max_retries=8, **FAST)
        assert all(r.status == "ok" for r in results)
        assert server.faults > 0 and stats.retries == server.faults
        assert stats.calls_made == server.chat_calls == len(requests) + server.faults
        assert sum(r.attempts for r in results) == server.chat_calls
        assert max(r.attempts for r in results) > 1

        before = server.chat_calls
        again, stats2 = run_calls_sync(requests, caller, cache, **FAST)
        assert server.chat_calls == before and stats2.calls_made == 0 and stats2.cache_hits == len(requests)
        assert [r.reply for r in again] == [r.reply for r in results] and all(r.cached for r in again)
        cache.close()


# -- the key stays secret ----------------------------------------------------------------------------

def test_api_key_reaches_the_server_but_no_log_or_result(tmp_path, clips, monkeypatch):
    monkeypatch.setenv("VLLM_API_KEY", CANARY)

    def reply(body):
        if "leak" in prompt_text(body):
            raise RuntimeError(f"upstream rejected key {CANARY}")
        return "ok"

    with OpenAITestServer(reply_fn=reply, api_key=CANARY) as server:
        cache = CallCache(tmp_path / "calls.sqlite")
        identity = identify("vllm/test-model", server.base_url)
        caller = OpenAICompatCaller(identity, default_settings(identity, timeout_s=10))  # key from the env
        reqs = three_conditions(caller, clips) + [caller.judge_request("judge", 2),
                                                  request_for(caller, "please leak", "no_clip")]
        results, _ = run_calls_sync(reqs, caller, cache, max_retries=1, **FAST)
        assert server.received_key(CANARY) and not server.received_key("EMPTY")
        assert [r.status for r in results] == ["ok"] * 3 + ["error", "error"]  # "ok" is not JSON for the judge
        log = json.dumps(server.requests)
        assert CANARY not in log and "authorization" not in log.lower()

        wrong = OpenAICompatCaller(identity, default_settings(identity, timeout_s=10), api_key="sk-wrong-key-1")
        (denied,), _ = run_calls_sync([request_for(wrong, "q", "no_clip")], wrong, None, **FAST)
        assert denied.status == "error" and "HTTP 401" in denied.error
        cache.close()
    assert "***" in results[4].error and "upstream rejected key" in results[4].error
    for res in [*results, denied]:
        assert CANARY not in json.dumps(dataclasses.asdict(res))
    assert CANARY not in (tmp_path / "calls.sqlite").read_bytes().decode("latin-1")


# -- the existing runner and responses stage drive the provider unchanged -----------------------------

def test_model_responses_drive_the_provider_for_every_condition_and_rerun_makes_no_calls(tmp_path, clips):
    import pandas as pd

    from epic_levels_pipeline.annotations.clip_keys import Clip
    from epic_levels_pipeline.responses.media_sources import sha256_file
    from epic_levels_pipeline.responses.runner import ClipMediaInfo, ModelRun, model_responses

    clip = Clip("epic_sounds", "P09_08", 45.0, 75.0)
    items = pd.DataFrame([{"item_id": f"i{n}", "question_id": f"q{n}", "clip_key": clip.key, "dataset": clip.dataset,
                           "level": "L2", "subtype": "moment_object", "distractor_strategy": "same_clip",
                           "format": "mcq", "base_format": "mcq", "prompt": f"[{n}] What is handled?",
                           "audio_annotated": True}
                          for n in range(2)])
    media = ClipMediaInfo("ready", "", str(clips["clip"]), str(clips["silenced"]), sha256_file(clips["clip"]),
                          sha256_file(clips["silenced"]))
    with OpenAITestServer(api_key=CANARY) as server:
        cache = CallCache(tmp_path / "calls.sqlite")
        caller = caller_for(server, video_route="frames")
        run = ModelRun("vllm", caller.identity.model, caller, cache, rpm=100000, concurrency=4,
                       settings=caller.generation_settings())
        rows, stats = model_responses(clip, items, media, run)
        # six answers, and the media-integrity request (the first clip item again, without its audio)
        assert len(rows) == 6 and (rows["status"] == "ok").all() and stats.calls_made == 6 and server.chat_calls == 7
        kinds = sorted(sorted({p["type"] for p in message_parts(b)}) for b in server.chat_bodies())
        assert kinds == [["image_url", "input_audio", "text"]] * 4 + [["image_url", "text"]] + [["text"]] * 2
        assert not rows["audio_ignored"].any() and not rows["video_ignored"].any()
        again, stats2 = model_responses(clip, items, media, run)
        assert server.chat_calls == 7 and stats2.calls_made == 0 and again["cached"].all()
        assert CANARY not in rows.to_json() and CANARY not in json.dumps(server.requests)
        cache.close()
