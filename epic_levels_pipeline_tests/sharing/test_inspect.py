"""Inspect AI both ways: the task over the export run with ``mockllm/model`` and imported back; a run's
verdicts written as eval logs and read back with Inspect's reader."""

from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import ContentVideo, ModelOutput, ModelUsage, get_model

from epic_levels_pipeline.cli import main
from epic_levels_pipeline.sharing.export import load_export
from epic_levels_pipeline.sharing.inspect_task import epic_levels, samples
from epic_levels_pipeline.sharing.replies import stored_models
from epic_levels_pipeline.warehouse import TableStore, write_parquet


def test_mockllm_run_imports_back(exported, tmp_path, monkeypatch, capsys):
    paths, out = exported
    monkeypatch.setenv("EPIC_LEVELS_HOME", str(paths.root))
    task = epic_levels(export=str(out), condition="no_clip", limit_per_format=3)
    # Outputs with their usage stated: mockllm otherwise counts tokens with a tokenizer it downloads.
    reply = ModelOutput.from_content("mockllm/model", "Answer: A")
    reply.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    model = get_model("mockllm/model", custom_outputs=[reply] * 18)
    [log] = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success" and len(log.samples) == 18
    rows = load_export(out).set_index("item_id")
    first = log.samples[0]
    assert first.input[0].content == rows.loc[first.metadata["item_id"], "prompt"]  # the same prompt, text only
    assert main(["import-replies", "--inspect-log", log.location, "--model", "mock"]) == 0
    assert "imported 18 replies" in capsys.readouterr().out
    stored = stored_models(paths.data)["mock"]
    assert set(stored["condition"]) == {"no_clip"} and len(stored) == 18
    (paths.data / "replies" / "mock.parquet").unlink()


def test_clip_condition_sends_the_video(exported, tmp_path):
    _, out = exported
    rows = load_export(out)
    clip = rows["clip_id"].iloc[0]
    (tmp_path / f"{clip}.mp4").write_bytes(b"\0")
    chosen, missing = samples(out, "clip", tmp_path)
    assert len(chosen) == (rows["clip_id"] == clip).sum() and missing == len(rows) - len(chosen)
    video, text = chosen[0].input[0].content
    assert isinstance(video, ContentVideo) and video.video.endswith(f"{clip}.mp4")
    assert text.text == rows.set_index("item_id").loc[chosen[0].metadata["item_id"], "prompt"]


def test_run_written_as_inspect_logs(exported, offline_bank, tmp_path, monkeypatch):
    paths, _ = exported
    store = TableStore(paths.assets)
    verdicts = offline_bank["verdicts"]
    clips = sorted(verdicts["clip_key"].unique())[:1]  # every responder and condition of one clip
    for clip in clips:
        write_parquet(verdicts[verdicts["clip_key"] == clip].reset_index(drop=True), store.path("verdicts", clip))
    monkeypatch.setenv("EPIC_LEVELS_HOME", str(paths.root))
    assert main(["inspect-logs", "--out", str(tmp_path / "logs")]) == 0
    mine = verdicts[verdicts["clip_key"].isin(clips)]
    logs = sorted((tmp_path / "logs").glob("*.eval"))
    assert len(logs) == mine[["responder", "model"]].drop_duplicates().shape[0]
    for path in logs:
        log = read_eval_log(str(path))
        rows = mine[mine["responder"] == log.eval.metadata["responder"]]
        assert len(log.samples) == len(rows)
        assert {s.id for s in log.samples} == {f"{r.item_id}|{r.condition}" for r in rows.itertuples()}
        for s in log.samples[:50]:
            row = rows[(rows["item_id"] == s.metadata["item_id"]) & (rows["condition"] == s.metadata["condition"])].iloc[0]
            assert s.metadata["scored_by"] == row["scored_by"] and s.metadata["format"] == row["format"]
            if row["scored_by"] in ("rule", "unparsed"):
                assert s.scores["epic_levels_rules"].value == ("C" if row["correct"] else "I")
    for clip in clips:
        store.path("verdicts", clip).unlink()
