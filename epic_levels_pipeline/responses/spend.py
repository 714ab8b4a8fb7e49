"""What model calls cost: calls made, served from the call cache, failed; tokens; cost at the pricing table.

A :class:`SpendMeter` observes a step's work (:func:`metered`): every batch of calls that goes through the runner
(:func:`.calls.run_calls_sync`, and the cache-only answers of a model a run does not ask) is tallied into it by
caller. The step writes the tallies to the call cache's ledger (``CallCache.add_spend``), one row
per run × step × model × purpose, and the ``spend`` table is read from the ledger (per run, and cumulative).

Counting follows the runner: requests sharing a cache key are one call; a request served from the cache is
``cached``; ``calls`` are the distinct requests sent, ``attempts`` the invocations (retries included), ``failed``
the distinct requests that ended ``error``; tokens are the fresh results' (the cache's are not spent again).
Cost is at :data:`.pricing.DEFAULT_PRICES` (input and output price per 1M tokens; audio and cached input billed as
input) and unknown (None) for a model without a price, which every local server's is.
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, fields

from .calls import CallResult, CallStats, observed

SPEND_COLUMNS = ["run_id", "recorded_at", "asset", "purpose", "responder", "model", "provider", "served_model",
                 "endpoint", "requests", "cached", "calls", "attempts", "failed", "prompt_tokens", "output_tokens",
                 "cached_tokens", "wall_s", "cost_usd"]
PURPOSES = ("answers", "captions", "judge", "caption_judge", "integrity")


@dataclass
class Tally:
    requests: int = 0
    cached: int = 0
    calls: int = 0
    attempts: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    wall_s: float = 0.0

    def __iadd__(self, other: "Tally") -> "Tally":
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
        return self


def tally(results: list[CallResult], stats: CallStats | None = None) -> Tally:
    """The tally of one batch of results (in request order; requests sharing a key share their result)."""
    out = Tally(requests=len(results), cached=sum(1 for r in results if r.cached))
    fresh = {r.cache_key: r for r in results if not r.cached and r.status in ("ok", "error")}
    out.calls = len(fresh)
    out.failed = sum(1 for r in fresh.values() if r.status == "error")
    out.prompt_tokens = sum(int(r.prompt_tokens) for r in fresh.values())
    out.output_tokens = sum(int(r.output_tokens) for r in fresh.values())
    out.cached_tokens = sum(int(r.cached_tokens) for r in fresh.values())
    out.attempts = stats.calls_made if stats is not None else out.calls
    out.wall_s = stats.elapsed_s if stats is not None else 0.0
    return out


@dataclass
class Who:
    responder: str
    model: str
    provider: str
    served_model: str
    endpoint: str
    local: bool = False


def who_of(caller, name: str | None = None) -> Who:
    """A caller's identity (its NAME when given, else ``provider/model``)."""
    from .providers.base import is_loopback
    from .providers.registry import is_local

    provider, model = str(getattr(caller, "provider", "?")), str(getattr(caller, "model", "?"))
    endpoint = str(getattr(caller, "endpoint", ""))
    return Who(provider, name or f"{provider}/{model}", provider, model, endpoint,
               is_loopback(endpoint) or is_local(provider, endpoint))


@dataclass
class SpendMeter:
    """The tallies of one step, by (purpose, caller). ``names`` gives a caller's configured NAME (by ``id``)."""

    purpose: str
    names: dict[int, str] = field(default_factory=dict)
    tallies: dict[tuple, Tally] = field(default_factory=dict)
    who: dict[tuple, Who] = field(default_factory=dict)
    started: float = field(default_factory=time.time)

    def name(self, caller, name: str) -> None:
        self.names[id(caller)] = name

    def add(self, caller, results: list[CallResult], stats: CallStats | None = None) -> None:
        who = who_of(caller, self.names.get(id(caller)))
        key = (self.purpose, who.model, who.provider, who.served_model, who.endpoint)
        self.who[key] = who
        self.tallies.setdefault(key, Tally())
        self.tallies[key] += tally(results, stats)

    def rows(self, run_id: str, asset: str, prices: dict | None = None) -> list[dict]:
        """One ledger row per purpose × model of this step."""
        from datetime import datetime, timezone

        from .pricing import DEFAULT_PRICES

        prices = DEFAULT_PRICES if prices is None else prices
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        out = []
        for key, t in self.tallies.items():
            who = self.who[key]
            out.append({"run_id": run_id, "recorded_at": now, "asset": asset, "purpose": key[0],
                        "responder": who.responder, "model": who.model, "provider": who.provider,
                        "served_model": who.served_model, "endpoint": who.endpoint, **vars(t),
                        "cost_usd": cost_of(who, t, prices)})
        return out


def cost_of(who: Who, t: Tally, prices: dict) -> float | None:
    """USD at the pricing table (input and output per 1M tokens); None for a model without a price (local servers)."""
    from .pricing import price_of

    if who.local:
        return None
    price = price_of(prices, f"{who.provider}/{who.served_model}", who.served_model)
    if price is None:
        return None
    value = (t.prompt_tokens * price.input + t.output_tokens * price.output) / 1e6
    return value if math.isfinite(value) else None


@contextmanager
def metered(meter: SpendMeter):
    """Tally every batch of calls answered while the block runs into ``meter``."""
    with observed(meter.add):
        yield meter


COUNTS = ["requests", "cached", "calls", "attempts", "failed", "prompt_tokens", "output_tokens", "cached_tokens"]
KEYS = ["run_id", "purpose", "responder", "model", "provider", "served_model", "endpoint"]
TABLE_COLUMNS = ["run_id", "recorded_at", *KEYS[1:], *COUNTS, "wall_s", "cost_usd"]


def spend_table(rows: list[dict]):
    """The ``spend`` table from ledger rows: per run × purpose × model, and the same summed over every run
    (``run_id = '*'``, ``recorded_at`` the latest). ``cost_usd`` is empty (unknown) where any of its rows is."""
    import pandas as pd

    ledger = pd.DataFrame(rows, columns=SPEND_COLUMNS)
    if not len(ledger):
        return pd.DataFrame(columns=TABLE_COLUMNS)
    for column in COUNTS:
        ledger[column] = pd.to_numeric(ledger[column]).fillna(0).astype("int64")
    ledger["wall_s"] = pd.to_numeric(ledger["wall_s"]).fillna(0.0)
    ledger["cost_usd"] = pd.to_numeric(ledger["cost_usd"])
    parts = []
    for keys, when in ((KEYS, "min"), (KEYS[1:], "max")):
        g = ledger.groupby(keys, sort=True, dropna=False)
        part = g[COUNTS + ["wall_s"]].sum()
        part["recorded_at"] = g["recorded_at"].agg(when)
        part["cost_usd"] = g["cost_usd"].agg(lambda c: c.sum() if c.notna().all() else float("nan"))
        part = part.reset_index()
        if "run_id" not in part:
            part["run_id"] = "*"
        parts.append(part)
    return pd.concat(parts, ignore_index=True)[TABLE_COLUMNS]


__all__ = ["TABLE_COLUMNS", "spend_table", "PURPOSES", "SPEND_COLUMNS", "SpendMeter", "Tally", "cost_of", "metered", "tally", "who_of"]
