"""Inspect AI both ways: the task over the export run with ``mockllm/model`` and imported back; a run's
verdicts written as eval logs and read back with Inspect's reader."""

from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import ContentVideo, ModelOutput, ModelUsage, get_model

from epic_levels_pipeline.cli import main
from epic_levels_pipeline.sharing.export import load_export
from epic_levels_pipeline.sharing.inspect_task import epic_levels, samples
from epic_levels_pipeline.sharing.replies import stored_models
from epic_levels_pipeline.storage.parquet import write_parquet
from epic_levels_pipeline.storage.table_store import TableStore


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


def test_the_documented_inspect_command_runs_the_clip_condition(exported, tmp_path, monkeypatch, capsys):
    """The command of docs/sharing.md, as written, with only what this machine needs added: the local server that
    speaks Gemini's API (``--model-base-url``), a folder of cut windows, a log folder and a few samples. Inspect's
    ``google`` provider uploads the window and asks about it; the log is imported back and scored."""
    import os
    import re
    import shlex
    import subprocess
    import sys
    from pathlib import Path

    from epic_levels_pipeline.responses.media import make_test_video

    from ..fakes.gemini_server import GeminiTestServer

    paths, out = exported
    docs = (Path(__file__).resolve().parents[2] / "docs" / "sharing.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(GOOGLE_API_KEY=… inspect eval .*?)\n(epic-levels import-replies .*?)\n```", docs)
    assert block, "docs/sharing.md no longer shows the Inspect command this test runs"
    command = shlex.split(block.group(1).replace("GOOGLE_API_KEY=… ", "").replace("DIR", str(out)))
    clip = load_export(out)["clip_id"].iloc[0]
    media = tmp_path / "clips"
    make_test_video(media / f"{clip}.mp4", 3.0)
    inspect = str(Path(sys.executable).parent / "inspect")
    with GeminiTestServer(reply_fn=lambda body: "Answer: A", processing_polls=0) as server:
        env = {**os.environ, "GOOGLE_API_KEY": "test-key", "XDG_DATA_HOME": str(tmp_path / "data-home")}
        done = subprocess.run([inspect, *command[1:], "--model-base-url", server.base_url, "-T", f"media={media}",
                               "-T", "formats=multiple_choice", "--limit", "3", "--log-dir", str(tmp_path / "logs"),
                               "--display", "none"], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        assert server.uploads == 1 and server.generate_ok == 3  # the window uploaded once, asked about three times
        sent = server.generate_requests[0]
    assert any("fileData" in part for content in sent["contents"] for part in content["parts"])
    [log] = sorted((tmp_path / "logs").glob("*.eval"))
    assert read_eval_log(str(log)).eval.task_args["condition"] == "clip"
    monkeypatch.setenv("EPIC_LEVELS_HOME", str(paths.root))
    importing = shlex.split(block.group(2).replace("logs/LOG.eval", str(log)))
    assert main(importing[1:]) == 0
    assert "imported 3 replies as external/gemini-2.5-flash" in capsys.readouterr().out
    (paths.data / "replies" / "gemini-2.5-flash.parquet").unlink()
