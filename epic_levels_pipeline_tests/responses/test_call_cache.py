"""CallCache and cache_key: canonical keys, persistence, no downgrade of ok rows, uploads, threads."""

from __future__ import annotations

import sqlite3
import threading

import pytest
from hypothesis import given, settings, strategies as st

from epic_levels_pipeline.responses.cache import CallCache, cache_key
from epic_levels_pipeline.responses.calls import CallRequest, CallResult

BASE = dict(responder="gemini", model="gemini-2.5-flash", prompt="What is cut?", media_sha256="ab" * 32,
            condition="full", settings={"temperature": 0.0, "max_output_tokens": 64})


def test_cache_key_is_sha256_hex_and_deterministic():
    k = cache_key(**BASE)
    assert len(k) == 64 and int(k, 16) >= 0
    assert k == cache_key(**BASE)


@pytest.mark.parametrize("field,value", [
    ("responder", "oracle"), ("model", "gemini-2.5-pro"), ("prompt", "What is cut? "),
    ("media_sha256", None), ("media_sha256", ""), ("condition", "silenced"),
    ("settings", {"temperature": 0.0, "max_output_tokens": 65}), ("settings", {}),
])
def test_cache_key_changes_with_every_ingredient(field, value):
    assert cache_key(**{**BASE, field: value}) != cache_key(**BASE)


json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8),
                         st.floats(allow_nan=False, allow_infinity=False))


@settings(deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=6), json_scalars, max_size=6), st.randoms())
def test_cache_key_ignores_settings_key_order(d, rnd):
    items = list(d.items())
    rnd.shuffle(items)
    assert cache_key(**{**BASE, "settings": d}) == cache_key(**{**BASE, "settings": dict(items)})


def test_cache_key_rejects_non_json_settings():
    with pytest.raises(TypeError):
        cache_key(**{**BASE, "settings": {"x": object()}})
    with pytest.raises(ValueError):
        cache_key(**{**BASE, "settings": {"x": float("nan")}})


def _req(key: str) -> CallRequest:
    return CallRequest(cache_key=key, responder="r1", model="m1", condition="c1", prompt="p")


def test_put_get_roundtrip_and_reopen(tmp_path):
    path = tmp_path / "deep" / "er" / "calls.sqlite"
    with CallCache(path) as cache:
        assert cache.get("k") is None and len(cache) == 0
        cache.put(CallResult("k", "A", "ok", prompt_tokens=12, output_tokens=3, latency_s=0.5,
                             attempts=2), _req("k"))
        got = cache.get("k")
        assert got == CallResult("k", "A", "ok", 12, 3, 0.5, "", 2, cached=True)
        assert len(cache) == 1 and "k" in cache and "x" not in cache
        mode = cache._conn.execute("PRAGMA journal_mode").fetchone()[0]
        assert mode.lower() == "wal"
    with CallCache(path) as again:  # survives closing and reopening
        assert again.get("k").reply == "A"
        row = again.rows()[0]
        assert (row["responder"], row["model"], row["condition"]) == ("r1", "m1", "c1")
        assert row["created_at"]


def test_put_is_visible_to_another_connection_at_once(tmp_path):
    """Each put is committed on return: another process (here: connection) sees it."""
    path = tmp_path / "c.sqlite"
    cache = CallCache(path)
    cache.put(CallResult("k1", "x", "ok"))
    other = sqlite3.connect(path)
    assert other.execute("SELECT reply FROM calls WHERE cache_key='k1'").fetchone() == ("x",)
    other.close()
    cache.close()


def test_ok_row_is_never_downgraded_but_errors_are_replaced(tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")
    cache.put(CallResult("e", "", "error", error="HTTP 500"))
    assert cache.get("e").status == "error" and cache.get("e").error == "HTTP 500"
    cache.put(CallResult("e", "B", "ok"))
    assert cache.get("e").status == "ok"
    cache.put(CallResult("e", "", "error", error="later failure"))
    assert cache.get("e").reply == "B" and cache.get("e").status == "ok"
    cache.put(CallResult("e", "C", "ok"))  # ok replaces ok (a forced re-ask)
    assert cache.get("e").reply == "C"
    assert cache.status_counts() == {"ok": 1}


def test_uploads_table(tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")
    assert cache.get_upload("s") is None
    cache.put_upload("s", "files/a", "http://x/files/a", "video/mp4", "PROCESSING")
    first = cache.get_upload("s")
    assert (first.file_name, first.state, first.mime_type) == ("files/a", "PROCESSING", "video/mp4")
    cache._conn.execute("UPDATE uploads SET created_at='2000-01-01T00:00:00+00:00'")
    cache.put_upload("s", "files/a", "http://x/files/a", "video/mp4", "ACTIVE")
    second = cache.get_upload("s")
    assert second.state == "ACTIVE" and second.created_at.startswith("2000")  # same file: kept
    cache.put_upload("s", "files/b", "http://x/files/b", "video/mp4", "PROCESSING")
    third = cache.get_upload("s")
    assert third.file_name == "files/b" and not third.created_at.startswith("2000")  # re-upload
    cache.delete_upload("s")
    assert cache.get_upload("s") is None


def test_concurrent_puts_from_threads(tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")

    def work(t: int) -> None:
        for i in range(50):
            cache.put(CallResult(f"{t}-{i}", str(i), "ok"), _req(f"{t}-{i}"))
            assert cache.get(f"{t}-{i}") is not None

    threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(cache) == 300
