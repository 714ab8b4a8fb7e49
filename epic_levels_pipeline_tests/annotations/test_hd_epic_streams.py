"""HD-EPIC's own sounds and narrations: readers, validation, and the sound and action questions they give
HD-EPIC clips (same generators, solvers, checks and audits as EPIC-SOUNDS clips)."""

from __future__ import annotations

import pickle
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from epic_levels_pipeline.annotations.clips import Clip, all_windows
from epic_levels_pipeline.annotations.clip_rows import clip_annotations, clips_annotations
from epic_levels_pipeline.annotations.hd_epic_streams import action_words, read_narrations, read_sounds
from epic_levels_pipeline.annotations.readers import file_kind, load_annotations, validate_paths
from epic_levels_pipeline.errors import AnnotationError

from .hd_epic_files import (NARRATIONS_DIR, NOUNS, SOUND_CLASSES, SOUNDS_DIR, VERBS, annotations_root,
                            bundled_hd_epic_clips, narration_rows, sound_rows, timestamp, write_streams)

CLIP = Clip("hd_epic", "P09-20240623-120359", 1440, 1470)
FAST = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _sounds_csv(tmp: Path, frame: pd.DataFrame) -> Path:
    path = tmp / "HD_EPIC_Sounds.csv"
    frame.to_csv(path, index=False)
    return path


def _narrations_pkl(tmp: Path, frame: pd.DataFrame) -> Path:
    path = tmp / "HD_EPIC_Narrations.pkl"
    frame.to_pickle(path)
    return path


def _errors(loaded) -> list[str]:
    return [str(p) for p in loaded.errors]


# --- file kinds ---------------------------------------------------------------------------------------


def test_upstream_names_are_registered_kinds():
    assert file_kind(Path("HD_EPIC_Sounds.csv")).name == "hd_epic_sounds"
    assert file_kind(Path("HD_EPIC_Sounds.pkl")).table == "sounds"
    assert file_kind(Path("HD_EPIC_Narrations.pkl")).table == "narrations"
    assert file_kind(Path("HD_EPIC_Narrations.csv")) is None  # upstream ships the narrations as a pickle only


# --- readers (property tests) -------------------------------------------------------------------------

_span = st.tuples(st.floats(0, 20_000, allow_nan=False), st.floats(0.001, 60, allow_nan=False))


@FAST
@given(spans=st.lists(st.tuples(_span, st.sampled_from(SOUND_CLASSES)), min_size=1, max_size=12))
def test_sound_times_read_back_from_csv_and_pickle(tmp_path_factory, spans):
    tmp = tmp_path_factory.mktemp("sounds")
    frame = pd.DataFrame([{"participant_id": "P01", "video_id": "P01-20240202-110250",
                           "start_timestamp": timestamp(a), "stop_timestamp": timestamp(a + d),
                           "start_sample": int(a * 48_000), "stop_sample": int((a + d) * 48_000),
                           "class": c, "class_id": i} for (a, d), (c, i) in spans])
    csv = read_sounds(_sounds_csv(tmp, frame))
    pkl_path = tmp / "alone" / "HD_EPIC_Sounds.pkl"
    pkl_path.parent.mkdir()
    frame.to_pickle(pkl_path)
    pkl = read_sounds(pkl_path)
    for loaded, first_row in ((csv, 2), (pkl, 0)):
        assert not loaded.errors
        stamps = [(round(a * 1000) / 1000, round((a + d) * 1000) / 1000) for (a, d), _ in spans]
        kept = [i for i, (a, b) in enumerate(stamps) if b > a]  # a span under a millisecond is zero-length
        assert len(loaded.frame) == len(kept) and len(loaded.dropped) == len(spans) - len(kept)
        out = loaded.frame
        assert out["start_s"].tolist() == pytest.approx([stamps[i][0] for i in kept], abs=1e-6)
        assert out["stop_s"].tolist() == pytest.approx([stamps[i][1] for i in kept], abs=1e-6)
        assert out["sound_class"].tolist() == [spans[i][1][0] for i in kept]
        assert out["class_id"].tolist() == [spans[i][1][1] for i in kept]
        assert out["categorised"].all() and out["description"].isna().all()
        assert out["annotation_id"].is_unique
        assert out["source_row"].tolist() == [first_row + i for i in kept]
    assert csv.frame["annotation_id"].tolist() == pkl.frame["annotation_id"].tolist()


_action = st.tuples(st.sampled_from(VERBS), st.sampled_from(NOUNS))


@FAST
@given(narrations=st.lists(st.tuples(_span, st.lists(_action, max_size=3)), min_size=1, max_size=10))
def test_each_main_action_is_a_narration_row(tmp_path_factory, narrations):
    tmp = tmp_path_factory.mktemp("narrations")
    frame = pd.DataFrame([{
        "unique_narration_id": f"P01-20240202-110250-{n}", "participant_id": "P01", "video_id": "P01-20240202-110250",
        "narration": "Do it.", "start_timestamp": a, "end_timestamp": a + d,
        "nouns": [o[1] for _, o in acts] or ["tap"], "noun_classes": [o[0] for _, o in acts] or [0],
        "main_actions": [(v[1], o[1]) for v, o in acts], "main_action_classes": [(v[0], o[0]) for v, o in acts],
    } for n, ((a, d), acts) in enumerate(narrations)])
    loaded = read_narrations(_narrations_pkl(tmp, frame))
    assert not loaded.errors and not loaded.dropped
    out = loaded.frame
    assert len(out) == sum(max(len(acts), 1) for _, acts in narrations)
    assert out["narration_id"].is_unique
    expected = []
    for n, ((a, d), acts) in enumerate(narrations):
        if not acts:
            expected.append((f"P01-20240202-110250-{n}", False, None, pd.NA, a, a + d))
        for k, (v, o) in enumerate(acts):
            expected.append((f"P01-20240202-110250-{n}" + (f"#{k + 1}" if k else ""), True, action_words(v[1], o[1]),
                             v[0] * 1000 + o[0], a, a + d))
    got = [(r.narration_id, bool(r.labelled), None if pd.isna(r.narration) else r.narration,
            pd.NA if not r.labelled else int(r.verb_class) * 1000 + int(r.noun_class), r.start_s, r.stop_s)
           for r in out.itertuples()]
    assert [g[:3] for g in got] == [e[:3] for e in expected]
    assert [g[3] is pd.NA if e[3] is pd.NA else g[3] == e[3] for g, e in zip(got, expected)] == [True] * len(got)
    assert [g[4:] for g in got] == [e[4:] for e in expected]
    assert out["source_row"].tolist() == [n for n, (_, acts) in enumerate(narrations) for _ in range(max(len(acts), 1))]


def test_action_words_space_hyphenated_verbs():
    assert action_words("pick-up", "plate") == "pick up plate"
    assert action_words("open", "upper cupboard") == "open upper cupboard"


def test_narration_id_as_the_index_is_read():
    frame = narration_rows([CLIP]).set_index("unique_narration_id")
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        loaded = read_narrations(_narrations_pkl(Path(tmp), frame))
    assert not loaded.errors and loaded.frame["narration_id"].str.startswith(CLIP.video_id).all()


# --- validation: FILE:ROW:COLUMN errors, drops counted ------------------------------------------------


def test_sound_errors_name_line_and_column(tmp_path):
    frame = sound_rows([CLIP]).head(6).astype({"class_id": object})
    frame.loc[0, "start_timestamp"] = "1.5"  # seconds, not HH:mm:ss.SSS
    frame.loc[1, "class"] = "squeak"
    frame.loc[2, "class_id"] = "four"
    frame.loc[3, ["start_timestamp", "stop_timestamp"]] = ["00:24:05.000", "00:24:04.000"]  # inverted
    frame.loc[4, "stop_timestamp"] = frame.loc[4, "start_timestamp"]  # zero-length: dropped
    path = _sounds_csv(tmp_path, frame)
    loaded = read_sounds(path)
    errors = _errors(loaded)
    assert any(e.endswith(":2:start_timestamp: unparsable time '1.5' (expected HH:MM:SS.fff)") for e in errors)
    assert any(":3:class: unknown sound class 'squeak'" in e for e in errors)
    assert any(e.endswith(":4:class_id: class_id 'four' is not a whole number") for e in errors)
    assert any(":5:stop_timestamp: stop '00:24:04.000' is before start '00:24:05.000'" in e for e in errors)
    assert [str(p).split(":", 1)[1] for p in loaded.dropped] == [
        f"6:stop_timestamp: dropped: zero-length span ({frame.loc[4, 'start_timestamp']} to "
        f"{frame.loc[4, 'stop_timestamp']}); row left out"]
    assert len(loaded.frame) == 1 and loaded.frame["source_row"].tolist() == [7]
    missing = read_sounds(_sounds_csv(tmp_path, frame.drop(columns="class")))
    assert [str(p).split(":", 1)[1].split(" (")[0] for p in missing.errors] == ["1:class: missing column 'class'"]


def test_narration_errors_name_row_and_column(tmp_path):
    frame = narration_rows([CLIP]).head(6).astype({"start_timestamp": object})
    frame.at[0, "end_timestamp"] = -1.0
    frame.at[1, "noun_classes"] = [3, 3, 3, 3, 3]
    frame.at[2, "main_action_classes"] = [(3,)]
    frame.at[3, "unique_narration_id"] = frame.at[2, "unique_narration_id"]
    frame.at[4, "start_timestamp"] = "soon"
    frame.at[5, "end_timestamp"] = frame.at[5, "start_timestamp"]  # zero-length: dropped
    name = str(_narrations_pkl(tmp_path, frame))
    loaded = read_narrations(Path(name))
    errors = _errors(loaded)
    assert f"{name}:0:end_timestamp: negative time -1.0" in errors
    assert any(e.startswith(f"{name}:1:noun_classes: 5 noun classes for ") for e in errors)
    assert any(e.startswith(f"{name}:2:main_action_classes: main_action_classes [(3,)] is not") for e in errors)
    assert f"{name}:3:unique_narration_id: duplicate id {frame.at[2, 'unique_narration_id']!r} (first at row 2)" in errors
    assert f"{name}:4:start_timestamp: start_timestamp 'soon' is not a number of seconds" in errors
    assert [p.row for p in loaded.dropped] == [5] and "zero-length span" in loaded.dropped[0].message
    wrong = tmp_path / "other" / "HD_EPIC_Narrations.pkl"
    wrong.parent.mkdir()
    wrong.write_bytes(pickle.dumps({"not": "a table"}))
    assert [p.message for p in read_narrations(wrong).errors] == ["the pickle holds a dict, not a table (DataFrame)"]
    missing = read_narrations(_narrations_pkl(tmp_path / "other", frame.drop(columns="main_actions")))
    assert [(p.row, p.column) for p in missing.errors] == [(0, "main_actions")]


def test_load_refuses_bad_files_and_counts_the_pickle_twin(tmp_path):
    root = annotations_root(tmp_path, [CLIP], sounds_pickle=True)
    ann = load_annotations(root)
    # read once, from the CSV: the annotations root's layout leaves the pickle twin out
    assert not ann.sounds["source_file"].eq("HD_EPIC_Sounds.pkl").any()
    assert ann.sounds["source_file"].eq("HD_EPIC_Sounds.csv").sum() == len(sound_rows([CLIP]))
    sounds = root / SOUNDS_DIR / "HD_EPIC_Sounds.csv"
    text = sounds.read_text().splitlines()
    text[3] = text[3].replace("00:", "-0:", 1)
    sounds.write_text("\n".join(text) + "\n")
    with pytest.raises(AnnotationError) as err:
        load_annotations(root)
    assert "HD_EPIC_Sounds.csv:4:start_timestamp: unparsable time" in str(err.value)
    problems, files, _ = validate_paths([root / NARRATIONS_DIR])
    assert not [p for p in problems if p.severity == "error"] and "HD_EPIC_Narrations.pkl" in {f.name for f in files}


# --- HD-EPIC clips get the sound and action subtypes --------------------------------------------------


@pytest.fixture(scope="module")
def hd_streams(tmp_path_factory):
    """The bundled annotations plus HD-EPIC sounds and narrations over the bundled HD-EPIC windows."""
    from epic_levels_pipeline.annotations.catalogue import build_catalogue

    ann = load_annotations(annotations_root(tmp_path_factory.mktemp("hd_streams")))
    return ann, build_catalogue(ann)


SOUND_SUBTYPES = {"easy_sound_presence": "L1", "easy_sound_object": "L1", "easy_sound_action": "L1",
                  "low_sound_object": "L2", "low_sound_movement": "L2", "low_sound_moment": "L2",
                  "medium_sound_purpose": "L3", "medium_sound_count": "L3", "medium_sound_order": "L3",
                  "medium_action_next": "L3"}


@pytest.fixture(scope="module")
def hd_banks(hd_streams):
    from epic_levels_pipeline.bank.build import build_bank
    from epic_levels_pipeline.bank.clip_view import ClipView
    from epic_levels_pipeline.formats.items import build_items

    ann, cat = hd_streams
    out = []
    for clip in bundled_hd_epic_clips():
        rows = clip_annotations(ann, clip)
        bank = build_bank(clip, rows, cat)
        view = ClipView(clip, rows, cat)
        out.append((clip, rows, view, bank, build_items(bank.questions, view, cat)[0]))
    return out


def test_hd_epic_clips_have_sound_and_narration_streams(hd_streams):
    ann, _ = hd_streams
    clips = bundled_hd_epic_clips()
    batch = clips_annotations(ann, clips)
    for clip in clips:
        rows = clip_annotations(ann, clip)
        pd.testing.assert_frame_equal(rows, batch[clip.key])
        assert {"sound", "narration", "activity", "object_track"} <= set(rows["stream"])
    sound = clip_annotations(ann, CLIP).query("stream == 'sound'")
    assert sound["row_id"].str.startswith(f"{CLIP.video_id}@").all() and sound["categorised"].all()


def test_hd_epic_clip_gets_every_sound_and_action_subtype_at_its_level(hd_banks):
    questions = pd.concat([b.questions for *_, b, _ in hd_banks], ignore_index=True)
    assert set(questions["dataset"]) == {"hd_epic"}
    got = questions.drop_duplicates("subtype").set_index("subtype")["level"].to_dict()
    for subtype, level in SOUND_SUBTYPES.items():
        assert got.get(subtype) == level, subtype
    # the HD-EPIC subtypes are still asked beside them
    assert {"easy_object", "low_object_moment", "medium_object_order"} <= set(got)
    sound = questions[questions["subtype"].isin(list(SOUND_SUBTYPES))]
    assert set(sound["distractor_strategy"]) == {"absent_from_clip", "same_clip_other_moments", "other_counts"}
    hd_rows = questions["provenance"].str.contains(r'"stream": ?"(?:sound|narration)"', regex=True)
    assert hd_rows[questions["subtype"].isin(list(SOUND_SUBTYPES))].all()


def test_blocking_checks_pass_and_cover_the_new_cells(hd_banks):
    from epic_levels_pipeline.bank.checks import key_problems, level_problems, option_problems
    from epic_levels_pipeline.formats.items import format_problems, statement_truth_problems

    checked = set()
    for clip, rows, view, bank, items in hd_banks:
        q = bank.questions
        assert not key_problems(q, view) and not level_problems(q) and not option_problems(q)
        assert not format_problems(items, q) and not statement_truth_problems(items, view, q)
        checked |= {(d, s) for d, s in zip(q["dataset"], q["subtype"])}
        sound = q[q["subtype"].isin(list(SOUND_SUBTYPES))]
        if not len(sound):
            continue
        # the checks catch a wrong key, a wrong level and a repeated option in these cells
        bad = sound.copy()
        bad["answer_index"] = (bad["answer_index"] + 1) % 4
        assert len(key_problems(bad, view)) == len(bad)
        bad = sound.copy()
        bad["level"] = "L4"
        assert len(level_problems(bad)) == len(bad)
        bad = sound.head(1).copy()
        bad["options"] = [[o[0], o[0], *o[2:]] for o in bad["options"]]
        assert option_problems(bad)
    assert {("hd_epic", s) for s in SOUND_SUBTYPES} <= checked


def test_shortcut_audit_and_priors_have_the_new_cells(hd_banks):
    from epic_levels_pipeline.bank.checks import shortcut_rates
    from epic_levels_pipeline.scoring.metrics.tables import prior_audit

    questions = pd.concat([b.questions for *_, b, _ in hd_banks], ignore_index=True)
    items = pd.concat([i for *_, i in hd_banks], ignore_index=True)
    rates = shortcut_rates(questions)
    cells = set(zip(rates["dataset"], rates["subtype"], rates["distractor_strategy"]))
    priors = prior_audit(questions, items, n_boot=50)
    prior_cells = set(zip(priors["dataset"], priors["subtype"], priors["format"], priors["prior"]))
    for subtype in SOUND_SUBTYPES:
        assert any(c[:2] == ("hd_epic", subtype) for c in cells), subtype
        for fmt in ("multiple_choice", "yes_no"):
            for prior in ("blind", "anti_prior"):
                assert ("hd_epic", subtype, fmt, prior) in prior_cells, (subtype, fmt, prior)
    assert ("hd_epic", "low_sound_object", "absent_from_clip") in cells  # the leaky variant, audited beside
    assert ("hd_epic", "low_sound_object", "same_clip_other_moments") in cells


def test_without_hd_epic_streams_nothing_changes_for_hd_epic_clips(bundled):
    """A clip of a dataset the subtype is only ``also_on`` gets it only where it holds its streams: the bundled
    HD-EPIC clips (no HD-EPIC sounds or narrations bundled) get no sound subtype and no drop reason of one."""
    from epic_levels_pipeline.bank.build import build_bank
    from epic_levels_pipeline.bank.clip_view import ClipView
    from epic_levels_pipeline.bank.subtypes import SUBTYPES

    ann, cat = bundled
    rows = clip_annotations(ann, CLIP)
    view = ClipView(CLIP, rows, cat)
    assert not any(SUBTYPES[s].applies(view) for s in SOUND_SUBTYPES)
    bank = build_bank(CLIP, rows, cat)
    assert not any(k.split(":")[0].split(" [")[0] in SOUND_SUBTYPES for k in bank.drops)
    assert not bank.questions["subtype"].isin(list(SOUND_SUBTYPES)).any()


def test_partial_streams_give_only_the_subtypes_they_support(hd_streams):
    from epic_levels_pipeline.bank.clip_view import ClipView
    from epic_levels_pipeline.bank.subtypes import SUBTYPES

    ann, cat = hd_streams
    rows = clip_annotations(ann, CLIP)
    only_sounds = ClipView(CLIP, rows[rows["stream"] != "narration"], cat)
    applied = {s for s in SOUND_SUBTYPES if SUBTYPES[s].applies(only_sounds)}
    assert applied == {"easy_sound_presence", "low_sound_moment", "medium_sound_count", "medium_sound_order"}


def test_hd_epic_only_classes_are_named(hd_streams):
    _, cat = hd_streams
    assert cat.noun_keys[300] == "hook" and cat.verb_keys[98] == "reach"
    assert cat.noun_keys[3] == "cupboard"  # EPIC-KITCHENS-100's key under the shared id
    assert cat.nouns[300]["name"] == "hook"


def test_epic_sounds_windows_leave_hd_epic_videos_out(hd_streams):
    ann, _ = hd_streams
    videos = {c.video_id for c in all_windows(ann, "epic_sounds")}
    assert videos and not videos & {c.video_id for c in bundled_hd_epic_clips()}


@pytest.mark.slow
def test_materialize_an_hd_epic_clip_with_its_sounds(project, instance):
    """The Dagster assets read the files from the project's annotations and their blocking checks pass."""
    import dagster as dg

    from epic_levels_pipeline.orchestration.local import load_definitions
    from epic_levels_pipeline.storage.parquet import read_parquet
    from epic_levels_pipeline.storage.table_store import TableStore

    from ..defs.conftest import QUIET

    key = "hd_epic__P09-20240623-120359__1440-1470"
    write_streams(project.annotations, [CLIP])
    instance.add_dynamic_partitions("clips", [key])
    job = load_definitions().resolve_implicit_global_asset_job_def()
    tables = ["sounds", "narrations", "activities", "recipe_steps", "object_tracks", "vocabulary", "videos",
              "entity_catalogue"]
    assert job.execute_in_process(instance=instance, asset_selection=[dg.AssetKey(k) for k in tables],
                                  raise_on_error=False, run_config=QUIET).success
    sounds = instance.get_latest_materialization_event(dg.AssetKey("sounds")).asset_materialization.metadata
    assert "HD_EPIC_Sounds.csv" in sounds["rows_by_file"].value
    result = job.execute_in_process(instance=instance, raise_on_error=False, run_config=QUIET, partition_key=key,
                                    asset_selection=[dg.AssetKey(k) for k in ("clip_annotations", "questions",
                                                                              "distractor_pools", "items")])
    assert result.success
    checks = [e for e in result.get_asset_check_evaluations()]
    assert checks and all(c.passed for c in checks if c.check_name != "presence_shortcut")
    questions = read_parquet(TableStore(project.assets).partition_files("questions"))
    assert questions["subtype"].isin(list(SOUND_SUBTYPES)).sum() >= 5


def test_offline_oracle_answers_the_new_cells_from_their_provenance(hd_banks, hd_streams):
    """The oracle answers every HD-EPIC sound and action question it can perceive (scored right under
    ``clip``), through the same solvers and rule scorer as on EPIC-SOUNDS clips; blind and presence run too."""
    from epic_levels_pipeline.responses.runner import offline_responses
    from epic_levels_pipeline.scoring.verdicts import verdicts

    _, cat = hd_streams
    scored = []
    for clip, rows, _, bank, items in hd_banks[:4]:
        responses = offline_responses(clip, items, bank.questions, rows, cat, ["oracle", "blind", "presence"])
        scored.append(verdicts(responses, items))
    v = pd.concat(scored, ignore_index=True)
    new = v[v["subtype"].isin(list(SOUND_SUBTYPES)) & (v["condition"] == "clip")]
    oracle = new[new["responder"] == "oracle"]
    assert len(oracle) and set(oracle["subtype"]) >= {"easy_sound_presence", "low_sound_moment", "medium_action_next"}
    assert oracle["correct"].astype(bool).all()
    assert set(new["responder"]) == {"oracle", "blind", "presence"}


def test_hd_epic_clips_take_noun_variants_from_the_hd_epic_vocabulary(hd_streams):
    from epic_levels_pipeline.bank.clip_view import ClipView
    from epic_levels_pipeline.bank.kinds import synonyms

    ann, cat = hd_streams
    hd = ClipView(CLIP, clip_annotations(ann, CLIP), cat)
    epic = Clip("epic_sounds", "P09_08", 45, 75)
    es = ClipView(epic, clip_annotations(ann, epic), cat)
    hd_only = set(cat.noun_instances("tap", "hd_epic")) - set(cat.noun_instances("tap"))
    assert hd_only and hd_only & set(synonyms(cat, hd, "noun:0", "tap"))
    assert not hd_only & set(synonyms(cat, es, "noun:0", "tap"))  # EPIC-SOUNDS clips keep EPIC-KITCHENS-100's
