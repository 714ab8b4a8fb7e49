"""The caption track's semantic layer against local fake judge servers (the real openai SDK): the oracle scores 5
of 5, a responder with corrupted labels lower; per clip and pooled; the schema gate; no judge, no scores; two
judges compared and swapped."""

import math

import numpy as np
import pandas as pd
import pytest

from epic_levels_pipeline.captions import caption_references, caption_scores
from epic_levels_pipeline.captions import track
from epic_levels_pipeline.captions.models import caption_judge, semantic_judge
from epic_levels_pipeline.captions.panel import CaptionPanel
from epic_levels_pipeline.captions.semantic import NO_JUDGE_NOTE, SEMANTIC_METRICS, semantic_prompt
from epic_levels_pipeline.captions.sources import Clip, clip_annotations
from epic_levels_pipeline.responses.cache import CallCache
from epic_levels_pipeline.responses.providers.openai_compat import make
from epic_levels_pipeline.scoring.judge_audit import all_agreement, caption_swap
from epic_levels_pipeline_tests.fakes.judge_server import judge_reply
from epic_levels_pipeline_tests.fakes.openai_server import OpenAITestServer, prompt_text

CLIPS = ["epic_sounds__P09_08__45-75", "hd_epic__P09-20240623-120359__1440-1470"]
RESPONDERS = ("oracle", "corrupted")


@pytest.fixture(scope="module")
def captions(bundled):
    ann, cat = bundled
    refs, responses = [], []
    for key in CLIPS:
        clip = Clip.from_key(key)
        r = caption_references(clip, clip_annotations(ann, clip), cat)
        refs.append(r)
        responses.append(track.caption_responses(clip, r, cat, RESPONDERS, conditions=["clip"]))
    return pd.concat(refs, ignore_index=True), pd.concat(responses, ignore_index=True), cat


def _judge(server, cache, name: str):
    caller = make(name, base_url=server.base_url, cache=cache, provider="vllm")
    limits = {"model": name, "rpm": 100000, "concurrency": 8}  # a local server: no request-rate limit
    return caption_judge(caller, cache, **limits), semantic_judge(caller, cache, **limits)


def test_oracle_five_of_five_corrupted_lower_per_clip_and_pooled(captions, tmp_path):
    refs, responses, cat = captions
    with OpenAITestServer(judge_reply("reader"), models=("reader",)) as server:
        cache = CallCache(tmp_path / "calls.sqlite")
        panel = CaptionPanel({"reader": _judge(server, cache, "reader")}, "reader")
        alignments, scored = track.caption_alignments(refs, responses, cat, panel)
        prompts = [prompt_text(r["body"]) for r in server.requests if r["path"].endswith("/chat/completions")]
        cache.close()
    greedy = scored[scored["matcher"] == "greedy"].set_index(["clip_key", "responder"])
    for key in CLIPS:
        oracle = greedy.loc[(key, "oracle")]
        present = [m for m in SEMANTIC_METRICS if not math.isnan(oracle[m])]
        assert present and all(oracle[m] == 5.0 for m in present), key  # identical descriptions: 5 by rule
        corrupted = greedy.loc[(key, "corrupted")]
        assert all(corrupted[m] < 4.0 for m in present), (key, corrupted[present].to_dict())
        assert corrupted["action_label_f1"] < 1.0 and corrupted["action_f1"] == 1.0  # aligned, but wrong words
    assert not track.oracle_problems(scored)
    assert any("Scale: A = 1" in p for p in prompts)  # the 1–5 scale is stated in the prompt
    assert not any("start_s" in p or "P09" in p for p in prompts)  # descriptions only: no clip, no times
    pairs = alignments[(alignments["matcher"] == "greedy") & alignments["semantic_precision"].notna()]
    assert set(pairs["unit"]) >= {"action", "reference"}

    table = caption_scores(scored)
    top = table[(table["dataset"] == "*") & (table["matcher"] == "greedy")].set_index(["responder", "metric"])
    assert top.loc[("oracle", "schema_gate"), "value"] == 1.0 and top.loc[("corrupted", "schema_gate"), "value"] == 1.0
    for m in ("semantic_action_p", "semantic_action_r"):
        per_clip = greedy.xs("corrupted", level="responder")
        n = per_clip["n_semantic_action"]
        assert top.loc[("corrupted", m), "value"] == pytest.approx(per_clip[m].mean())  # per clip, then over clips
        assert top.loc[("corrupted", f"{m}_pooled"), "value"] == pytest.approx((per_clip[m] * n).sum() / n.sum())
        assert top.loc[("corrupted", f"{m}_pooled"), "n"] == n.sum()


def test_no_judge_leaves_the_semantic_columns_empty(captions):
    refs, responses, cat = captions
    _, scored = track.caption_alignments(refs, responses, cat, None)
    assert scored[SEMANTIC_METRICS].isna().all().all() and (scored["n_semantic_unscored"] == 0).all()
    assert "no judge" in NO_JUDGE_NOTE
    table = caption_scores(scored)
    semantic = table[table["metric"].str.startswith("semantic_")]
    assert len(semantic) and semantic["value"].isna().all()


def test_two_judges_disagree_and_swap_the_semantic_scores(captions, tmp_path):
    refs, responses, cat = captions
    with OpenAITestServer(judge_reply("reader"), models=("reader",)) as reader, \
            OpenAITestServer(judge_reply("first"), models=("lenient",)) as lenient:
        cache = CallCache(tmp_path / "calls.sqlite")
        panel = CaptionPanel({"reader": _judge(reader, cache, "reader"), "lenient": _judge(lenient, cache, "lenient")},
                             "reader")
        _, scored = track.caption_alignments(refs, responses, cat, panel)
        partials = track.caption_judge_partials(refs, responses, cat, panel)
        votes = track.caption_judge_votes(panel).assign(clip_key="all")
        cache.close()
    swap = caption_swap(partials).set_index(["metric", "responder", "judge"])
    key = ("semantic_action_p", "corrupted")
    assert swap.loc[(*key, "lenient"), "value"] == 5.0 and swap.loc[(*key, "reader"), "shift"] == 0.0
    assert swap.loc[(*key, "lenient"), "shift"] > 1.0  # the lenient judge lifts the corrupted captions
    assert swap.loc[("semantic_action_p", "oracle", "lenient"), "shift"] == 0.0  # rule-scored: no judge moves it
    agreement = all_agreement(pd.DataFrame(columns=["item_id", "responder", "model", "condition", "judge",
                                                    "outcome", "choice"]), votes).set_index(["track", "judge_a", "judge_b"])
    semantic = agreement.loc[("caption_semantic", "lenient", "reader")]
    assert semantic["n"] > 0 and semantic["agreement"] < 1.0 and semantic["krippendorff_alpha"] < 0.5
    assert ("caption_label", "*", "*") in agreement.index


def test_the_prompt_states_the_scale_and_the_direction():
    recall = semantic_prompt("action", "wash the plate", "rinse a plate", "recall")
    precision = semantic_prompt("action", "wash the plate", "rinse a plate", "precision")
    assert "First: wash the plate" in recall and "Second: rinse a plate" in recall
    assert "the FIRST description states does the SECOND" in recall
    assert "the SECOND description states does the FIRST" in precision
    assert "E = 5" in recall and "A = 1" in recall and np.all([("contradicted" in p) for p in (recall, precision)])
