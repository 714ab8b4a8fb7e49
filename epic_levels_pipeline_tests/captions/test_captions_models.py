"""Model captions and the caption judge through the call runner and cache, against the local Gemini server."""

import json

import pandas as pd

from epic_levels_pipeline.captions import caption_alignments, caption_references
from epic_levels_pipeline.captions.models import caption_judge, model_caption_responses
from epic_levels_pipeline.captions.reference import reference_structure
from epic_levels_pipeline.captions.responders import oracle
from epic_levels_pipeline.captions.sources import Clip, clip_annotations
from epic_levels_pipeline.responses.cache import CallCache
from epic_levels_pipeline.responses.providers.gemini import GeminiCaller, GeminiSettings
from epic_levels_pipeline.responses.runner import ClipMediaInfo, ModelRun
from epic_levels_pipeline_tests.fakes.gemini_server import GeminiTestServer, request_text

CLIP = "epic_sounds__P09_08__45-75"


def test_undecided_pairs_go_to_the_judge_which_sees_only_the_two_descriptions(bundled, tmp_path):
    ann, cat = bundled
    clip = Clip.from_key(CLIP)
    rows = clip_annotations(ann, clip)
    caption = json.loads(oracle(reference_structure(clip, rows, cat), "clip"))
    changed = next(e for e in caption["events"] if e["sound"] == "clang / clatter")
    changed["sound"] = "a metallic bang"  # not a class name, cue or description part: the rules cannot decide
    responses = pd.DataFrame([{"clip_key": clip.key, "dataset": clip.dataset, "condition": "clip", "responder": "gemini",
                               "model": "m", "prompt": "", "reply": json.dumps(caption), "status": "ok", "error": None}])
    refs = caption_references(clip, rows, cat)
    with GeminiTestServer(lambda body: '{"choice": "A"}') as server:
        cache = CallCache(tmp_path / "calls.sqlite")
        caller = GeminiCaller(GeminiSettings(model="judge", base_url=server.base_url), cache, api_key="test-key-not-secret")
        alignments, scored = caption_alignments(refs, responses, cat, judge=caption_judge(caller, cache, model="judge"))
        prompts = [request_text(b) for b in server.generate_requests]
        assert prompts, "the judge was not asked"
        asked = server.generate_calls
        caption_alignments(refs, responses, cat, judge=caption_judge(caller, cache, model="judge"))
        assert server.generate_calls == asked  # cached: a re-run asks nothing again
        cache.close()
    judged = alignments[(alignments["verdict_by"] == "judge") & (alignments["matcher"] == "greedy")]
    assert len(judged) and set(judged["verdict"]) == {"agree"}
    assert "a metallic bang" in set(judged["resp_label"])
    assert all("a metallic bang" in p or "Second:" in p for p in prompts)
    # the judge sees the two descriptions and nothing of the clip
    assert not any(clip.video_id in p or "start_s" in p for p in prompts)
    assert (scored["n_judged"] > 0).all() and (scored.loc[scored["matcher"] == "greedy", "event_label_f1"] == 1.0).all()


def test_model_captions_skip_media_conditions_without_media(tmp_path):
    clip = Clip.from_key(CLIP)
    with GeminiTestServer(lambda body: "{}") as server:
        cache = CallCache(tmp_path / "calls.sqlite")
        caller = GeminiCaller(GeminiSettings(model="m", base_url=server.base_url), cache, api_key="test-key-not-secret")
        frame, stats = model_caption_responses(clip, ClipMediaInfo(reason="no source video"),
                                               ModelRun("gemini", "m", caller, cache, rpm=100000))
        cache.close()
    assert dict(zip(frame["condition"], frame["status"])) == {"clip": "skipped", "silenced": "skipped", "no_clip": "error"}
    assert set(frame.loc[frame["status"] == "skipped", "error"]) == {"no source video"}
    assert "lacks required key" in frame.loc[frame["condition"] == "no_clip", "error"].iat[0]  # "{}" is not a caption
    assert stats.requests == 1


def test_openai_compatible_captions_end_to_end_with_a_malformed_reply(bundled, tmp_path):
    """An OpenAI-compatible server (vLLM's API) asked with the caption ``json_schema``: one model answers the
    reference structure, the other truncated JSON, which the provider records as an error; it scores 0 on every
    metric and is counted."""
    from epic_levels_pipeline.captions import caption_scores
    from epic_levels_pipeline.responses.providers.openai_compat import make
    from epic_levels_pipeline_tests.fakes.openai_server import OpenAITestServer

    ann, cat = bundled
    clip = Clip.from_key(CLIP)
    rows = clip_annotations(ann, clip)
    good = oracle(reference_structure(clip, rows, cat), "clip")

    def reply(body: dict) -> str:
        return good if body["model"] == "good" else '{"references": [{"id": "R1", "name": "plate"}], "events": ['

    frames = []
    with OpenAITestServer(reply, models=("good", "bad")) as server:
        cache = CallCache(tmp_path / "calls.sqlite")
        for model in ("good", "bad"):
            caller = make(model, base_url=server.base_url, cache=cache, provider="vllm")
            frame, _ = model_caption_responses(clip, ClipMediaInfo(reason="no source video"),
                                               ModelRun.of(caller, cache, rpm=100000))
            frames.append(frame)
        bodies = [r["body"] for r in server.requests if r["path"].endswith("/chat/completions")]
        cache.close()
    assert len(bodies) == 2  # one request per model: only no_clip has no media to send
    for body in bodies:
        fmt = body["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "caption"
        assert set(fmt["json_schema"]["schema"]["properties"]) == {"references", "events", "actions", "links"}
    responses = pd.concat(frames, ignore_index=True)
    ok = responses[responses["condition"] == "no_clip"].set_index("model")["status"].to_dict()
    assert ok == {"good": "ok", "bad": "error"}
    _, scored = caption_alignments(caption_references(clip, rows, cat), responses, cat)
    scored = scored[(scored["matcher"] == "greedy") & (scored["condition"] == "no_clip")].set_index("model")
    assert (scored.loc["good", ["event_label_f1", "action_label_f1", "reference_f1", "evsa_f1"]] == 1.0).all()
    assert (scored.loc["bad", ["event_f1", "action_f1", "reference_f1", "evsa_f1"]] == 0.0).all()
    scores = caption_scores(scored.reset_index())
    failures = scores[(scores["metric"] == "parse_failure") & (scores["dataset"] == "*")].set_index("model")["value"]
    assert failures.to_dict() == {"good": 0.0, "bad": 1.0}
