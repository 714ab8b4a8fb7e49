"""``epic-levels probe``: before a run spends anything, one small request per route to a model (pure core).

On a short test clip it makes itself: ``text``, ``video`` (no audio), ``video+audio`` as a run sends them, and for
an OpenAI-compatible model ``structured`` (a judge's request, trying each form until one is accepted). Each line
says accepted or the server's error, latency and prompt tokens; equal tokens with and without audio mean the
server ignored the audio. Requests go straight to the provider (no cache, no retries), one at a time
(docs/models.md)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from .calls import CallRequest, CallResult, RetryableError, run_blocking
from .media import make_test_video
from .models_config import ModelSpec
from .providers.openai_wire import STRUCTURED_OUTPUT, short_message

PROBE_PROMPT = "Probe: describe the clip in a few words."
STRUCTURED_PROMPT = ("Probe: is an apple a fruit?\nCandidates:\nA. yes\nB. no\n"
                     'Reply {"choice": "A"} or {"choice": "B"}, or {"choice": "none"} when you cannot tell.')
CLIP_S = 3.0
TONE_HZ = 440.0


@dataclass(frozen=True)
class ProbeResult:
    route: str                 # text | video | video+audio
    status: str                # accepted | error | skipped
    message: str = ""          # the server's error, or why skipped
    latency_s: float = 0.0
    prompt_tokens: int = 0
    sent: str = ""             # the provider's route string (e.g. video=video_url;audio=use_audio_in_video)


def probe_clips(folder: Path) -> tuple[Path, Path]:
    """``(with tone, without an audio track)``: the probe's two test clips, made in ``folder``."""
    with_audio = make_test_video(folder / "probe.mp4", CLIP_S, tone_hz=TONE_HZ)
    without = make_test_video(folder / "probe.noaudio.mp4", CLIP_S, tone_hz=None)
    return with_audio, without


def _requests(spec: ModelSpec, caller, clip: Path, silent: Path) -> list[tuple[str, CallRequest | str]]:
    """(route, request or the reason it is skipped) for the three probes."""
    base = dict(caller.generation_settings())

    def req(route: str, path: Path | None, condition: str, **settings) -> CallRequest:
        return CallRequest(f"probe/{route}", spec.provider, spec.model, condition, PROBE_PROMPT,
                           media_path=str(path) if path else None, settings={**base, **settings})

    out: list[tuple[str, CallRequest | str]] = [("text", req("text", None, "no_clip"))]
    if spec.video == "none":
        out += [("video", "video = \"none\": this model is sent no video"),
                ("video+audio", "video = \"none\": this model is sent no video")]
        return out
    out.append(("video", _without_audio(caller, req("video", clip, "clip"), silent, req)))
    if spec.audio == "none":
        out.append(("video+audio", "audio = \"none\": this model is sent no audio"))
    else:
        out.append(("video+audio", req("video+audio", clip, "clip")))
    return out


def _without_audio(caller, full: CallRequest, silent: Path, req) -> CallRequest:
    """The ``video`` probe: the clip as its caller sends it without audio (its ``without_audio``), else the copy of
    the clip without an audio track."""
    without = getattr(caller, "without_audio", None)
    if without is None:
        return req("video", silent, "clip")
    plan = without(full)
    if plan is None:  # the request sends no audio anyway
        return full
    settings, path, sha = plan
    return replace(req("video", Path(path), "clip", **settings), media_sha256=sha)


async def _structured(spec: ModelSpec, caller) -> ProbeResult:
    """The ``structured`` probe: the configured form, then (when the server rejects it) the others in turn."""
    configured = getattr(spec, "structured_output", "json_schema")
    tried: list[str] = []
    for form in [configured, *[f for f in STRUCTURED_OUTPUT if f != configured]]:
        request = caller.judge_request(STRUCTURED_PROMPT, 2, cache_key=f"probe/structured/{form}",
                                       settings={"structured_output": form})
        rejected, result = await _judge_call(caller, request)
        if rejected is not None:
            tried.append(f"{form} rejected ({rejected})")
            continue
        reply = "" if result.status == "ok" else f"; its reply: {result.error}"
        if form == configured:
            return ProbeResult("structured", "accepted", "", result.latency_s, result.prompt_tokens,
                               f"structured_output = {form}{reply}")
        return ProbeResult("structured", "error", f"{'; '.join(tried)}; {form} accepted: set structured_output = "
                           f'"{form}" in [models.{spec.name}]{reply}', result.latency_s, result.prompt_tokens)
    return ProbeResult("structured", "error", "; ".join(tried))


async def _judge_call(caller, request: CallRequest) -> tuple[str | None, CallResult | None]:
    """``(the server's rejection, None)`` or ``(None, the result)`` of one structured request: an answer the
    model gave, even one failing the schema, means the server took the form."""
    try:
        result = await caller(request)
    except RetryableError as exc:
        return short_message(str(exc), 160), None
    if result.status != "ok" and result.error.startswith("HTTP "):
        return short_message(result.error, 160), None
    return None, result


async def _send(caller, request: CallRequest) -> ProbeResult:
    route = request.cache_key.split("/", 1)[1]
    try:
        result = await caller(request)
    except RetryableError as exc:  # the probe reports, it does not retry
        return ProbeResult(route, "error", str(exc))
    except Exception as exc:  # noqa: BLE001 - whatever happens is what the user needs to see
        return ProbeResult(route, "error", f"{type(exc).__name__}: {exc}")
    if result.status == "ok":
        return ProbeResult(route, "accepted", "", result.latency_s, result.prompt_tokens, result.route)
    return ProbeResult(route, "error", result.error, result.latency_s, result.prompt_tokens, result.route)


def probe_model(spec: ModelSpec, caller, folder: Path | None = None) -> list[ProbeResult]:
    """The three probes of one model through ``caller`` (its provider), in order."""
    with tempfile.TemporaryDirectory(prefix="epic-levels-probe-") as tmp:
        clip, silent = probe_clips(Path(folder or tmp))
        planned = _requests(spec, caller, clip, silent)

        async def all_of() -> list[ProbeResult]:
            out = []
            for route, request in planned:
                if isinstance(request, str):
                    out.append(ProbeResult(route, "skipped", request))
                else:
                    out.append(await _send(caller, request))
            if "structured_output" in spec.facts.takes:  # else (Gemini's response_schema) nothing to choose
                out.append(await _structured(spec, caller))
            close = getattr(caller, "aclose", None)
            if close is not None:
                await close()
            return out

        return run_blocking(all_of())


def audio_verdict(results: list[ProbeResult]) -> str | None:
    """What the prompt tokens say about the audio; None when the two media probes were not both accepted."""
    by = {r.route: r for r in results}
    video, both = by.get("video"), by.get("video+audio")
    if not (video and both and video.status == both.status == "accepted"):
        return None
    if both.prompt_tokens <= video.prompt_tokens:
        return (f"audio: IGNORED — the request with audio reported the same prompt tokens as the one without "
                f"({both.prompt_tokens}): the server did not use the audio it was sent")
    return (f"audio: used — the request with audio reported {both.prompt_tokens - video.prompt_tokens} more "
            "prompt tokens than the one without")


def render(spec: ModelSpec, results: list[ProbeResult]) -> str:
    """The lines ``epic-levels probe`` prints for one model."""
    head = (f"probe {spec.name} ({spec.qualified} at {spec.endpoint}; video = {spec.video}, audio = {spec.audio}) "
            f"on a {CLIP_S:g} s test clip (testsrc + {TONE_HZ:g} Hz tone):")
    lines = [head]
    for r in results:
        if r.status == "skipped":
            lines.append(f"  {r.route:<12} skipped   {r.message}")
            continue
        what = "accepted" if r.status == "accepted" else "error   "
        tail = r.sent if r.status == "accepted" else r.message if r.route == "structured" else short_message(r.message, 400)
        lines.append(f"  {r.route:<12} {what}  {r.latency_s:6.3f} s  prompt tokens {r.prompt_tokens:>6}  {tail}")
    verdict = audio_verdict(results)
    if verdict:
        lines.append(f"  {verdict}")
    return "\n".join(lines)


def probe_ok(results: list[ProbeResult]) -> bool:
    """Every probe that was sent accepted, and the audio (when probed) used."""
    verdict = audio_verdict(results)
    return all(r.status != "error" for r in results) and not (verdict and "IGNORED" in verdict)
