"""The report: built from small synthetic tables (made by the real :mod:`tables` functions) and from nothing."""

from __future__ import annotations

import base64
import re

import numpy as np
import pandas as pd
import pytest

from epic_levels_pipeline.scoring.judge_audit import judge_audit
from epic_levels_pipeline.reporting.report import (SECTIONS, build_report, fmt_interval, main_table, report_from_warehouse,
                                         verdict_counts, write_report)
from epic_levels_pipeline.scoring.verdicts import VERDICT_COLUMNS
from epic_levels_pipeline.settings import Paths
from epic_levels_pipeline.scoring.metrics.tables import over_marking, paired_comparisons, scores, shortcut_audit
from epic_levels_pipeline.storage.parquet import write_parquet

FORMATS = {"yes_no": ("yes_no", 0.5), "multiple_choice": ("multiple_choice", 0.25),
           "option_judgement": ("option_judgement", 1 / 16), "open": ("open", 0.0)}
SKILL = {("alpha", "clip"): 0.85, ("alpha", "no_clip"): 0.35, ("alpha", "silenced"): 0.6,
         ("beta", "clip"): 0.55, ("beta", "no_clip"): 0.3, ("beta", "silenced"): 0.5}


def synthetic_verdicts(seed: int = 0) -> pd.DataFrame:
    """2 responders × 3 conditions × 2 levels × 4 formats × 6 clips × 3 questions, with some undecided,
    unparsed and judge rows, and over-marked wrong 4b answers."""
    rng = np.random.default_rng(seed)
    rows = []
    for (responder, condition), skill in SKILL.items():
        for level, subtype in (("L1", "sound_object"), ("L2", "action_after")):
            for clip in range(6):
                for q in range(3):
                    qid = f"c{clip}/{subtype}/{q}"
                    for fmt, (base, chance) in FORMATS.items():
                        ok = bool(rng.random() < skill - (0.15 if level == "L2" else 0))
                        scored_by = "rule"
                        if fmt == "open" and rng.random() < 0.25:
                            scored_by, ok = "undecided", None
                        elif fmt == "open" and rng.random() < 0.2:
                            scored_by = "judge"
                        elif rng.random() < 0.03:
                            scored_by, ok = "unparsed", False
                        marked = (1 if ok else int(rng.integers(1, 3))) if base == "option_judgement" else None
                        rows.append({"item_id": f"{qid}/{fmt}", "question_id": qid, "clip_key": f"c{clip}",
                                     "dataset": "epic_sounds", "level": level, "subtype": subtype,
                                     "distractor_strategy": "present_in_clip", "format": fmt, "base_format": base,
                                     "condition": condition, "responder": responder, "model": "m1",
                                     "reply": "Answer: x", "parsed": "x", "expected": "x", "correct": ok,
                                     "scored_by": scored_by, "note": "", "n_marked_true": marked,
                                     "judge_raw": "", "chance": chance})
    frame = pd.DataFrame(rows, columns=VERDICT_COLUMNS)
    frame["correct"] = frame["correct"].astype("boolean")
    frame["n_marked_true"] = pd.to_numeric(frame["n_marked_true"]).astype("Int64")
    return frame


def presence_rates() -> pd.DataFrame:
    return pd.DataFrame([
        {"dataset": "epic_sounds", "subtype": "sound_object", "level": "L1", "distractor_strategy": "present_in_clip",
         "n": 18, "singles_out_key": 0.5, "only_absent_give_away": 0.1, "presence_oracle_rate": 0.625, "chance": 0.25},
        {"dataset": "epic_sounds", "subtype": "action_after", "level": "L2", "distractor_strategy": "present_in_clip",
         "n": 18, "singles_out_key": 0.0, "only_absent_give_away": 0.0, "presence_oracle_rate": 0.25, "chance": 0.25},
    ])


@pytest.fixture(scope="module")
def tables():
    v = synthetic_verdicts()
    return {"scores": scores(v, n_boot=200), "paired": paired_comparisons(v, n_boot=200),
            "over_marking": over_marking(v), "shortcut_audit": shortcut_audit(presence_rates(), v), "verdicts": v}


def _headings(markdown: str) -> list[str]:
    return [line[3:].strip() for line in markdown.splitlines() if line.startswith("## ")]


def test_report_from_synthetic_tables(tmp_path, tables):
    audit = pd.DataFrame([{"responder": "alpha", "model": "m1", "n": 12, "judge_rule_agreement": 0.917,
                           "judge_self_agreement": 0.75, "judge_none_rate": 0.04, "judge_errors": 1, "note": ""}])
    md_path, html_path = write_report(tmp_path / "out", tables["scores"], tables["paired"], tables["over_marking"],
                                      tables["shortcut_audit"], tables["verdicts"], audit, title="synthetic")
    assert md_path.name == "report.md" and html_path.name == "report.html"
    md, page = md_path.read_text(encoding="utf-8"), html_path.read_text(encoding="utf-8")
    assert md.startswith("# synthetic") and _headings(md) == list(SECTIONS)
    for section in SECTIONS:
        assert section in page

    # plots: (a) and (b) for each responder/model, embedded as PNG, and written beside the Markdown
    images = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == 5 and all(base64.b64decode(i).startswith(b"\x89PNG") for i in images)
    linked = re.findall(r"\]\((report_figures/[^)]+\.png)\)", md)
    assert len(linked) == 5 and all((md_path.parent / p).read_bytes().startswith(b"\x89PNG") for p in linked)
    assert "<script" not in page and not re.search(r'(src|href)="(https?:)?//', page)  # self-contained

    # the main table's numbers are in both files
    table = main_table(tables["scores"])
    top = table[(table["level"] == "*") & (table["format"] == "*")]
    assert set(top["responder"]) == {"alpha", "beta"} and set(top["condition"]) == {"clip", "no_clip", "silenced"}
    for r in table.sample(12, random_state=0).itertuples():
        if r.n:
            cell = f"{fmt_interval(r.chance_corrected, r.ci_low, r.ci_high)} n={r.n}"
            assert cell in md  # one line in Markdown; in HTML the interval and n on lines of their own
            assert (f'<span class="v">{r.chance_corrected:.3f}</span><span class="d">[{r.ci_low:.3f}, '
                    f'{r.ci_high:.3f}]</span><span class="d">n={r.n}</span>') in page
    clip_all = top[(top["responder"] == "alpha") & (top["condition"] == "clip")].iloc[0]
    assert f"{clip_all['chance_corrected']:.3f}" in page and clip_all["n_undecided"] > 0
    assert f"strict {clip_all['chance_corrected_strict']:.3f}, {clip_all['n_undecided']} undecided" in md
    assert "### alpha / m1" in md and "### beta / m1" in md  # one main table per responder/model

    # paired comparisons, over-marking, counts, judge audit
    pair = tables["paired"]
    cond = pair[(pair["kind"] == "condition") & (pair["level"] == "*") & (pair["responder"] == "alpha")
                & (pair["b"] == "no_clip")].iloc[0]
    assert fmt_interval(cond["diff"], cond["diff_ci_low"], cond["diff_ci_high"]) in md
    assert "clip vs no_clip" in md and "clip vs silenced" in md and "multiple_choice vs yes_no" in md
    assert "63–86 %" in md and "McNemar p" in md
    counts, source = verdict_counts(tables["verdicts"])
    assert source == "verdicts" and counts["undecided"].sum() == (tables["verdicts"]["scored_by"] == "undecided").sum()
    assert "0.917" in md and "0.750" in md
    assert "(acc − chance)/(1 − chance)" in md and "resampled by clip" in md and "accuracy_strict" in md


def test_report_from_nothing(tmp_path):
    md_path, html_path = write_report(tmp_path, None, pd.DataFrame(), None, pd.DataFrame(), None, None)
    md, page = md_path.read_text(encoding="utf-8"), html_path.read_text(encoding="utf-8")
    assert _headings(md) == list(SECTIONS)
    assert "Every table is empty or missing" in md and "scores table is empty or missing" in md
    assert "paired_comparisons table is empty" in md and "shortcut_audit table is empty" in md
    assert "over_marking table is empty" in md and "No judge audit was given" in md
    assert "<img" not in page and "<html" in page
    assert not list((tmp_path / "report_figures").glob("*.png"))


def test_partial_and_old_tables_do_not_crash(tables):
    old_scores = tables["scores"].drop(columns=["accuracy_strict", "chance_corrected_strict"])
    no_judge = judge_audit(tables["verdicts"], pd.DataFrame(), None)
    report = build_report(old_scores, tables["paired"].iloc[0:0], None, tables["shortcut_audit"][["dataset"]],
                          judge_audit=no_judge)
    assert "no strict columns" in report.markdown and "undecided" in report.markdown
    assert "no judge is configured" in report.markdown
    assert "Counted from the scores table" in report.markdown  # no verdicts given
    assert "shortcut_audit table is empty or missing" in report.markdown
    assert report.html.count('<img src="data:image/png;base64,') == 5 and len(report.figures) == 5  # leaderboard + (a), (b) × 2


def test_report_from_warehouse_reads_the_data_folder(tmp_path, tables):
    paths = Paths(tmp_path)
    md_path, html_path = report_from_warehouse(paths)  # nothing materialized yet
    assert md_path.parent == paths.reports and "Every table is empty or missing" in md_path.read_text()

    write_parquet(tables["scores"], paths.assets / "scores.parquet")
    write_parquet(tables["paired"], paths.assets / "paired_comparisons.parquet")
    write_parquet(tables["over_marking"], paths.assets / "over_marking.parquet")
    for clip, part in tables["verdicts"].groupby("clip_key"):
        write_parquet(part, paths.assets / "verdicts" / f"{clip}.parquet")
    md_path, html_path = report_from_warehouse(paths)
    md = md_path.read_text(encoding="utf-8")
    assert "Every table is empty" not in md and "shortcut_audit table is empty or missing" in md
    assert "### alpha / m1" in md and html_path.read_text().count("data:image/png;base64,") == 5
    rule = int((tables["verdicts"]["scored_by"] == "rule").sum())
    assert rule > 0 and "(no verdicts given)" not in md
    # a second report replaces the first and leaves no stale plot behind
    (paths.reports / "report_figures" / "a_gone.png").write_bytes(b"old")
    report_from_warehouse(paths)
    assert not (paths.reports / "report_figures" / "a_gone.png").exists()


def test_leaderboard_comes_first_with_every_responder_level_and_condition(tables):
    from epic_levels_pipeline.reporting.report import SECTION_LEADERBOARD, leaderboard_table

    built = build_report(tables["scores"], tables["paired"], tables["over_marking"], tables["shortcut_audit"],
                         tables["verdicts"])
    assert _headings(built.markdown)[0] == SECTION_LEADERBOARD
    assert "leaderboard.png" in built.figures and built.figures["leaderboard.png"].startswith(b"\x89PNG")
    board = leaderboard_table(built.main_table)
    assert set(board["format"]) == {"*"} and set(board["condition"]) == {"clip", "no_clip", "silenced"}
    assert set(board["level"]) == {"L1", "L2", "*"} and set(board["responder"]) == {"alpha", "beta"}
    section = built.markdown.split("## " + SECTION_LEADERBOARD)[1].split("\n## ")[0]
    alpha_clip = board[(board["responder"] == "alpha") & (board["condition"] == "clip") & (board["level"] == "*")].iloc[0]
    assert fmt_interval(alpha_clip["chance_corrected"], alpha_clip["ci_low"], alpha_clip["ci_high"]) in section
    assert section.index("| alpha / m1 | clip |") < section.index("| beta / m1 | clip |")


def test_models_compared_under_the_leaderboard_and_per_format_in_the_paired_comparisons():
    """Two models on the same items (alpha's NAME m1, beta's m2): under the leaderboard one row per pair and
    condition with a cell per level (diff, interval, n, p); under Paired comparisons one row per condition and format."""
    from epic_levels_pipeline.reporting.report import SECTION_LEADERBOARD, SECTION_PAIRED

    v = synthetic_verdicts()
    v.loc[v["responder"] == "beta", "model"] = "m2"
    paired = paired_comparisons(v, n_boot=100)
    built = build_report(scores(v, n_boot=100), paired, None, None)
    board = built.markdown.split("## " + SECTION_LEADERBOARD)[1].split("\n## ")[0]
    assert "| A vs B | condition | L1 | L2 | all levels |" in board
    assert [line.split(" | ")[1] for line in board.splitlines() if line.startswith("| m1 vs m2 |")] == \
        ["clip", "no_clip", "silenced"]
    top = paired[(paired["kind"] == "model") & (paired["level"] == "*") & (paired["format"] == "*")
                 & (paired["condition"] == "clip")].iloc[0]
    cell = f"{fmt_interval(top['diff'], top['diff_ci_low'], top['diff_ci_high'])} n={top['n_pairs']} p="
    assert cell in board
    section = built.markdown.split("## " + SECTION_PAIRED)[1].split("\n## ")[0]
    models = section.split("### Models compared (all levels)")[1]
    assert "A = m1, B = m2:" in models
    rows = [line for line in models.splitlines() if line.startswith("| clip |")]
    assert [r.split(" | ")[1] for r in rows] == ["yes_no", "multiple_choice", "option_judgement", "open", "all formats"]
    assert f"| clip | all formats | {top['n_pairs']} | {top['both']} | {top['only_a']} |" in models
    alone = build_report(scores(synthetic_verdicts(), n_boot=50), paired_comparisons(synthetic_verdicts(), n_boot=50),
                         None, None).markdown
    assert "Models compared on the same items" not in alone and "No model pairs" in alone


def _alignment_rows(clip: str, responder: str, model: str = "", condition: str = "clip") -> pd.DataFrame:
    from epic_levels_pipeline.captions.track import ALIGNMENT_COLUMNS

    dataset = clip.split("__")[0]
    rows = [{"clip_key": clip, "dataset": dataset, "condition": condition, "responder": responder, "model": model,
             "matcher": matcher, "unit": "action", "ref_id": f"a{i}", "resp_id": f"a{i}", "ref_start_s": float(i),
             "ref_stop_s": i + 2.0, "resp_start_s": i + 0.5, "resp_stop_s": i + 2.5, "tiou": 0.6, "verdict": "agree",
             "verdict_by": "rule", "ref_label": "take plate", "resp_label": "take plate", "ref_source_id": f"n{i}"}
            for matcher in ("greedy", "hungarian") for i in range(3)]
    return pd.DataFrame(rows, columns=ALIGNMENT_COLUMNS)


@pytest.mark.parametrize("with_model", [False, True])
def test_caption_timelines_read_only_their_clips_and_draw_what_every_clip_gives(tmp_path, with_model):
    """The report's caption timelines come from the first clip per dataset of the sample responder (a model
    when any ran): read through ``caption_timeline_rows`` they are the figures of the whole table."""
    from epic_levels_pipeline.reporting.loading import caption_timeline_rows
    from epic_levels_pipeline.reporting.report import CAPTION_SAMPLE_RESPONDER
    from epic_levels_pipeline.storage.parquet import read_parquet
    from epic_levels_pipeline.storage.table_store import TableStore

    paths = Paths(tmp_path)
    store = TableStore(paths.assets)
    clips = {"epic_sounds__P01_01__30-60": [("jitter_1s", "")],
             "epic_sounds__P01_01__0-30": [("jitter_1s", ""), ("oracle", "")],
             "epic_sounds__P02_01__0-30": [("gemini", "gemini-2.5-flash")] if with_model else [("oracle", "")],
             "hd_epic__P01-20240202-110250__60-90": [("jitter_1s", "")] + ([("gemini", "gemini-2.5-flash")] if with_model else []),
             "hd_epic__P01-20240202-110250__30-60": [("oracle", "")]}
    for clip, responders in clips.items():
        frame = pd.concat([_alignment_rows(clip, r, m) for r, m in responders] + [_alignment_rows(clip, "oracle", "", "no_clip")],
                          ignore_index=True)
        write_parquet(frame, store.path("caption_alignments", clip), "caption_alignments")
    every = read_parquet(store.partition_files("caption_alignments"))
    few = caption_timeline_rows(paths, CAPTION_SAMPLE_RESPONDER)
    want = ({"epic_sounds__P02_01__0-30", "hd_epic__P01-20240202-110250__60-90"} if with_model
            else {"epic_sounds__P01_01__0-30", "hd_epic__P01-20240202-110250__60-90"})
    assert set(few["clip_key"]) == want
    scores_frame = pd.DataFrame({"responder": ["oracle"], "model": [""], "condition": ["clip"], "dataset": ["*"],
                                 "matcher": ["greedy"], "metric": ["action_f1"], "n": [1], "value": [1.0]})
    whole = build_report(None, None, None, None, None, caption_scores=scores_frame, caption_alignments=every)
    part = build_report(None, None, None, None, None, caption_scores=scores_frame, caption_alignments=few)
    assert whole.markdown == part.markdown and "caption_timeline_" in part.markdown
