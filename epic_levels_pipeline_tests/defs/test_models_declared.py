"""Models as declared benchmark state, end to end against the local OpenAI-compatible server.

Two entries of one served model (``qwen_iv``: the audio inside the video; ``qwen_sep``: beside it) are two models in
every table. Whatever starts a run — ``epic-levels run``, ``run --models qwen_iv``, a launch with no run config (as
the UI makes), the annotation-change sensor's re-run of one edited clip — every declared model keeps its rows;
only leaving the declaration removes them, and the run says so. The ``spend`` ledger counts the calls the server
received, and ``epic-levels estimate`` the same number before the run. A bad models setting (no key, no endpoint, a
self-judge) stops the command in one line with exit 2, the warehouse unchanged. A server that drops the audio is
marked in every table and first in the report; ``--strict-media`` fails such a run.
"""

from __future__ import annotations

import pandas as pd

from epic_levels_pipeline import cli
from epic_levels_pipeline.estimate import estimate
from epic_levels_pipeline.orchestration.local import project_instance, run_pipeline
from epic_levels_pipeline.reporting.model_sections import SECTION_INTEGRITY
from epic_levels_pipeline.responses.media import make_test_video
from epic_levels_pipeline.storage.views import query, table_digest

from ..conftest import declare_models
from ..fakes.openai_server import OpenAITestServer
from .conftest import QUIET
from .test_openai_pipeline import reply
from .test_sensor import evaluate, run_requested

EDITED = "epic_sounds__P09_08__45-75"


def entry(name: str, endpoint: str, **keys) -> str:
    lines = [f"[models.{name}]", 'provider = "vllm"', 'model = "qwen"', f'endpoint = "{endpoint}"']
    return "\n".join(lines + [f'{k} = "{v}"' for k, v in keys.items()]) + "\n"


def model_rows(project) -> dict[str, int]:
    rows = query(project.warehouse, "SELECT model, count(*) AS n FROM responses WHERE provider = 'vllm' GROUP BY model")
    return dict(zip(rows["model"], rows["n"]))


def quiet_env(monkeypatch):
    for var in ("EPIC_LEVELS_JUDGE_MODEL", "EPIC_LEVELS_RESPONDERS", "EPIC_LEVELS_MODELS", "VLLM_API_KEY",
                "OPENAI_API_KEY", "EPIC_LEVELS_MODEL_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("EPIC_LEVELS_RPM", "100000")
    monkeypatch.setenv("EPIC_LEVELS_CONCURRENCY", "16")


def test_declared_models_keep_their_rows_whatever_starts_the_run(project, monkeypatch, capsys):
    quiet_env(monkeypatch)
    make_test_video(project.media / "epic_sounds" / "P09_08.mp4", 80.0)
    with OpenAITestServer(reply, models=("qwen",), strict_models=True) as server:
        tables = entry("qwen_iv", server.base_url, audio="in_video") + entry("qwen_sep", server.base_url, audio="separate")
        declare_models(project.root, "qwen_iv", "qwen_sep", tables=tables)
        predicted = estimate(project, ["qwen_iv", "qwen_sep"])  # before any call
        assert cli.main(["run", "--responders", "oracle"]) == 0
        printed = capsys.readouterr().out
        first = model_rows(project)
        assert set(first) == {"qwen_iv", "qwen_sep"} and first["qwen_iv"] == first["qwen_sep"] > 0
        # two routes of one served model: two identities, side by side in every table
        responses = query(project.warehouse, "SELECT DISTINCT model, served_model, model_digest, route FROM responses "
                                             "WHERE provider = 'vllm' AND condition = 'clip'")
        assert set(responses["served_model"]) == {"qwen"} and responses["model_digest"].nunique() == 2
        scores = query(project.warehouse, "SELECT * FROM scores WHERE responder = 'vllm' AND dataset = '*' AND "
                                          "level = '*' AND subtype = '*' AND format = '*' AND condition = 'clip'")
        assert sorted(scores["model"]) == ["qwen_iv", "qwen_sep"]
        # spend: the server's own count, the ledger's, and the estimate's agree
        spend = query(project.warehouse, "SELECT * FROM spend WHERE run_id = '*'")
        asked = spend[spend["purpose"].isin(["answers", "captions"])]
        assert int(asked["calls"].sum()) == server.chat_calls
        assert int(predicted.loc[predicted["condition"] != "judge", "calls"].sum()) == server.chat_calls
        assert asked["cost_usd"].isna().all() and (asked["failed"] == 0).all()
        assert "Spend of this run" in printed and "unknown" in printed
        calls = server.chat_calls

        # narrowed to one model: the other's rows stay (from the call cache); nothing is asked again
        assert cli.main(["run", "--responders", "oracle", "--models", "qwen_iv"]) == 0
        assert model_rows(project) == first and server.chat_calls == calls
        kept = query(project.warehouse, "SELECT bool_and(cached) AS all_cached FROM responses WHERE model = 'qwen_sep' "
                                        "AND status = 'ok'")
        assert bool(kept["all_cached"].iloc[0])
        # a plain run, and a launch with no run configuration (what the UI starts)
        assert cli.main(["run"]) == 0
        assert model_rows(project) == first
        assert run_pipeline(project, log=lambda *_: None).failed == []
        assert model_rows(project) == first and server.chat_calls == calls

        # the sensor's re-run of one edited clip (P09_08_13 "tap running" 47.662 s -> 47.700 s)
        path = project.annotations / "epic-sounds" / "EPIC_Sounds_validation.csv"
        path.write_text(path.read_text().replace("P09_08_13,P09,P09_08,00:00:47.662", "P09_08_13,P09,P09_08,00:00:47.700"))
        with project_instance(project) as instance:
            result = evaluate(instance, project, None)
            assert [r.job_name for r in result.run_requests] == ["clip_update_job"]
            run_requested(instance, result)
        after = query(project.warehouse, "SELECT model, count(*) AS n FROM responses WHERE provider = 'vllm' AND "
                                         f"clip_key = '{EDITED}' GROUP BY model")
        assert set(after["model"]) == {"qwen_iv", "qwen_sep"}
        assert model_rows(project) == first

        # a bad setting stops the command in one line, exit 2, nothing written
        before = [table_digest(project.warehouse, name) for name in ("responses", "scores", "spend")]
        for tables_text, expected in (
                (entry("qwen_iv", "http://127.0.0.1:9/v1"), "model qwen_iv: its endpoint http://127.0.0.1:9/v1 does not answer"),
                ('[models.qwen_iv]\nprovider = "openai"\nmodel = "gpt-4o"\n', "model qwen_iv: no API key: set OPENAI_API_KEY"),
                (entry("qwen_iv", server.base_url), "judge qwen_iv is also an evaluated model")):
            judge = "qwen_iv" if "also an evaluated" in expected else None
            declare_models(project.root, "qwen_iv", judge=judge, tables=tables_text)
            assert cli.main(["run", "--responders", "oracle"]) == 2
            err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
            assert len(err) == 1 and expected in err[0], err
            assert [table_digest(project.warehouse, name) for name in ("responses", "scores", "spend")] == before

        # leaving the declaration is the one way a model's rows leave the tables, and the run says so
        declare_models(project.root, "qwen_iv", tables=tables)
        assert cli.main(["run", "--responders", "oracle"]) == 0
        assert "model qwen_sep is no longer declared" in capsys.readouterr().out
        assert set(model_rows(project)) == {"qwen_iv"}


def test_a_server_that_drops_the_audio_is_marked_and_strict_media_fails_the_run(project, monkeypatch, capsys):
    quiet_env(monkeypatch)
    make_test_video(project.media / "epic_sounds" / "P09_08.mp4", 80.0)
    with OpenAITestServer(reply, models=("qwen",), drop_audio=True) as server:
        declare_models(project.root, "deaf", "hears",
                       tables=entry("deaf", server.base_url, audio="separate") + entry("hears", server.base_url,
                                                                                         video="none", audio="none"))
        assert cli.main(["run", "--responders", "oracle", "--clips", EDITED]) == 0
        marked = query(project.warehouse, "SELECT * FROM media_integrity")
        deaf = marked[marked["model"] == "deaf"].iloc[0]
        assert bool(deaf["audio_ignored"]) and not bool(deaf["video_ignored"])
        hears = marked[marked["model"] == "hears"].iloc[0]  # sent no video and no audio: nothing to tell
        assert pd.isna(hears["audio_ignored"]) and pd.isna(hears["video_ignored"])
        verdicts = query(project.warehouse, "SELECT DISTINCT audio_ignored FROM verdicts WHERE model = 'deaf'")
        assert verdicts["audio_ignored"].tolist() == [True]
        report = (project.reports / "report.md").read_text()
        assert report.index(SECTION_INTEGRITY) < report.index("Leaderboard")
        capsys.readouterr()
        assert cli.main(["run", "--responders", "oracle", "--clips", EDITED, "--strict-media"]) == 1
        assert "--strict-media: model deaf ignored the audio" in capsys.readouterr().err
