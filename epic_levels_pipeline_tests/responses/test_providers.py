"""The provider interface: Gemini is one provider behind it, chosen by name."""

import pytest

from epic_levels_pipeline.responses.providers.base import Provider
from epic_levels_pipeline.responses.providers.registry import make_provider, names
from epic_levels_pipeline.responses.providers.gemini import DEFAULT_ENDPOINT, GeminiCaller


@pytest.fixture(autouse=True)
def dummy_key(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "test-key-not-secret")


def test_gemini_is_a_provider_with_its_identity():
    caller = make_provider("gemini", "gemini-2.5-flash", base_url="http://127.0.0.1:9")
    assert isinstance(caller, GeminiCaller) and isinstance(caller, Provider)
    assert (caller.provider, caller.model, caller.endpoint) == ("gemini", "gemini-2.5-flash", "http://127.0.0.1:9")
    assert make_provider("gemini", "gemini-2.5-pro").endpoint == DEFAULT_ENDPOINT


def test_unknown_provider_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown model provider 'psychic'; known: " + ", ".join(sorted(names()))):
        make_provider("psychic", "m")


def test_every_provider_puts_its_identity_in_the_settings_and_so_the_cache_key(monkeypatch):
    from epic_levels_pipeline.responses.providers.base import IDENTITY_SETTING, identity_of
    from epic_levels_pipeline.responses.runner import ModelRun

    monkeypatch.delenv("VLLM_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    real = ModelRun.of(make_provider("gemini", "gemini-2.5-flash"), cache=None)
    fake = ModelRun.of(make_provider("gemini", "gemini-2.5-flash", base_url="http://127.0.0.1:9"), cache=None)
    vllm = ModelRun.of(make_provider("vllm", "Qwen/Qwen2.5-Omni-7B", base_url="http://127.0.0.1:9/v1"), cache=None)
    assert real.settings != fake.settings  # a reply from a fake endpoint is never served as Gemini's
    assert vllm.name == "vllm" and vllm.model == "Qwen/Qwen2.5-Omni-7B"
    for run in (real, fake, vllm):
        assert IDENTITY_SETTING in run.settings and identity_of(run.caller).endpoint in run.settings[IDENTITY_SETTING]
        assert "test-key-not-secret" not in str(run.settings)
    assert {"gemini", "openai", "vllm", "sglang"} <= set(names())


def test_a_cache_file_from_before_route_and_cached_tokens_is_migrated(tmp_path):
    import sqlite3

    from epic_levels_pipeline.responses.cache import CallCache
    from epic_levels_pipeline.responses.calls import CallResult

    path = tmp_path / "calls.sqlite"
    with sqlite3.connect(path) as old:
        old.execute("CREATE TABLE calls (cache_key TEXT PRIMARY KEY, responder TEXT, model TEXT, condition TEXT, "
                    "reply TEXT, status TEXT, prompt_tokens INT, output_tokens INT, latency_s REAL, error TEXT, "
                    "attempts INT, created_at TEXT)")
        old.execute("INSERT INTO calls VALUES ('k', 'gemini', 'm', 'clip', 'Answer: A', 'ok', 3, 1, 0.1, '', 1, 'then')")
    with CallCache(path) as cache:
        hit = cache.get("k")
        assert (hit.reply, hit.route, hit.cached_tokens) == ("Answer: A", "", 0)
        cache.put(CallResult("k2", "x", "ok", route="video=frames(4@1fps);audio=input_audio", cached_tokens=7))
        again = cache.get("k2")
        assert (again.route, again.cached_tokens) == ("video=frames(4@1fps);audio=input_audio", 7)
