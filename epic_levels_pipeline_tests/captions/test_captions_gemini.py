"""Caption replies from the local Gemini-compatible server through the real ``google-genai`` SDK, with the
caption schema as ``response_schema``: a well-formed caption and a malformed one, scored end to end."""

import json

import pandas as pd
from google import genai
from google.genai import types

from epic_levels_pipeline.captions import caption_alignments, caption_references, caption_scores
from epic_levels_pipeline.captions.prompt import caption_prompt
from epic_levels_pipeline.captions.reference import reference_structure
from epic_levels_pipeline.captions.responders import oracle
from epic_levels_pipeline.captions.schema import gemini_generation_config
from epic_levels_pipeline.captions.sources import Clip, clip_annotations
from epic_levels_pipeline_tests.fakes.gemini_server import GeminiTestServer


def test_schema_constrained_gemini_replies_are_scored(bundled):
    ann, cat = bundled
    clip = Clip.from_key("epic_sounds__P09_08__45-75")
    rows = clip_annotations(ann, clip)
    refs = caption_references(clip, rows, cat)
    replies = [oracle(reference_structure(clip, rows, cat), "clip"),
               '```json\n{"references": [{"id": "R1", "name": "plate"}], "events": [{"id": "E1", "start_s": 2\n```']
    with GeminiTestServer(reply_fn=lambda body: replies.pop(0)) as server:
        client = genai.Client(api_key="test-key-not-secret", http_options=types.HttpOptions(base_url=server.base_url))
        config = types.GenerateContentConfig(**gemini_generation_config())
        prompt = caption_prompt(clip, "clip")
        texts = [client.models.generate_content(model="gemini-test", contents=prompt, config=config).text
                 for _ in range(2)]
        sent = server.generate_requests
    for body in sent:
        generation = body["generationConfig"]
        assert generation["responseMimeType"] == "application/json"
        schema = generation.get("responseSchema") or generation.get("responseJsonSchema")
        assert {"references", "events", "actions", "links"} <= set(json.dumps(schema).replace('"', " ").split())
    responses = pd.DataFrame([{"clip_key": clip.key, "dataset": clip.dataset, "condition": "clip", "responder": "gemini",
                               "model": f"gemini-test#{i}", "prompt": prompt, "reply": t, "status": "ok", "error": None}
                              for i, t in enumerate(texts)])
    _, scored = caption_alignments(refs, responses, cat)
    good, bad = (scored[(scored["model"] == f"gemini-test#{i}") & (scored["matcher"] == "greedy")] for i in (0, 1))
    assert good["parsed"].all() and (good[["event_label_f1", "action_label_f1", "evsa_f1", "reference_f1"]] == 1.0).all().all()
    assert not bad["parsed"].any() and bad["parse_error"].iat[0].startswith("invalid JSON")
    assert (bad[["event_f1", "action_f1", "reference_f1", "evsa_f1"]] == 0).all().all()
    scores = caption_scores(scored)
    failures = scores[(scores["metric"] == "parse_failure") & (scores["dataset"] == "*") & (scores["matcher"] == "greedy")]
    assert sorted(failures["value"]) == [0.0, 1.0]
