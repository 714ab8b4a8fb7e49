"""The whole graph with a Gemini model through the real google-genai SDK against the local test server:
media cut and silenced by ffmpeg, uploaded once per file, every item × condition answered, cached; after one
clip's annotations change only that clip's changed prompts are asked again (cache hits for the rest)."""

import pytest

from epic_levels_pipeline.captions.semantic import SCALE_MARK
from epic_levels_pipeline.captions.models import JUDGE_INSTRUCTION as CAPTION_JUDGE
from epic_levels_pipeline.responses.media import make_test_video
from epic_levels_pipeline.orchestration.local import run_pipeline
from epic_levels_pipeline.storage.views import query

from ..fakes.gemini_server import GeminiTestServer
from ..conftest import declare_models
from .conftest import QUIET



def reply(request: dict) -> str:
    text = str(request)
    if "You check what a short answer means" in text or CAPTION_JUDGE in text or SCALE_MARK in text:  # the judges
        return '{"choice": "none"}'
    if CAPTION in text:  # the caption track: an empty caption (valid against its schema)
        return '{"references": [], "events": [], "actions": [], "links": []}'
    return scripted_answer(text)


def scripted_answer(text: str) -> str:
    """A well-formed reply in the format the prompt asks for (the open one names the key of no question)."""
    if "Answer: <yes/no>" in text:
        return "Answer: yes"
    if "Answer: <letter>" in text:
        return "Answer: A"
    if "Answer: <letters" in text:
        return "Answer: A, C"
    if "A: <true/false>" in text:
        return "A: true\nB: false\nC: false\nD: false"
    return "Answer: the blueberries"


JUDGE = "You check what a short answer means"
CAPTION = "structured caption"


def answer_calls(server) -> int:
    """Calls answering the QA track's items (not the judges', not the caption track's, not its semantic layer's, not
    the media-integrity requests)."""
    return sum(all(t not in p for t in (JUDGE, CAPTION, CAPTION_JUDGE, SCALE_MARK)) for p in server.prompts()) \
        - integrity_calls(server)


def integrity_calls(server) -> int:
    """Generate requests naming a clip's copy without its audio track (the media-integrity request)."""
    return sum(is_integrity(server, body) for body in list(server.generate_requests))


def is_integrity(server, body: dict) -> bool:
    """Whether a generate request names a clip's copy without its audio track (the media-integrity request)."""
    return any(".noaudio." in name for name in server.named_files(body))


def test_model_responses_cached_and_recomputed_only_for_the_changed_clip(project, instance, monkeypatch):
    # its own project and instance, not a graph_copy: another configuration (a Gemini model, oracle only): every asset runs again anyway
    make_test_video(project.media / "epic_sounds" / "P09_08.mp4", 80.0)
    clips = ["epic_sounds__P09_08__45-75", "hd_epic__P09-20240623-120359__1440-1470"]
    with GeminiTestServer(reply, processing_polls=0) as server:
        monkeypatch.setenv("GEMINI_API_KEY", "test-key-not-secret")
        monkeypatch.setenv("GEMINI_BASE_URL", server.base_url)
        declare_models(project.root, "gemini/gemini-test")
        monkeypatch.setenv("EPIC_LEVELS_JUDGE_MODEL", "gemini-judge")
        monkeypatch.setenv("EPIC_LEVELS_RESPONDERS", "oracle")
        monkeypatch.setenv("EPIC_LEVELS_RPM", "100000")
        monkeypatch.setenv("EPIC_LEVELS_CONCURRENCY", "16")
        report = run_pipeline(project, clip_keys=clips, instance=instance, run_config=QUIET, log=lambda *_: None)
        assert report.failed == []
        responses = query(project.warehouse, "select * from responses where responder = 'gemini'")
        hd = responses[responses["dataset"] == "hd_epic"]
        es = responses[responses["dataset"] == "epic_sounds"]
        # P09_08 has a source video: clip, silenced and no_clip answered; the HD-EPIC clip has none: skipped
        assert set(es["condition"]) == {"clip", "no_clip", "silenced"} and (es["status"] == "ok").all()
        assert set(hd.loc[hd["condition"] == "clip", "status"]) == {"skipped"}
        assert hd.loc[hd["condition"] == "clip", "error"].str.contains("no source video").all()
        assert (hd.loc[hd["condition"] == "no_clip", "status"] == "ok").all()
        # the clip and its silenced copy, each once for every item, and the clip without its audio track (the
        # media-integrity request)
        assert server.uploads == 3 and integrity_calls(server) == 1
        calls_first = answer_calls(server)
        # identical prompts under the same condition share one cache key and so one call
        assert calls_first == responses.loc[responses["status"] == "ok", "cache_key"].nunique()
        media = query(project.warehouse, "select * from clip_media")
        assert set(media["status"]) == {"ready", "skipped"}
        # open replies the rules could not decide went to the judge, which answered "none" (wrong)
        verdicts = query(project.warehouse, "select * from verdicts where responder = 'gemini'")
        judged = verdicts[verdicts["scored_by"] == "judge"]
        assert len(judged) and (~judged["correct"].astype(bool)).all()
        assert (verdicts["scored_by"] != "undecided").all()
        judge_prompts = [p for p in server.prompts() if JUDGE in p]
        assert judge_prompts and all("Candidates:" in p for p in judge_prompts)
        total_first = server.generate_calls

        # nothing changed: a second full run makes no model call
        run_pipeline(project, clip_keys=clips, instance=instance, run_config=QUIET, log=lambda *_: None)
        assert server.generate_calls == total_first  # neither answers nor judge verdicts are asked again

        # change one narration of P09_08 (P09_08_17 "take honey" 72.69–75.08 s -> "take jam")
        path = project.annotations / "epic-kitchens-100" / "EPIC_100_validation.csv"
        old = "4361,4504,take honey,take,0,honey,115,['honey'],[115]"
        assert old in path.read_text()
        path.write_text(path.read_text().replace(old, "4361,4504,take jam,take,0,jam,115,['jam'],[115]"))
        run_pipeline(project, clip_keys=clips, instance=instance, run_config=QUIET, log=lambda *_: None)
        after = query(project.warehouse, "select * from responses where responder = 'gemini' and status = 'ok'")
        new_calls = answer_calls(server) - calls_first
        assert new_calls > 0
        assert (after.loc[after["dataset"] == "hd_epic", "cached"]).all()
        assert after.loc[~after["cached"], "cache_key"].nunique() == new_calls
        assert set(after.loc[~after["cached"], "clip_key"]) == {"epic_sounds__P09_08__45-75"}
