"""Against a real OpenAI-compatible server: llama.cpp's (``llama-cpp-python[server]``, SmolLM2-135M-Instruct; the
``llama_server`` fixture, which skips saying why without the ``llama`` extra).

What it refuses, with the messages the local fake server emulates (a list of content parts; ``json_schema``
response_format), and how the client copes: text as a plain string, the ``json_object`` form constraining the reply
to the schema, a rejected form stopped after a few calls with one message naming the setting, and
``epic-levels probe`` naming the form to set.
"""

from __future__ import annotations

import io
import json

import openai
import pytest

from epic_levels_pipeline.cli.probe import main_probe
from epic_levels_pipeline.responses.cache import cache_key
from epic_levels_pipeline.responses.calls import STOP_AFTER, CallRequest, Rejections, run_calls_sync
from epic_levels_pipeline.responses.models_config import load_models_file
from epic_levels_pipeline.responses.providers.registry import provider_for
from epic_levels_pipeline.responses.providers.openai_wire import short_message, status_message
from epic_levels_pipeline.responses.providers.structured import parse_choice

from ..fakes.llama_server import MODEL
from ..fakes.openai_server import LLAMA_CPP_LIST_CONTENT, LLAMA_CPP_RESPONSE_FORMAT

JUDGE = ("Is an apple a fruit?\nCandidates:\nA. yes\nB. no\n"
         'Reply {"choice": "A"} or {"choice": "B"}, or {"choice": "none"} when you cannot tell.')


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    for var in ("VLLM_API_KEY", "VLLM_BASE_URL", "EPIC_LEVELS_RPM", "EPIC_LEVELS_CONCURRENCY"):
        monkeypatch.delenv(var, raising=False)
    Rejections.forget()
    yield
    Rejections.forget()


def models_file(tmp_path, endpoint: str, **keys):
    lines = ["[models.smol]", 'provider = "vllm"', f'model = "{MODEL}"', f'endpoint = "{endpoint}"', 'video = "none"',
             'audio = "none"', *[f"{k} = {json.dumps(v)}" for k, v in keys.items()]]
    path = tmp_path / "models.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_llama_cpp_refuses_a_list_of_parts_and_json_schema_with_the_messages_the_fake_server_sends(llama_server):
    client = openai.OpenAI(base_url=llama_server.base_url, api_key="EMPTY", max_retries=0)
    said = {}
    for name, body in (("parts", {"messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]}),
                       ("json_schema", {"messages": [{"role": "user", "content": "Hi"}], "response_format": {
                           "type": "json_schema", "json_schema": {"name": "r", "schema": {"type": "object"}}}})):
        with pytest.raises(openai.InternalServerError) as info:
            client.chat.completions.create(model=MODEL, max_tokens=4, **body)
        said[name] = status_message(info.value)
    print(f"llama.cpp's refusals: {said}")
    assert said["parts"] == LLAMA_CPP_LIST_CONTENT
    assert short_message(said["json_schema"]) == short_message(LLAMA_CPP_RESPONSE_FORMAT)  # its traceback aside
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    answer = client.chat.completions.create(model=MODEL, max_tokens=32, messages=[{"role": "user", "content": "Hi"}],
                                            response_format={"type": "json_object", "schema": schema})
    assert set(json.loads(answer.choices[0].message.content)) == {"ok"}  # a plain string, and the schema held


def test_the_client_answers_text_and_judges_through_json_object_and_stops_json_schema(tmp_path, llama_server, capsys):
    caller = provider_for(load_models_file(models_file(tmp_path, llama_server.base_url)).models["smol"])
    settings = caller.generation_settings()
    questions = [CallRequest(cache_key("vllm", MODEL, p, None, "no_clip", settings), "vllm", MODEL, "no_clip", p,
                             settings=settings)
                 for p in ("Which object makes a knocking sound? A. a pan B. a knife. Answer with a letter.",
                           "What is the person doing in the kitchen? Answer in a few words.")]
    judges = [caller.judge_request(f"{JUDGE} ({n})", 2) for n in range(30)]
    results, stats = run_calls_sync(questions + judges, caller, None, rpm=None, concurrency=4, base_delay=0.01)
    assert [r.status for r in results[:2]] == ["ok", "ok"] and all(r.reply for r in results[:2])
    assert all(r.status == "error" for r in results[2:])
    assert stats.calls_made <= 2 + 4 + STOP_AFTER  # not 30 judge requests x 6 attempts
    assert results[-1].error.startswith("model smol: the server rejects json_schema response_format (HTTP 500:")
    assert results[-1].error.endswith('set structured_output = "json_object" in [models.smol] (or "none"; '
                                      '`epic-levels probe smol` says which it accepts)')
    assert capsys.readouterr().err.count("warning: model smol: the server rejects json_schema") == 1

    caller = provider_for(load_models_file(models_file(tmp_path, llama_server.base_url,
                                                       structured_output="json_object")).models["smol"])
    results, stats = run_calls_sync([caller.judge_request(f"{JUDGE} ({n})", 2) for n in range(4)], caller, None,
                                    rpm=None, concurrency=4)
    assert stats.calls_made == 4 and all(r.status == "ok" for r in results), [r.error for r in results]
    assert all(parse_choice(r.reply, 2) in ("A", "B", None) for r in results)  # the schema holds the reply to it


def test_probe_says_which_structured_output_llama_cpp_accepts(tmp_path, llama_server):
    out = io.StringIO()
    assert main_probe(["smol"], str(models_file(tmp_path, llama_server.base_url)), out=out) == 1
    print(out.getvalue())
    lines = out.getvalue().splitlines()
    assert lines[1].split()[:2] == ["text", "accepted"]
    assert lines[-1].split()[:2] == ["structured", "error"] and "json_schema rejected (HTTP 500" in lines[-1]
    assert lines[-1].endswith('json_object accepted: set structured_output = "json_object" in [models.smol]')
