"""``epic-levels run --models NAME --judge self`` end to end against the local OpenAI-compatible server.

The model is a ``models.toml`` entry: a vLLM server serving an Omni model under a name without "omni"
(``--served-model-name qwen``), configured ``audio = "in_video"``. The real ``openai`` SDK drives the whole
graph on two bundled EPIC-SOUNDS clips whose source videos are synthetic (``make_test_video``), so ``clip`` and
``silenced`` have video: every media request carries ``use_audio_in_video``; responses carry the resolved
``model_config``; responses and verdicts carry the provider, model and endpoint; the judge (the same model,
asked for with ``--judge self``) is named in its verdict rows and in ``judge_audit``, and marked self-judged;
a re-run makes no call; and a canary API key set in the environment is sent to the server but written
nowhere under the project folder (warehouse, Parquet, call cache, Dagster's storage and logs, the report).
"""

import json
from pathlib import Path

import pytest

from epic_levels_pipeline import cli
from epic_levels_pipeline.captions.models import JUDGE_INSTRUCTION
from epic_levels_pipeline.captions.semantic import SCALE_MARK as SEMANTIC_SCALE
from epic_levels_pipeline.responses.media import make_test_video
from epic_levels_pipeline.storage.views import query

from ..fakes.openai_server import OpenAITestServer, default_reply, message_parts, prompt_text
from .test_model_pipeline import scripted_answer


CLIPS = ["epic_sounds__P09_08__45-75", "epic_sounds__P02_133__15-45"]
MODEL = "qwen"  # an Omni model served as `qwen`: its audio route is configured, not guessed
CANARY = "sk-canary-3b7e91d04c5a4f2e8d6b"
JUDGE = "You check what a short answer means"
CAPTION = "Describe it as a structured caption"
CAPTION_JUDGE = JUDGE_INSTRUCTION


def reply(body: dict) -> str:
    if "response_format" in body:  # the judge: structured output satisfying the schema
        return default_reply(body)
    return scripted_answer(prompt_text(body))


def files_holding(root: Path, secret: bytes) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and secret in p.read_bytes()]


def test_vllm_model_runs_the_whole_graph_with_identity_and_no_key_anywhere(project, monkeypatch, capsys):
    # its own project and instance, not a graph_copy: the CLI's own project instance, a vLLM model; and no file may hold the key, so none is copied in
    make_test_video(project.media / "epic_sounds" / "P09_08.mp4", 80.0)
    make_test_video(project.media / "epic_sounds" / "P02_133.mp4", 50.0)
    for var in ("OPENAI_API_KEY", "VLLM_BASE_URL", "EPIC_LEVELS_JUDGE_MODEL", "EPIC_LEVELS_RESPONDERS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("VLLM_API_KEY", CANARY)
    monkeypatch.setenv("EPIC_LEVELS_RPM", "100000")
    monkeypatch.setenv("EPIC_LEVELS_CONCURRENCY", "16")
    with OpenAITestServer(reply, models=(MODEL,), api_key=CANARY, strict_models=True) as server:
        config = project.root / "models.toml"
        config.write_text(f'evaluate = ["omni"]\n[models.omni]\nprovider = "vllm"\nmodel = "{MODEL}"\nendpoint = "{server.base_url}"\n'
                          'audio = "in_video"\napi_key_env = "VLLM_API_KEY"\n')
        argv = ["run", "--clips", ",".join(CLIPS), "--responders", "oracle", "--models", "omni", "--judge", "self"]
        assert cli.main(argv) == 0
        printed = capsys.readouterr().out
        assert "omni: video: video_url (default for vllm)" in printed and "judging its own replies" in printed
        assert server.received_key(CANARY) and server.rejected == 0

        responses = query(project.warehouse, "select * from responses where responder = 'vllm'")
        assert set(responses["condition"]) == {"clip", "no_clip", "silenced"}
        assert (responses["status"] == "ok").all(), responses.loc[responses["status"] != "ok", "error"].head()
        assert set(zip(responses["provider"], responses["model"], responses["served_model"], responses["endpoint"])) == {
            ("vllm", "omni", MODEL, server.base_url)}
        routes = responses.groupby("condition")["route"].unique().to_dict()
        assert list(routes["no_clip"]) == ["text"]
        assert list(routes["clip"]) == list(routes["silenced"]) == ["video=video_url;audio=use_audio_in_video"]
        bodies = [b for b in server.chat_bodies() if "response_format" not in b]
        video = [b for b in bodies if any(p.get("type") == "video_url" for p in message_parts(b))]
        # every video request reads the video's own track, but the media-integrity one of each clip (audio left out)
        integrity = [b for b in video if "mm_processor_kwargs" not in b]
        assert len(integrity) == len(CLIPS)
        assert all(b.get("mm_processor_kwargs") == {"use_audio_in_video": True} for b in video if b not in integrity)
        assert not any(p.get("type") == "input_audio" for b in bodies for p in message_parts(b))
        assert all(isinstance(b["messages"][-1]["content"], str) for b in bodies if b not in video)  # text: a string
        config_json = set(responses["model_config"])
        assert len(config_json) == 1 and json.loads(config_json.pop())["audio"] == "in_video"
        assert all(b["model"] == MODEL for b in server.chat_bodies())
        offline = query(project.warehouse, "select distinct provider, endpoint from responses where responder = 'oracle'")
        assert offline.values.tolist() == [["offline", ""]]

        verdicts = query(project.warehouse, "select * from verdicts where responder = 'vllm'")
        assert set(zip(verdicts["provider"], verdicts["model"], verdicts["endpoint"])) == {
            ("vllm", "omni", server.base_url)}
        judged = verdicts[verdicts["scored_by"] == "judge"]
        assert len(judged) and (verdicts["scored_by"] != "undecided").all()
        assert set(zip(judged["judge_provider"], judged["judge_model"], judged["judge_endpoint"])) == {
            ("vllm", "omni", server.base_url)}
        assert (verdicts.loc[verdicts["scored_by"] != "judge", "judge_provider"] == "").all()
        assert judged["self_judged"].all() and not verdicts.loc[verdicts["scored_by"] != "judge", "self_judged"].any()
        # structured-output requests: the caption track's captions (with their media), and the two judges (text only)
        structured = [b for b in server.chat_bodies() if "response_format" in b]
        captions = [b for b in structured if CAPTION in prompt_text(b)]
        judged_bodies = [b for b in structured if CAPTION not in prompt_text(b)]
        judge_prompts = [prompt_text(b) for b in judged_bodies]
        assert captions and any(JUDGE in p for p in judge_prompts)
        assert all((JUDGE in p or CAPTION_JUDGE in p) and "Candidates:" in p or SEMANTIC_SCALE in p
                   for p in judge_prompts)  # the QA and caption label judges, and the semantic layer's 1-5 scale
        assert all(isinstance(b["messages"][-1]["content"], str) for b in judged_bodies)  # text only
        audit = query(project.warehouse, "select * from judge_audit")
        assert set(zip(audit["judge_provider"], audit["judge_model"], audit["judge_endpoint"])) == {
            ("vllm", "omni", server.base_url)}
        marked = audit.set_index("responder")["self_judged"].to_dict()
        assert marked["vllm"] and not marked.get("oracle", False)  # the oracle's replies: another model's
        assert "Self-judged: omni judged its own open replies" in (project.reports / "report.md").read_text()
        assert (project.reports / "report.md").is_file()

        calls = server.chat_calls
        assert cli.main(argv) == 0
        assert server.chat_calls == calls  # the re-run is served from the call cache: 0 calls

    capsys.readouterr()
    assert files_holding(project.root, CANARY.encode()) == []
    assert any(project.root.rglob("*.db")) or any(project.root.rglob("*.sqlite")), "expected Dagster/cache storage"


def route_reply(body: dict) -> str:
    """The in-video route (``use_audio_in_video``) answers B / no where the other routes answer A / yes."""
    if "response_format" in body:
        return default_reply(body)
    answer = scripted_answer(prompt_text(body))
    if (body.get("mm_processor_kwargs") or {}).get("use_audio_in_video"):
        return answer.replace("Answer: A", "Answer: B").replace("Answer: yes", "Answer: no")
    return answer


def test_two_routes_of_one_served_model_are_two_models_and_compared(project, monkeypatch, capsys):
    """Two models-file entries for one served model (audio in the video / beside it): two rows in scores, and a
    model pair in paired_comparisons (per level x condition x format), under the leaderboard in the report and
    at the end of run."""
    make_test_video(project.media / "epic_sounds" / "P09_08.mp4", 80.0)
    make_test_video(project.media / "epic_sounds" / "P02_133.mp4", 50.0)
    for var in ("OPENAI_API_KEY", "VLLM_BASE_URL", "EPIC_LEVELS_JUDGE_MODEL", "EPIC_LEVELS_RESPONDERS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("EPIC_LEVELS_RPM", "100000")
    with OpenAITestServer(route_reply, models=(MODEL,), strict_models=True) as server:
        entry = f'provider = "vllm"\nmodel = "{MODEL}"\nendpoint = "{server.base_url}"\n'
        (project.root / "models.toml").write_text(
            'evaluate = ["qwen_iv", "qwen_sep"]\n'
            f'[models.qwen_iv]\n{entry}audio = "in_video"\n[models.qwen_sep]\n{entry}audio = "separate"\n')
        assert cli.main(["run", "--clips", ",".join(CLIPS), "--responders", "oracle"]) == 0
        printed = capsys.readouterr().out
    scores = query(project.warehouse, """
        SELECT responder, model, condition, n, accuracy, chance_corrected, ci_low, ci_high FROM scores
        WHERE dataset = '*' AND level = '*' AND subtype = '*' AND format = '*' AND responder = 'vllm'
        ORDER BY model, condition""")
    print(scores.round(3).to_string(index=False))
    assert list(zip(scores["model"], scores["condition"])) == [
        (m, c) for m in ("qwen_iv", "qwen_sep") for c in ("clip", "no_clip", "silenced")]
    pairs = query(project.warehouse, """
        SELECT * FROM paired_comparisons WHERE kind = 'model' ORDER BY condition, level, format""")
    top = pairs[(pairs["level"] == "*") & (pairs["format"] == "*")]
    print(top.drop(columns=["kind"]).round(4).to_string(index=False))
    assert set(zip(pairs["responder"], pairs["model"], pairs["a"], pairs["b"])) == {("*", "*", "qwen_iv", "qwen_sep")}
    assert list(top["condition"]) == ["clip", "no_clip", "silenced"]
    by = top.set_index("condition")
    both = scores.set_index(["model", "condition"])
    for condition in ("clip", "no_clip", "silenced"):
        row = by.loc[condition]
        assert row["n_pairs"] == both.loc[("qwen_iv", condition), "n"] == both.loc[("qwen_sep", condition), "n"]
        assert row["accuracy_a"] == pytest.approx(both.loc[("qwen_iv", condition), "accuracy"])
        assert row["accuracy_b"] == pytest.approx(both.loc[("qwen_sep", condition), "accuracy"])
        assert row["diff"] == pytest.approx(row["accuracy_a"] - row["accuracy_b"])
        assert row["diff_ci_low"] <= row["diff"] <= row["diff_ci_high"]
    # text only, the two routes send the same request: the same answers; with the clip they differ
    assert by.loc["no_clip", "only_a"] == by.loc["no_clip", "only_b"] == 0 and by.loc["no_clip", "mcnemar_p"] == 1.0
    assert by.loc["clip", "only_a"] + by.loc["clip", "only_b"] > 0
    assert {"L1", "L2", "*"} <= set(pairs["level"]) and {"yes_no", "multiple_choice", "*"} <= set(pairs["format"])
    below = printed[printed.index("Models compared on the same items"):]
    line = next(line for line in below.splitlines() if line.startswith("qwen_iv "))
    assert line.split()[:2] == ["qwen_iv", "qwen_sep"] and line.split()[-1] == str(by.loc["clip", "n_pairs"]), below
    report = (project.reports / "report.md").read_text()
    assert "| qwen_iv vs qwen_sep | clip |" in report and "A = qwen_iv, B = qwen_sep:" in report
