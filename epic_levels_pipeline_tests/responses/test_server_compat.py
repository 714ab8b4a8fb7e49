"""What real OpenAI-compatible servers need, against the local fake server (llama.cpp's refusals emulated with its
own messages; ``test_llama_server.py`` checks them against the real server):

text-only requests carry the prompt as a plain string (parts only with media); the structured-output forms
(``json_schema``, ``json_object`` with the schema stated after the prompt, ``none`` with the JSON taken out of the
text), every reply checked against the schema; a form the server keeps rejecting stops after a few calls, its rows
``error`` with one message naming the setting to change, printed once; transient faults and forms the server
accepted never stop; ``structured_output`` in the models file and ``epic-levels probe`` naming the form to set.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from epic_levels_pipeline.captions.schema import caption_json_schema
from epic_levels_pipeline.cli.probe import main_probe
from epic_levels_pipeline.responses.cache import CallCache, cache_key
from epic_levels_pipeline.responses.calls import STOP_AFTER, CallRequest, Rejections, run_calls_sync
from epic_levels_pipeline.responses.media import make_test_video
from epic_levels_pipeline.responses.models_config import ModelConfigError, load_models_file
from epic_levels_pipeline.responses.providers.registry import provider_for
from epic_levels_pipeline.responses.providers.structured import parse_choice

from ..fakes.openai_server import LLAMA_CPP_LIST_CONTENT, OpenAITestServer, default_reply, prompt_text

FAST = dict(rpm=None, base_delay=0.01, max_delay=0.05)
JUDGE = 'Is an apple a fruit?\nCandidates:\nA. yes\nB. no\nReply {"choice": "A"} or {"choice": "B"}.'


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    for var in ("VLLM_API_KEY", "VLLM_BASE_URL", "OPENAI_API_KEY", "EPIC_LEVELS_RPM", "EPIC_LEVELS_CONCURRENCY"):
        monkeypatch.delenv(var, raising=False)
    Rejections.forget()
    yield
    Rejections.forget()


@pytest.fixture(scope="module")
def clip(tmp_path_factory) -> Path:
    return make_test_video(tmp_path_factory.mktemp("media") / "clip.mp4", 2.0)


def caller_of(tmp_path: Path, server: OpenAITestServer, name: str = "smol", **keys):
    lines = [f"[models.{name}]", 'provider = "vllm"', 'model = "test-model"', f'endpoint = "{server.base_url}"']
    lines += [f"{k} = {json.dumps(v)}" for k, v in keys.items()]
    path = tmp_path / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return provider_for(load_models_file(path).models[name]), path


def question(caller, prompt: str, media: Path | None = None) -> CallRequest:
    settings = caller.generation_settings()
    condition = "clip" if media else "no_clip"
    return CallRequest(cache_key("vllm", caller.model, prompt, str(media) if media else None, condition, settings),
                       "vllm", caller.model, condition, prompt, media_path=str(media) if media else None,
                       settings=settings)


def llama_like(**kw) -> OpenAITestServer:
    return OpenAITestServer(string_content_only=True, response_formats=("text", "json_object"), **kw)


def test_text_only_requests_send_the_prompt_as_a_string_and_media_requests_a_list_of_parts(tmp_path, clip):
    with OpenAITestServer() as server:
        caller, _ = caller_of(tmp_path, server)
        results, _ = run_calls_sync([question(caller, "[t] q"), question(caller, "[m] q", clip),
                                     caller.judge_request(JUDGE, 2)], caller, None, **FAST)
        assert [r.status for r in results] == ["ok"] * 3
        bodies = {prompt_text(b)[:3]: b for b in server.chat_bodies()}
    text, media, judge = bodies["[t]"], bodies["[m]"], bodies["Is "]
    assert text["messages"] == [{"role": "user", "content": "[t] q"}]
    assert isinstance(judge["messages"][-1]["content"], str)
    parts = media["messages"][-1]["content"]
    assert [p["type"] for p in parts] == ["video_url", "input_audio", "text"] and parts[-1]["text"] == "[m] q"


def test_llama_cpp_like_server_answers_text_as_a_string_where_a_list_of_parts_is_refused(tmp_path):
    with llama_like() as server:
        caller, _ = caller_of(tmp_path, server)
        (result,), _ = run_calls_sync([question(caller, "q")], caller, None, **FAST)
        assert result.status == "ok" and server.rejected == 0


@pytest.mark.parametrize("form", ["json_schema", "json_object", "none"])
def test_each_structured_output_form_asks_as_configured_and_checks_the_reply(tmp_path, form):
    fenced = form == "none"

    def reply(body):  # a model following the schema it is given, in a code fence when nothing constrains it
        text = default_reply(body)
        return f"Sure:\n```json\n{text}\n```" if fenced else text

    with OpenAITestServer(reply) as server:
        caller, _ = caller_of(tmp_path, server, structured_output=form)
        (result,), _ = run_calls_sync([caller.judge_request(JUDGE, 2)], caller, None, **FAST)
        (body,) = server.chat_bodies()
    assert result.status == "ok", result.error
    assert parse_choice(result.reply, 2) == "A"
    schema = {"type": "object", "properties": {"choice": {"type": "string", "enum": ["A", "B", "none"]}},
              "required": ["choice"], "additionalProperties": False}
    stated = "matching this JSON schema: " + json.dumps(schema, separators=(",", ":"))
    if form == "json_schema":
        assert body["response_format"]["type"] == "json_schema" and stated not in prompt_text(body)
    else:
        assert prompt_text(body).startswith(JUDGE) and prompt_text(body).endswith(stated)
        assert body.get("response_format") == ({"type": "json_object", "schema": schema} if form == "json_object"
                                               else None)
    assert (form == "json_schema") == ("structured_output" not in caller.generation_settings())


def test_a_reply_not_matching_the_schema_is_an_error_row_in_every_form(tmp_path):
    for form in ("json_object", "none"):
        with OpenAITestServer(lambda body: '{"answer": "A"}') as server:
            caller, _ = caller_of(tmp_path, server, structured_output=form)
            (result,), _ = run_calls_sync([caller.judge_request(JUDGE, 2)], caller, None, **FAST)
        assert result.status == "error" and "lacks required key 'choice'" in result.error
        assert result.reply == '{"answer": "A"}'


def test_a_schema_the_prompt_states_already_is_not_stated_twice(tmp_path):
    schema = caption_json_schema()
    prompt = "Describe it.\nJSON schema: " + json.dumps(schema, separators=(",", ":"))
    with OpenAITestServer(lambda body: "{}") as server:
        caller, _ = caller_of(tmp_path, server, structured_output="json_object")
        settings = {**caller.generation_settings(), "response_mime_type": "application/json", "json_schema": schema}
        run_calls_sync([CallRequest("k", "vllm", "test-model", "no_clip", prompt, settings=settings)], caller, None,
                       **FAST)
        (body,) = server.chat_bodies()
    assert body["messages"][-1]["content"] == prompt


def test_a_rejected_form_stops_after_a_few_calls_with_one_message_naming_the_setting(tmp_path, clip, capsys):
    with llama_like() as server:
        caller, path = caller_of(tmp_path, server)
        cache = CallCache(tmp_path / "calls.sqlite")
        judges = [caller.judge_request(f"{JUDGE} ({n})", 2) for n in range(40)]
        questions = [question(caller, f"q{n}") for n in range(10)]
        results, stats = run_calls_sync(judges + questions, caller, cache, concurrency=4, **FAST)
        # the judge's form: at most the calls in flight when it stopped, plus the few that stopped it
        judged = [b for b in server.chat_bodies() if "response_format" in b]
        assert len(judged) <= 4 + STOP_AFTER and stats.calls_made == server.chat_calls
        stopped = results[:40]
        assert all(r.status == "error" for r in stopped)
        message = stopped[-1].error
        assert message.startswith("model smol: the server rejects json_schema response_format (HTTP 500: 1 validation "
                                  "error:") and "'msg': \"Input should be 'text' or 'json_object'\"" in message
        assert message.endswith('set structured_output = "json_object" in [models.smol] (or "none"; '
                                '`epic-levels probe smol` says which it accepts)')
        assert "File " not in message  # the server's traceback left out
        assert sum(r.error == message for r in stopped) >= 40 - (4 + STOP_AFTER)
        assert all(r.status == "ok" for r in results[40:])  # text questions are another form: answered
        assert capsys.readouterr().err.count("warning: model smol: the server rejects json_schema") == 1
        # the rows are persisted as errors (called again on a later run), and this process sends the form no more
        assert cache.get(judges[-1].cache_key).status == "error"
        calls = server.chat_calls
        again, stats = run_calls_sync(judges, caller, cache, **FAST)
        assert server.chat_calls == calls and stats.calls_made == 0 and all(r.error == message for r in again)
        # the same model under another structured_output: accepted
        fixed, _ = caller_of(tmp_path, server, structured_output="json_object")
        results, _ = run_calls_sync([fixed.judge_request(JUDGE, 2)], fixed, cache, **FAST)
        assert results[0].status == "ok" and parse_choice(results[0].reply, 2) == "A"
        # media requests are a form of their own: refused as a list of parts, stopped with the media setting named
        media, _ = run_calls_sync([question(caller, f"m{n}", clip) for n in range(12)], caller, cache,
                                  concurrency=2, **FAST)
        cache.close()
    assert all(r.status == "error" for r in media)
    assert media[-1].error == (f"model smol: the server rejects requests with media (video_url video, input_audio "
                               f"audio; HTTP 500: {LLAMA_CPP_LIST_CONTENT}): check video and audio in [models.smol] "
                               "(`epic-levels probe smol` says which routes it accepts)")


def test_transient_faults_and_accepted_forms_never_stop(tmp_path):
    with OpenAITestServer(fault_rate=1.0, seed=5) as server:  # 429, 500 and 503, never an answer
        caller, _ = caller_of(tmp_path, server)
        server.fault_rate = 0.0
        run_calls_sync([question(caller, "first")], caller, None, **FAST)  # the text form accepted once
        server.fault_rate = 1.0
        results, stats = run_calls_sync([question(caller, f"q{n}") for n in range(6)], caller, None,
                                        max_retries=3, **FAST)
    assert stats.calls_made == 6 * 4 and all(r.error.startswith("gave up after 4 attempts") for r in results)
    # a busy or restarting server (408, 429, 502-504, no answer) never counts; the same rejection in a row does
    rejections = Rejections("scope", lambda request: "text", lambda form, status, message: f"{form} {status}")
    request = CallRequest("k", "vllm", "m", "no_clip", "q")
    for status in (0, 408, 429, 502, 503, 504) * 5:
        rejections.rejected(request, status, "busy")
    assert rejections.stopped(request) is None
    for message in ("bad", "bad", "worse", "bad", "bad"):
        rejections.rejected(request, 400, message)
    assert rejections.stopped(request) is None  # never three of the same in a row
    rejections.rejected(request, 400, "bad")
    assert rejections.stopped(request) == "text 400"


def test_structured_output_in_the_models_file(tmp_path):
    path = tmp_path / "models.toml"
    path.write_text('[models.a]\nprovider = "vllm"\nmodel = "m"\nendpoint = "http://127.0.0.1:1/v1"\n'
                    'structured_output = "json_object"\n'
                    '[models.b]\nprovider = "vllm"\nmodel = "m"\nendpoint = "http://127.0.0.1:1/v1"\n')
    models = load_models_file(path).models
    assert models["a"].structured_output == "json_object" and models["b"].structured_output == "json_schema"
    assert models["a"].cache_config()["structured_output"] == "json_object"
    assert "structured_output" not in models["b"].cache_config()  # the default: existing cache keys hold
    path.write_text('[models.g]\nprovider = "gemini"\nmodel = "gemini-2.5-flash"\nstructured_output = "none"\n'
                    '[models.x]\nprovider = "vllm"\nmodel = "m"\nendpoint = "http://127.0.0.1:1/v1"\n'
                    'structured_output = "grammar"\n')
    with pytest.raises(ModelConfigError) as info:
        load_models_file(path)
    assert f"{path}: [models.g].structured_output: applies to openai, vllm and sglang" in str(info.value)
    assert f"{path}: [models.x].structured_output: must be 'json_schema', 'json_object' or 'none'" in str(info.value)


def test_probe_names_the_structured_output_the_server_accepts(tmp_path):
    with llama_like() as server:
        _, path = caller_of(tmp_path, server, video="none")
        out = io.StringIO()
        assert main_probe(["smol"], str(path), out=out) == 1
        structured = out.getvalue().splitlines()[-1]
        assert structured.split()[:2] == ["structured", "error"]
        assert "json_schema rejected (HTTP 500: 1 validation error:" in structured and "File " not in structured
        assert structured.endswith('json_object accepted: set structured_output = "json_object" in [models.smol]')
        _, path = caller_of(tmp_path, server, video="none", structured_output="json_object")
        out = io.StringIO()
        assert main_probe(["smol"], str(path), out=out) == 0
        structured = out.getvalue().splitlines()[-1]
        assert structured.split()[:2] == ["structured", "accepted"]
        assert structured.endswith("structured_output = json_object")
    with OpenAITestServer(response_formats=("text",)) as server:  # neither json form: the prompt states the schema
        _, path = caller_of(tmp_path, server, video="none")
        out = io.StringIO()
        main_probe(["smol"], str(path), out=out)
    assert 'json_object rejected' in out.getvalue() and out.getvalue().rstrip().endswith(
        'none accepted: set structured_output = "none" in [models.smol]')
