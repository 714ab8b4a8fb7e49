"""Model captions and the caption judge, through the QA track's call runner and cache.

One request per clip × condition, with the clip's media as the QA track sends it and the caption schema in the
provider's form; a condition whose media the clip lacks is ``skipped``, a call that still fails an ``error`` row
(scored 0, counted). The judge (:func:`caption_judge`) sees only the unit kind and the two descriptions."""

from __future__ import annotations

import pandas as pd

from ..responses.cache import cache_key
from ..responses.calls import CallRequest, CallStats, observe, run_calls_sync
from ..responses.providers.structured import choice_schema, parse_choice
from ..responses.runner import ClipMediaInfo, ModelRun, cached_only, condition_media
from .labels import Judge
from .prompt import caption_prompt, conditions_for
from .schema import request_settings
from .sources import Clip, audio_annotated
from .track import RESPONSE_COLUMNS


def caption_settings(run: ModelRun) -> dict:
    """The run's generation settings with the caption schema and output budget of its provider."""
    return {**run.settings, **request_settings(getattr(run.caller, "provider", run.name))}


def model_caption_responses(clip: Clip, media: ClipMediaInfo, run: ModelRun, streams=()
                            ) -> tuple[pd.DataFrame, CallStats | None]:
    """``caption_responses`` rows of one model for every condition of ``clip`` (``silenced`` where its audio is
    annotated: an ``epic_sounds`` clip, or one whose annotation rows' ``streams`` hold sound rows), and the
    runner's stats."""
    settings = caption_settings(run)
    base = {"clip_key": clip.key, "dataset": clip.dataset, "responder": run.name, "model": run.model,
            "served_model": run.served, "model_digest": run.digest}
    rows, requests = [], []
    for condition in conditions_for(audio_annotated(clip.dataset, streams)):
        if condition not in run.conditions:
            continue
        prompt = caption_prompt(clip, condition)
        sent = condition_media(condition, media)
        if sent is None:
            rows.append({**base, "condition": condition, "prompt": prompt, "reply": "", "status": "skipped",
                         "error": media.reason, "cache_key": "", "cached": False, "prompt_tokens": 0,
                         "output_tokens": 0})
            continue
        path, sha = sent
        key = cache_key(run.name, run.served, prompt, sha, condition, settings)
        requests.append(CallRequest(key, run.name, run.served, condition, prompt, media_path=path, media_sha256=sha,
                                    settings=dict(settings)))
    stats = None
    if requests:
        if run.asked:
            results, stats = run_calls_sync(requests, run.caller, run.cache, rpm=run.rpm, concurrency=run.concurrency)
        else:
            results = cached_only(requests, run.cache)
            observe(run.caller, results)
        for request, result in zip(requests, results):
            rows.append({**base, "condition": request.condition, "prompt": request.prompt, "reply": result.reply,
                         "status": result.status, "error": result.error or None, "cache_key": result.cache_key,
                         "cached": bool(result.cached), "prompt_tokens": int(result.prompt_tokens),
                         "output_tokens": int(result.output_tokens)})
    return pd.DataFrame(rows, columns=RESPONSE_COLUMNS), stats


JUDGE_INSTRUCTION = "You compare two short descriptions from a kitchen video."
# Structured output in the Gemini form, which every provider takes (OpenAI-compatible ones convert it).
JUDGE_SETTINGS = {"response_mime_type": "application/json", "response_schema": choice_schema(2)}


def judge_prompt(kind: str, reference: str, response: str) -> str:
    """The judge's whole view of a pair: the unit kind and the two descriptions."""
    what = {"event": "sound", "action": "action", "reference": "object"}.get(kind, kind)
    return "\n".join([
        JUDGE_INSTRUCTION,
        f"Do these two descriptions name the same {what}?",
        f"First: {reference}",
        f"Second: {response}",
        "Candidates:", "A. yes, the same", "B. no, a different one",
        'Reply {"choice": "A"} or {"choice": "B"}, or {"choice": "none"} when you cannot tell.',
    ])


def _request(caller, prompt: str, n_candidates: int, what: str, model: str) -> CallRequest:
    """A judge request of the caption track: the provider's own structured judge request (its identity in the
    cache key, so two judges serving one model name never share an answer), or, for a bare caller, one keyed by
    the model."""
    if hasattr(caller, "judge_request"):
        return caller.judge_request(prompt, n_candidates, model=model, responder=what, condition=what)
    settings = {"response_mime_type": "application/json", "response_schema": choice_schema(n_candidates)}
    key = cache_key(what, model, prompt, None, what, settings)
    return CallRequest(key, what, model, what, prompt, settings=settings)


def caption_judge(caller, cache, *, model: str, rpm: float = 60, concurrency: int = 4) -> Judge:
    """A :data:`.labels.Judge` backed by ``caller`` (the QA judge's provider), one cached call per pair;
    a failed or unreadable call leaves the pair undecided."""
    def judge(kind: str, reference: str, response: str) -> bool | None:
        prompt = judge_prompt(kind, reference, response)
        request = _request(caller, prompt, 2, "caption_judge", model)
        (result,), _ = run_calls_sync([request], caller, cache, rpm=rpm, concurrency=concurrency)
        if result.status != "ok":
            return None
        try:
            letter = parse_choice(result.reply, 2)
        except ValueError:
            return None
        return None if letter is None else letter == "A"

    return judge


def semantic_judge(caller, cache, *, model: str, rpm: float = 60, concurrency: int = 4):
    """A :data:`.semantic.SemanticJudge` backed by ``caller``: one cached call per (pair, direction), all of a
    response's requests run together under the rate limit; a failed or unreadable call is ``(None, True)``, a
    judge that cannot tell ``(None, False)``."""
    from .semantic import SCALE, semantic_prompt

    def judge(requests: list[tuple[str, str, str, str]]) -> list[tuple[int | None, bool]]:
        calls = [_request(caller, semantic_prompt(*r), len(SCALE), "caption_semantic", model) for r in requests]
        results, _ = run_calls_sync(calls, caller, cache, rpm=rpm, concurrency=concurrency)
        out: list[tuple[int | None, bool]] = []
        for result in results:
            if result.status != "ok":
                out.append((None, True))
                continue
            try:
                letter = parse_choice(result.reply, len(SCALE))
            except ValueError:
                out.append((None, True))
                continue
            out.append((None, False) if letter is None else (SCALE["ABCDE".index(letter)], False))
        return out

    return judge
