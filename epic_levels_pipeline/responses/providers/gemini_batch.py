"""Gemini's Batch API as a way to answer many requests: half the price, answered within a day.

Pure core (no Dagster). :func:`run_batch` takes the same requests :func:`.calls.run_calls` does and
gives the same guarantees where they apply — every request gets exactly one :class:`CallResult` in
input order, ``ok`` rows in the cache are served without asking, every answer is written into the
call cache the way a direct call's is — but sends the unanswered ones as batch jobs:

* **Submit.** The uncached requests (media uploaded first, as for direct calls; the media part first,
  the item text last) go into one job per model, as inlined requests when their JSON is within
  ``inline_limit_bytes`` (the API's limit for inlined requests is 20 MB), else as a JSONL file
  (``{"key", "request"}`` lines) uploaded through the Files API. A request whose media cannot be used
  is an ``error`` row at once and is not submitted.
* **Record before waiting.** The job's name and the requests it carries are written to the call cache
  database (``batch_jobs``) as soon as ``batches.create`` returns, before any polling. A process killed
  while waiting (SIGKILL included) resumes by polling the recorded jobs: a request that an open
  recorded job carries is never submitted again. (The one window left is between the service
  creating the job and that write returning.)
* **Poll with backoff** (``poll_interval_s`` × 1.5 per round up to ``max_poll_interval_s``), printing
  one progress line (``progress``) when any job's state changes: jobs, their states, items done.
* **Results.** When a job SUCCEEDED, each item's response becomes a result as a direct call's would
  (:meth:`.gemini.GeminiCaller.result_of`: text, tokens, structured-output check); a per-item error
  becomes an ``error`` row with the service's message; an item the output lacks is an ``error`` row
  saying so. A job that FAILED, was CANCELLED or EXPIRED makes each of its items an ``error`` row.
  Either way the job is marked done, and the error rows are submitted again by the next run.
* ``timeout_s`` bounds the wait: requests still in unfinished jobs then get ``error`` rows ("still
  running") and their jobs stay open, so the next run picks them up without resubmitting.

Batch requests send the clip itself (no context cache: a batch may wait longer than a cache lives);
``GeminiSettings.context_cache`` applies to direct calls.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Protocol, Sequence

from google.genai import types

from ..calls import CallRequest, CallResult, CallStats, serve_cached

if TYPE_CHECKING:
    from ..cache import BatchJobRecord, CallCache

INLINE_LIMIT_BYTES = 20_000_000
SUCCEEDED = frozenset({"JOB_STATE_SUCCEEDED", "JOB_STATE_PARTIALLY_SUCCEEDED"})
ENDED_WITHOUT_RESULTS = frozenset({"JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED"})
ROUTE = "batch"


@dataclass
class BatchStats(CallStats):
    """:class:`CallStats` of a batch run (``calls_made`` = items submitted this run), plus the jobs:
    one dict per job polled (``name``, ``state``, ``items``, ``done``, ``source``, ``resumed``)."""

    jobs: list[dict] = field(default_factory=list)
    submitted_jobs: int = 0
    resumed_jobs: int = 0

    def progress_line(self) -> str:
        states: dict[str, int] = {}
        for job in self.jobs:
            states[job["state"]] = states.get(job["state"], 0) + 1
        done = sum(job["items"] for job in self.jobs if job["done"])
        total = sum(job["items"] for job in self.jobs)
        text = ", ".join(f"{n} {s.removeprefix('JOB_STATE_').lower()}" for s, n in sorted(states.items()))
        return f"batch: {len(self.jobs)} jobs ({text or 'none'}), {done}/{total} items done"


class BatchCaller(Protocol):
    """What a batch run needs of its caller (:class:`.gemini.GeminiCaller`)."""

    @property
    def model(self) -> str: ...

    def loop_client(self): ...

    async def batch_contents(self, request: CallRequest) -> tuple[list[types.Content], CallResult | None]: ...

    def generate_config(self, request: CallRequest) -> types.GenerateContentConfig: ...

    def result_of(self, request: CallRequest, response: types.GenerateContentResponse, latency_s: float = 0.0,
                  route: str = "") -> CallResult: ...


def state_name(state) -> str:
    if state is None:
        return "JOB_STATE_UNSPECIFIED"
    return state.value if hasattr(state, "value") else str(state)


def rest_request(contents: list[types.Content], request: CallRequest, caller: "BatchCaller") -> dict:
    """A generate request in the REST API's JSON form (for a JSONL input file)."""
    config = caller.generate_config(request)
    generation = {
        "temperature": config.temperature, "maxOutputTokens": config.max_output_tokens,
        "thinkingConfig": ({"thinkingBudget": config.thinking_config.thinking_budget}
                           if config.thinking_config is not None else None),
        "responseMimeType": config.response_mime_type,
        "responseSchema": (request.settings or {}).get("response_schema"),
        "seed": config.seed,
        "mediaResolution": (request.settings or {}).get("media_resolution"),
    }
    body = {"contents": [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in contents],
            "generationConfig": {k: v for k, v in generation.items() if v is not None}}
    instruction = (request.settings or {}).get("system_instruction")
    if instruction:
        body["systemInstruction"] = {"parts": [{"text": instruction}]}
    return body


def _item(request: CallRequest) -> dict:
    return {"key": request.cache_key, "responder": request.responder, "model": request.model,
            "condition": request.condition}


async def run_batch(requests: Sequence[CallRequest], caller: "BatchCaller", cache: "CallCache | None", *,
                    poll_interval_s: float = 5.0, max_poll_interval_s: float = 60.0,
                    inline_limit_bytes: int = INLINE_LIMIT_BYTES, timeout_s: float | None = None,
                    progress: Callable[[str], None] | None = print) -> tuple[list[CallResult], BatchStats]:
    """Answer every request through batch jobs (see the module docstring)."""
    t0 = time.monotonic()
    stats = BatchStats(requests=len(requests))
    results: list[CallResult | None] = [None] * len(requests)
    positions, todo, stats.cache_hits = serve_cached(requests, cache, results)
    pending: dict[str, CallRequest] = {req.cache_key: req for req in todo}

    def finish(req: CallRequest, result: CallResult) -> None:
        if cache is not None:
            cache.put(result, req)
        for i in positions.get(req.cache_key, []):
            results[i] = result
        pending.pop(req.cache_key, None)

    client = caller.loop_client()
    polling: dict[str, dict] = {}  # job name -> {"items": [...], "info": stats dict}

    # 1. Jobs recorded by an earlier (perhaps killed) run that carry any of these requests.
    covered: set[str] = set()
    for job in (cache.batch_jobs(open_only=True) if cache is not None else []):
        keys = {it["key"] for it in job.items}
        if keys & pending.keys():
            covered |= keys
            info = {"name": job.name, "state": job.state, "items": len(job.items), "done": False,
                    "source": job.source, "resumed": True}
            polling[job.name] = {"items": job.items, "info": info}
            stats.jobs.append(info)
            stats.resumed_jobs += 1

    # 2. Submit the rest, one job per model.
    by_model: dict[str, list[CallRequest]] = {}
    for key, req in pending.items():
        if key not in covered:
            by_model.setdefault(req.model or caller.model, []).append(req)
    for model, reqs in by_model.items():
        inlined: list[types.InlinedRequest] = []
        lines: list[str] = []
        items: list[dict] = []
        size = 0
        for req in reqs:
            contents, failed = await caller.batch_contents(req)
            if failed is not None:
                finish(req, failed)
                continue
            config = caller.generate_config(req).model_copy(update={"http_options": None})
            inlined.append(types.InlinedRequest(model=model, contents=contents, config=config,
                                                metadata={"key": req.cache_key}))
            line = json.dumps({"key": req.cache_key, "request": rest_request(contents, req, caller)})
            lines.append(line)
            size += len(line)
            items.append(_item(req))
        if not items:
            continue
        if size <= inline_limit_bytes:
            src, source = inlined, "inline"
        else:
            src = source = await _upload_jsonl(client, lines)
        job = await client.aio.batches.create(
            model=model, src=src,
            config=types.CreateBatchJobConfig(display_name=f"epic-levels {len(items)} items"))
        if cache is not None:
            cache.put_batch_job(job.name, model, state_name(job.state), items, source)
        info = {"name": job.name, "state": state_name(job.state), "items": len(items), "done": False,
                "source": source, "resumed": False}
        polling[job.name] = {"items": items, "info": info}
        stats.jobs.append(info)
        stats.submitted_jobs += 1
        stats.calls_made += len(items)
    if progress is not None and stats.jobs:
        progress(stats.progress_line())

    # 3. Poll with backoff; store each finished job's results.
    delay = poll_interval_s
    deadline = None if timeout_s is None else t0 + timeout_s
    while any(not p["info"]["done"] for p in polling.values()):
        changed = False
        for name, p in polling.items():
            info = p["info"]
            if info["done"]:
                continue
            job = await client.aio.batches.get(name=name)
            now_state = state_name(job.state)
            if now_state != info["state"]:
                info["state"], changed = now_state, True
                if cache is not None:
                    cache.set_batch_state(name, now_state)
            if now_state in SUCCEEDED:
                await _store_results(client, caller, job, p["items"], pending, finish)
            elif now_state in ENDED_WITHOUT_RESULTS:
                for it in p["items"]:
                    req = pending.get(it["key"]) or _rebuilt(it)
                    finish(req, CallResult(it["key"], "", "error", attempts=1, route=ROUTE,
                                           error=f"batch job {name} ended {now_state}"))
            else:
                continue
            info["done"] = True
            if cache is not None:
                cache.set_batch_state(name, now_state, done=True)
        if changed and progress is not None:
            progress(stats.progress_line())
        if not any(not p["info"]["done"] for p in polling.values()):
            break
        if deadline is not None and time.monotonic() + delay > deadline:
            break
        await asyncio.sleep(delay)
        delay = min(max_poll_interval_s, delay * 1.5)

    # 4. Whatever is left is in a job still running (it stays recorded: the next run polls it).
    for key, req in list(pending.items()):
        job = next((n for n, p in polling.items() if any(it["key"] == key for it in p["items"])), None)
        why = (f"batch job {job} still {polling[job]['info']['state']} after {timeout_s:g} s; "
               "the next run polls it again") if job else "not submitted"
        result = CallResult(key, "", "error", error=why, route=ROUTE)
        for i in positions[key]:
            results[i] = result  # not stored: an error row would not help the resume
    final = [r for r in results if r is not None]
    assert len(final) == len(requests)
    stats.ok = sum(1 for r in final if r.status == "ok")
    stats.errors = sum(1 for r in final if r.status == "error")
    stats.elapsed_s = time.monotonic() - t0
    return final, stats


def _rebuilt(item: dict) -> CallRequest:
    """A request standing for a recorded item this run did not ask for (its row is still stored)."""
    return CallRequest(item["key"], item.get("responder", ""), item.get("model", ""),
                       item.get("condition", ""), "")


async def _upload_jsonl(client, lines: list[str]) -> str:
    fd, path = tempfile.mkstemp(suffix=".jsonl", prefix="epic-levels-batch-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        uploaded = await client.aio.files.upload(
            file=path, config=types.UploadFileConfig(mime_type="application/jsonl",
                                                     display_name=os.path.basename(path)))
    finally:
        os.unlink(path)
    return uploaded.name


async def _store_results(client, caller: "BatchCaller", job: types.BatchJob, items: list[dict],
                         pending: dict[str, CallRequest], finish) -> None:
    """Each item of a succeeded job → a result in the cache (responses, per-item errors, gaps)."""
    outputs: list[tuple[str | None, types.GenerateContentResponse | None, object]] = []
    dest = job.dest
    if dest is not None and dest.inlined_responses:
        for i, out in enumerate(dest.inlined_responses):
            key = (out.metadata or {}).get("key") if isinstance(out.metadata, dict) else None
            if key is None and i < len(items):
                key = items[i]["key"]
            outputs.append((key, out.response, out.error))
    elif dest is not None and dest.file_name:
        data = await client.aio.files.download(file=dest.file_name)
        for line in bytes(data).decode("utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            response = row.get("response")
            outputs.append((row.get("key"), types.GenerateContentResponse.model_validate(response)
                            if response else None, row.get("error")))
    by_key = {it["key"]: it for it in items}
    answered = set()
    for key, response, error in outputs:
        if key not in by_key or key in answered:
            continue
        answered.add(key)
        req = pending.get(key) or _rebuilt(by_key[key])
        if response is not None and not error:
            result = caller.result_of(req, response, route=ROUTE)
        else:
            result = CallResult(key, "", "error", route=ROUTE, error=f"batch item error: {_error_text(error)}")
        finish(req, CallResult(**{**result.__dict__, "attempts": 1}))
    for key, it in by_key.items():
        if key not in answered:
            finish(pending.get(key) or _rebuilt(it),
                   CallResult(key, "", "error", attempts=1, route=ROUTE,
                              error=f"batch job {job.name} returned no result for this item"))


def _error_text(error) -> str:
    if error is None:
        return "no response"
    if isinstance(error, dict):
        return f"{error.get('code', '')} {error.get('status', '')}: {error.get('message', '')}".strip()
    code, message = getattr(error, "code", ""), getattr(error, "message", "")
    return f"{code}: {message}" if code or message else str(error)
