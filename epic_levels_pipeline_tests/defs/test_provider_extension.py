"""A provider is one module: two providers defined in this test module alone register and answer a bundled clip
against the local OpenAI-compatible server, no other file changed.

* ``localecho`` is an OpenAI-compatible server of its own (as SGLang's module is): its facts subclass
  :class:`OpenAICompatFacts` with its own key variable, default routes (frames + separate audio), price, limits
  and caller settings (the reply's bound sent as ``max_completion_tokens``).
* ``textonly`` is an entirely new provider: its facts subclass :class:`ProviderFacts` directly, its caller is a
  new class on the ``openai`` SDK that sends the prompt alone (it takes no routes), its endpoint comes from its own
  variable (``TEXTONLY_BASE_URL``) for the inline name ``textonly/echo-2``.

Both are registered by a fixture (and forgotten after it) and declared in ``models.toml`` (``evaluate = [...]``).
The plan resolves them and the runner asks them one clip's items (the default run); the whole graph answers the
clip ``epic_sounds__P09_08__45-75`` through ``run_pipeline`` (e2e, as every whole-graph run against a model server):
their rows are in ``responses``, ``verdicts``, ``scores`` and ``caption_responses`` under their NAMEs and providers.
"""

import time
from importlib.metadata import EntryPoint

import pandas as pd
import pytest
from openai import AsyncOpenAI

from epic_levels_pipeline.annotations.clips import Clip
from epic_levels_pipeline.captions.models import caption_settings
from epic_levels_pipeline.orchestration.local import run_pipeline
from epic_levels_pipeline.plan import RunFlags, model_problems, model_runs, resolve_plan
from epic_levels_pipeline.responses.cache import CallCache
from epic_levels_pipeline.responses.calls import CallResult
from epic_levels_pipeline.responses.media import make_test_video, sha256_file, silence_audio
from epic_levels_pipeline.responses.models_config import ModelConfigError, load_models_file
from epic_levels_pipeline.responses.pricing import media_rates, price_table_with
from epic_levels_pipeline.responses.providers import registry
from epic_levels_pipeline.responses.providers.base import identity_of, with_identity
from epic_levels_pipeline.responses.providers.openai_compat import OpenAICompatCaller, OpenAICompatFacts
from epic_levels_pipeline.responses.providers.rates import Price
from epic_levels_pipeline.responses.runner import ClipMediaInfo, model_responses
from epic_levels_pipeline.scoring.verdicts import verdicts
from epic_levels_pipeline.storage.views import query

from ..conftest import declare_models
from ..fakes.openai_server import OpenAITestServer, default_reply, message_parts, prompt_text
from .conftest import QUIET
from .test_model_pipeline import scripted_answer

CLIP = "epic_sounds__P09_08__45-75"
KEY = "sk-localecho-7f1c2a"


class LocalEchoFacts(OpenAICompatFacts):
    name = "localecho"
    endpoint_env = "LOCALECHO_BASE_URL"
    default_endpoint = "http://localhost:8765/v1"
    key_env = ("LOCALECHO_API_KEY",)
    default_routes = ("frames", "separate")
    hosted_rpm = {"*": 60}
    prices = {"echo-1": Price(1.25, 5.0)}
    settings_defaults = {"max_tokens_field": "max_completion_tokens"}


class TextOnlyCaller:
    """A provider's caller written from nothing: the prompt alone, through the ``openai`` SDK."""

    provider = "textonly"

    def __init__(self, spec, api_key: str):
        self.model, self.endpoint, self._key = spec.model, spec.endpoint, api_key

    def generation_settings(self) -> dict:
        return with_identity({"temperature": 0.0}, identity_of(self))

    async def __call__(self, request) -> CallResult:
        settings = request.settings or {}
        body = {"model": self.model, "temperature": 0.0,
                "messages": [{"role": "user", "content": request.prompt}]}
        if settings.get("json_schema"):
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": settings.get("response_schema_name", "reply"), "schema": settings["json_schema"]}}
        started = time.monotonic()
        async with AsyncOpenAI(base_url=self.endpoint, api_key=self._key, max_retries=2) as client:
            reply = await client.chat.completions.create(**body)
        return CallResult(request.cache_key, reply.choices[0].message.content, "ok",
                          prompt_tokens=reply.usage.prompt_tokens, output_tokens=reply.usage.completion_tokens,
                          latency_s=time.monotonic() - started, route="text")


class TextOnlyFacts(registry.ProviderFacts):
    name = "textonly"
    endpoint_env = "TEXTONLY_BASE_URL"
    default_endpoint = "http://localhost:8766/v1"
    key_env = ("TEXTONLY_API_KEY",)
    needs_key = False
    default_routes = ("none", "none")
    takes = frozenset()

    def caller(self, spec, cache, api_key):
        return TextOnlyCaller(spec, api_key)


@pytest.fixture
def providers():
    """The two providers, registered for the test and forgotten after it."""
    facts = [registry.register(LocalEchoFacts()), registry.register(TextOnlyFacts())]
    yield facts
    for f in facts:
        registry.unregister(f.name)


def reply(body: dict) -> str:
    return default_reply(body) if "response_format" in body else scripted_answer(prompt_text(body))


def declare(root, base_url: str):
    return declare_models(root, "mine", "textonly/echo-2", tables=(
        f'[models.mine]\nprovider = "localecho"\nmodel = "echo-1"\nendpoint = "{base_url}"\n'))


def test_providers_defined_here_answer_a_clip_through_the_plan_and_the_runner(tmp_path, providers, offline_bank,
                                                                              monkeypatch):
    clip = Clip.from_key(CLIP)
    items = offline_bank["items"]
    items = items[items["clip_key"] == CLIP].groupby("format").head(1)  # one item of each format
    video = make_test_video(tmp_path / "clip.mp4", 3.0)
    silenced = silence_audio(video, tmp_path / "clip.silenced.mp4")
    media = ClipMediaInfo("ready", "", str(video), str(silenced), sha256_file(video), sha256_file(silenced))
    monkeypatch.setenv("LOCALECHO_API_KEY", KEY)
    with OpenAITestServer(reply, models=("echo-1", "echo-2"), api_key=KEY, strict_models=True) as server:
        base_url = server.base_url
        env = {"LOCALECHO_API_KEY": KEY, "TEXTONLY_BASE_URL": base_url, "TEXTONLY_API_KEY": KEY}
        declare(tmp_path, base_url)
        plan = resolve_plan(tmp_path, RunFlags(), env)
        mine, plain = (entry.spec for entry in plan.models)
        # the registry's facts are what the models file resolves with
        assert (mine.video, mine.audio, mine.api_key_env, mine.local) == ("frames", "separate", ("LOCALECHO_API_KEY",), True)
        assert (mine.max_concurrency, mine.rpm) == (16, 0.0)  # a loopback endpoint: a local server's limits
        assert {"mine: video: frames (default for localecho)", "mine: audio: separate (default for localecho)",
                "mine: rpm: no limit (default for a local localecho server)"} <= set(plan.notes)
        assert (plain.provider, plain.endpoint, plain.video, plain.audio) == ("textonly", base_url, "none", "none")
        assert media_rates(mine).frame_tokens and price_table_with(None)["echo-1"] == Price(1.25, 5.0)
        assert model_problems(plan, env) == []  # keys found, endpoints answer (the served model's name checked)

        cache = CallCache(tmp_path / "calls.sqlite")
        runs = model_runs(plan, cache, env)
        assert [(r.name, r.model, type(r.caller)) for r in runs] == [
            ("localecho", "mine", OpenAICompatCaller), ("textonly", "textonly/echo-2", TextOnlyCaller)]
        assert caption_settings(runs[0])["json_schema"] == caption_settings(runs[1])["json_schema"]
        rows = pd.concat([model_responses(clip, items, media, run)[0] for run in runs], ignore_index=True)
        cache.close()
        assert server.received_key(KEY) and server.rejected == 0
    assert (rows["status"] == "ok").all(), rows.loc[rows["status"] != "ok", "error"].head()
    assert set(zip(rows["responder"], rows["provider"], rows["endpoint"])) == {
        ("localecho", "localecho", base_url), ("textonly", "textonly", base_url)}
    routes = rows.groupby(["model", "condition"])["route"].unique().to_dict()
    assert list(routes[("mine", "no_clip")]) == ["text"] and list(routes[("mine", "clip")]) == [
        "video=frames(3@1fps);audio=input_audio"]
    assert all(list(r) == ["text"] for (model, _), r in routes.items() if model == "textonly/echo-2")
    bodies = server.chat_bodies()
    assert all(any(p.get("type") == "image_url" for p in message_parts(b)) == (b["model"] == "echo-1" and isinstance(
        b["messages"][-1]["content"], list)) for b in bodies)  # frames: localecho's media requests only
    assert all(("max_completion_tokens" in b) == (b["model"] == "echo-1") for b in bodies)
    judged = verdicts(rows, items)
    assert len(judged) == len(rows) and (judged["scored_by"] == "rule").any()


@pytest.mark.e2e
def test_providers_defined_here_answer_a_clip_through_the_whole_graph(graph_copy, providers, monkeypatch):
    project = graph_copy.project
    make_test_video(project.media / "epic_sounds" / "P09_08.mp4", 80.0)
    monkeypatch.setenv("LOCALECHO_API_KEY", KEY)
    monkeypatch.setenv("TEXTONLY_API_KEY", KEY)
    monkeypatch.setenv("EPIC_LEVELS_RESPONDERS", "oracle")
    with OpenAITestServer(reply, models=("echo-1", "echo-2"), api_key=KEY) as server:
        base_url = server.base_url
        monkeypatch.setenv("TEXTONLY_BASE_URL", base_url)
        declare(project.root, base_url)
        # in this process, as `epic-levels run` runs the graph (a step in another process would need the entry point)
        report = run_pipeline(project, clip_keys=[CLIP], instance=graph_copy.instance, run_config=QUIET,
                              log=lambda *_: None, step_processes=False)
        assert not report.failed, report.failed
        assert server.received_key(KEY) and server.rejected == 0
        bodies = server.chat_bodies()

    responses = query(project.warehouse, f"select * from responses where clip_key = '{CLIP}' and provider <> 'offline'")
    assert set(zip(responses["responder"], responses["model"], responses["served_model"], responses["endpoint"])) == {
        ("localecho", "mine", "echo-1", base_url), ("textonly", "textonly/echo-2", "echo-2", base_url)}
    assert (responses["status"] == "ok").all(), responses.loc[responses["status"] != "ok", "error"].head()
    routes = responses.groupby(["model", "condition"])["route"].unique().to_dict()
    assert set(routes) == {(m, c) for m in ("mine", "textonly/echo-2") for c in ("clip", "no_clip", "silenced")}
    assert list(routes[("mine", "no_clip")]) == ["text"] and all(
        r.startswith("video=frames(") and r.endswith(";audio=input_audio") for r in routes[("mine", "clip")])
    assert all(list(routes[("textonly/echo-2", c)]) == ["text"] for c in ("clip", "no_clip", "silenced"))
    framed = [b for b in bodies if any(p.get("type") == "image_url" for p in message_parts(b))]
    assert framed and all(b["model"] == "echo-1" for b in framed)  # only localecho sends media

    judged = query(project.warehouse, f"select * from verdicts where clip_key = '{CLIP}' and responder in ('localecho', 'textonly')")
    assert set(judged["model"]) == {"mine", "textonly/echo-2"} and len(judged) == len(responses)
    assert (judged["scored_by"] == "rule").any()
    scores = query(project.warehouse, "select * from scores where responder in ('localecho', 'textonly')")
    assert (scores.groupby("model")["n"].sum() > 0).to_dict() == {"mine": True, "textonly/echo-2": True}
    captions = query(project.warehouse, f"select * from caption_responses where clip_key = '{CLIP}' and responder in ('localecho', 'textonly')")
    assert set(captions["model"]) == {"mine", "textonly/echo-2"} and (captions["status"] == "ok").all()
    assert {b["model"] for b in bodies if "response_format" in b} == {"echo-1", "echo-2"}  # the captions' schema


class ViaEntryPoint(TextOnlyFacts):
    name = "viaentry"


def test_a_provider_name_is_checked_against_the_registry(tmp_path, providers, monkeypatch):
    path = declare_models(tmp_path, "x", tables='[models.x]\nprovider = "localech"\nmodel = "m"\n')
    with pytest.raises(ModelConfigError) as info:
        load_models_file(path)
    assert str(info.value) == (f"{path}: [models.x].provider: unknown provider 'localech': registered providers are "
                               "gemini, openai, vllm, sglang, localecho, textonly")
    path = declare_models(tmp_path, "t", tables='[models.t]\nprovider = "textonly"\nmodel = "m"\nvideo = "frames"\n')
    with pytest.raises(ModelConfigError, match=r"\[models.t\].video: applies to openai, vllm, sglang and localecho "
                                               "models, not textonly"):
        load_models_file(path)
    with pytest.raises(ValueError, match="provider localecho is already registered"):
        registry.register(LocalEchoFacts())
    with pytest.raises(ValueError, match="provider vllm is built in"):
        registry.register(type("Mine", (LocalEchoFacts,), {"name": "vllm"})())
    # no key set: a server at a loopback address takes the placeholder
    spec = load_models_file(declare_models(tmp_path, "e", tables='[models.e]\nprovider = "localecho"\nmodel = "echo-1"\n')).models["e"]
    assert spec.endpoint == "http://localhost:8765/v1" and registry.key_for("localecho", spec.api_key_env, {}, spec.endpoint) == "EMPTY"
    assert isinstance(registry.provider_for(spec, env={}), OpenAICompatCaller)
    # an installed package's entry point (group epic_levels.providers) is loaded when its name is first asked for
    point = EntryPoint("viaentry", f"{__name__}:ViaEntryPoint", registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "entry_points", lambda group: [point] if group == registry.ENTRY_POINT_GROUP else [])
    registry._entry_points.cache_clear()
    try:
        assert "viaentry" in registry.names() and "viaentry" not in registry.registered()
        assert isinstance(registry.get("viaentry"), ViaEntryPoint) and registry.parse_model_name("viaentry/m") == ("viaentry", "m")
    finally:
        registry.unregister("viaentry")
        registry._entry_points.cache_clear()
