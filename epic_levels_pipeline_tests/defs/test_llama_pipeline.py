"""``epic-levels run`` end to end against a real OpenAI-compatible server: llama.cpp's, serving SmolLM2-135M-Instruct
(the ``llama_server`` fixture; skips, saying why, without pyproject's ``llama`` extra).

Two bundled EPIC-SOUNDS clips, no source video (so ``clip`` and ``silenced`` are skipped rows with the reason, and
only ``no_clip`` is asked: the model reads text only), the model a ``models.toml`` entry with
``structured_output = "json_object"`` (llama.cpp takes no ``json_schema``), judging its own open replies
(``--judge self``), through the real ``openai`` SDK: every question answered as a plain string; the replies parsed by
rule or by the judge; the caption track's captions and judge answered through ``json_object``; scores per condition;
nothing retried in vain. The figures (calls, parse failures, verdicts by rule and by judge) are printed.
"""

import json

from epic_levels_pipeline import cli
from epic_levels_pipeline.responses.calls import Rejections
from epic_levels_pipeline.storage.views import query

from ..fakes.llama_server import MODEL

CLIPS = ["epic_sounds__P09_08__45-75", "epic_sounds__P02_133__15-45"]


def test_llama_cpp_answers_the_no_clip_questions_and_judges_them(project, monkeypatch, capsys, llama_server):
    for var in ("OPENAI_BASE_URL", "EPIC_LEVELS_JUDGE_MODEL", "EPIC_LEVELS_RESPONDERS", "EPIC_LEVELS_RPM",
                "EPIC_LEVELS_CONCURRENCY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a loopback endpoint needs no key, whatever the provider
    Rejections.forget()
    config = project.root / "models.toml"
    config.write_text('evaluate = ["smol"]\n'
                      f'[models.smol]\nprovider = "openai"\nmodel = "{MODEL}"\nendpoint = "{llama_server.base_url}"\n'
                      'structured_output = "json_object"\n')
    argv = ["run", "--clips", *CLIPS, "--responders", "oracle", "--models", "smol", "--judge", "self"]
    assert cli.main(argv) == 0
    printed = capsys.readouterr()
    assert "judging its own replies" in printed.out and "the server rejects" not in printed.err

    responses = query(project.warehouse, "select * from responses where responder = 'openai'")
    by = responses.groupby(["condition", "status"]).size().to_dict()
    assert set(by) == {("clip", "skipped"), ("silenced", "skipped"), ("no_clip", "ok")}, by
    asked = responses[responses["condition"] == "no_clip"]
    assert (asked["route"] == "text").all() and (asked["reply"].str.len() > 0).all()
    assert (asked["prompt_tokens"] > 0).all() and (asked["output_tokens"] > 0).all()
    assert set(asked["endpoint"]) == {llama_server.base_url} and set(asked["model"]) == {"smol"}
    assert set(asked["served_model"]) == {MODEL}
    assert json.loads(asked["model_config"].iloc[0])["structured_output"] == "json_object"

    verdicts = query(project.warehouse, "select * from verdicts where responder = 'openai' and condition = 'no_clip'")
    kinds = verdicts["scored_by"].value_counts().to_dict()
    assert len(verdicts) == len(asked) and kinds.get("error", 0) == 0 and kinds.get("rule", 0) > 0, kinds
    assert sum(kinds.get(k, 0) for k in ("rule", "judge", "unparsed", "undecided")) == len(verdicts)
    scores = query(project.warehouse, "select * from scores where responder = 'openai' and condition = 'no_clip'")
    assert len(scores) and scores["n"].sum() > 0
    captions = query(project.warehouse, "select * from caption_responses where responder = 'openai'")
    caption_status = captions.groupby(["condition", "status"]).size().to_dict()
    assert caption_status.get(("no_clip", "ok"), 0) == len(CLIPS), caption_status  # json_object held to the schema

    # The judge on open replies the rules cannot decide (SmolLM rarely writes "Answer: …", so its own replies are
    # mostly unparsed): replies naming two candidates, imported as another model, judged by the llama.cpp model.
    items = query(project.warehouse, "select item_id, options from items where format = 'open'")
    hedged = project.root / "hedged.jsonl"
    hedged.write_text("".join(json.dumps({"item_id": i, "condition": "no_clip",
                                          "reply": f"Answer: {options[0]}, or perhaps {options[-1]}"}) + "\n"
                              for i, options in zip(items["item_id"], items["options"])))
    assert cli.main(["import-replies", str(hedged), "--model", "hedger"]) == 0
    assert cli.main(argv) == 0  # smol's answers from the call cache; the judge asked about the hedged replies
    again = query(project.warehouse, "select * from responses where responder = 'openai' and condition = 'no_clip'")
    assert len(again) == len(asked) and again["cached"].all()
    judged = query(project.warehouse, "select * from verdicts where responder = 'external' and model = 'hedger' "
                                      "and scored_by <> 'skipped'")  # items without a hedged reply: skipped
    hedger_kinds = judged["scored_by"].value_counts().to_dict()
    by_judge = judged[judged["scored_by"] == "judge"]
    assert len(judged) == len(items) and len(by_judge) > 0, hedger_kinds
    assert set(by_judge["judge_endpoint"]) == {llama_server.base_url} and not by_judge["self_judged"].any()
    failed = judged[judged["scored_by"] == "undecided"]  # the judge's reply unusable (or its call failed)
    printed = capsys.readouterr()
    assert "the server rejects" not in printed.err

    print(f"\nllama.cpp ({MODEL}) through epic-levels run, {len(CLIPS)} clips, no_clip: {len(asked)} questions answered "
          f"({asked['cache_key'].nunique()} distinct calls; {asked['prompt_tokens'].sum()} prompt and "
          f"{asked['output_tokens'].sum()} output tokens); its verdicts {kinds}; captions {caption_status}; "
          f"scores rows {len(scores)}; {len(items)} hedged open replies: {hedger_kinds}, "
          f"{int(by_judge['correct'].sum())} of the judge's correct, {len(failed)} left undecided")
