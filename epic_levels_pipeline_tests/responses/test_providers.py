"""The provider interface: Gemini is one provider behind it, chosen by name."""

import pytest

from epic_levels_pipeline.responses.providers.base import PROVIDERS, Provider, make_provider
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
    with pytest.raises(ValueError, match="unknown model provider 'psychic'; known: " + ", ".join(sorted(PROVIDERS))):
        make_provider("psychic", "m")
