"""Two judges through the whole graph (``epic-levels run``), and a judge that times out, against local fake
servers answering differently (``fakes/judge_server.py``; the real ``openai`` SDK)."""

import json

import pandas as pd

from epic_levels_pipeline import cli
from epic_levels_pipeline.defs.evaluation import EvaluationResource
from epic_levels_pipeline.defs.judging import qa_judge
from epic_levels_pipeline.responses.cache import CallCache
from epic_levels_pipeline.scoring.metrics.partials import score_partials, scores_from_partials
from epic_levels_pipeline.scoring.verdicts import verdicts as make_verdicts
from epic_levels_pipeline.storage.views import query

from ..fakes.judge_server import judge_reply
from ..fakes.openai_server import OpenAITestServer

CLIPS = ["epic_sounds__P09_08__45-75", "hd_epic__P09-20240623-120359__1440-1470"]


def entry(name: str, server, timeout_s: float = 30) -> str:
    return (f'[models.{name}]\nprovider = "vllm"\nmodel = "{name}"\nendpoint = "{server.base_url}"\n'
            f"timeout_s = {timeout_s}\n")


def test_two_judges_through_the_graph(project, monkeypatch, capsys):
    monkeypatch.setenv("EPIC_LEVELS_CONCURRENCY", "16")
    with OpenAITestServer(judge_reply("reader"), models=("reader",)) as reader, \
            OpenAITestServer(judge_reply("first"), models=("positional",)) as positional:
        (project.root / "models.toml").write_text('judge = "reader"\njudges = ["reader", "positional"]\n\n'
                                                  + entry("reader", reader) + "\n" + entry("positional", positional))
        argv = ["run", "--clips", ",".join(CLIPS), "--responders", "oracle,chance,blind,presence"]
        assert cli.main(argv) == 0
        asked = reader.chat_calls, positional.chat_calls
    capsys.readouterr()
    assert all(asked), asked
    verdicts = query(project.warehouse, "select * from verdicts where judge_votes <> ''")
    assert len(verdicts) and set(verdicts["judge_model"]) == {"reader"}
    votes = [{v["judge"] for v in json.loads(x)} for x in verdicts["judge_votes"]]
    assert all(v == {"reader", "positional"} for v in votes)

    agreement = query(project.warehouse, "select * from judge_agreement").set_index(["track", "judge_a", "judge_b"])
    qa = agreement.loc[("qa", "positional", "reader")]
    assert qa["n"] == len(verdicts) and qa["agreement"] < 1 and qa["cohen_kappa"] < 1
    assert pd.notna(agreement.loc[("qa", "*", "*"), "krippendorff_alpha"])
    assert agreement.loc[("caption_semantic", "positional", "reader"), "n"] > 0

    swap = query(project.warehouse, "select * from judge_swap")
    qa_swap = swap[(swap["track"] == "qa") & (swap["condition"] == "clip")].set_index(["responder", "judge"])
    assert set(qa_swap.index.get_level_values("judge")) == {"verdict", "reader", "positional"}
    assert (qa_swap.xs("reader", level="judge")["shift"].abs() < 1e-12).all()  # the verdict is reader's
    assert qa_swap.xs("positional", level="judge")["shift"].abs().max() > 0
    assert qa_swap.loc[("oracle", "positional"), "shift"] == 0  # decided by rule: nothing to swap
    assert qa_swap["spearman_rho"].notna().any()
    semantic = swap[swap["track"] == "caption_semantic"]
    assert len(semantic) and semantic["judge"].nunique() == 3

    captions = query(project.warehouse, "select * from caption_scores where dataset = '*' and matcher = 'greedy'")
    oracle = captions[(captions["responder"] == "oracle") & (captions["condition"] == "clip")].set_index("metric")
    assert oracle.loc["semantic_action_p", "value"] == 5.0 and oracle.loc["schema_gate", "value"] == 1.0
    corrupted = captions[(captions["responder"] == "corrupted") & (captions["condition"] == "clip")].set_index("metric")
    assert corrupted.loc["semantic_action_p", "value"] < 5.0
    report = (project.reports / "report.md").read_text()
    assert "Judges compared" in report and "semantic layer" in report


def test_a_judge_that_times_out_is_judge_failed(project, offline_bank, tmp_path, monkeypatch):
    items = offline_bank["items"]
    items = items[items["clip_key"] == CLIPS[0]]
    open_items = items[(items["base_format"] == "open") & (items["answer_type"] != "number")]  # names
    responses = offline_bank["responses"]
    responses = responses[responses["item_id"].isin(open_items["item_id"]) & (responses["responder"] == "oracle")]
    options = dict(zip(open_items["item_id"], open_items["options"]))
    responses = responses.assign(reply=[f"Answer: {options[i][0]} or {options[i][1]}"  # undecided by the rules
                                        for i in responses["item_id"]])
    with OpenAITestServer(judge_reply("reader"), models=("slow",), latency_s=2.0) as slow, \
            OpenAITestServer(judge_reply("reader"), models=("reader",)) as reader:
        config = tmp_path / "models.toml"
        config.write_text('judge = "slow"\njudges = ["slow", "reader"]\n\n' + entry("slow", slow, timeout_s=0.2)
                          + "\n" + entry("reader", reader))
        cache = CallCache(tmp_path / "calls.sqlite")
        judge, label = qa_judge(EvaluationResource(model_config_file=str(config), models=""), cache)
        v = make_verdicts(responses, items, judge=judge)
        cache.close()
    assert "slow, reader (verdict: slow)" in label
    assert len(v) and set(v["scored_by"]) == {"judge_failed"} and v["correct"].isna().all()
    assert v["note"].str.startswith("judge failed").all()
    outcomes = {(d["judge"], d["outcome"]) for x in v["judge_votes"] for d in json.loads(x)}
    assert ("slow", "failed") in outcomes and ("reader", "chose") in outcomes
    partials = score_partials(v)
    assert partials["n_judge_failed"].sum() == len(v) and partials["n"].sum() == 0  # left out, never counted wrong
    s = scores_from_partials(partials, n_boot=10)
    assert (s["n_judge_failed"] > 0).all() and s["accuracy_strict"].isna().all()
