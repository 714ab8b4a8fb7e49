"""External multiple-choice import (HD-EPIC VQA): the step-1 rule on hand-written questions, the checker,
keys consistent across formats, file validation, the sample file, and (when staged) every real file."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from epic_levels_pipeline.cli.import_mcq import main_import
from epic_levels_pipeline.formats import items as formats
from epic_levels_pipeline.imports.vqa_reading import DATASET, VqaFileError, read_vqa_file
from epic_levels_pipeline.annotations.language import LETTERS
from epic_levels_pipeline.imports.vqa_conversion import convert, import_files
from epic_levels_pipeline.imports.vqa_rewriting import declarative, rewrite_stand_alone, singular, step1
from epic_levels_pipeline.formats.prompts import REASON_LINE, multiple_choice_prompt, open_prompt, option_judgement_prompt
from epic_levels_pipeline.formats.registry import chance, item_formats

REPO_ROOT = Path(__file__).resolve().parents[2]
STAGED = REPO_ROOT / ".." / "shared" / "data" / "hd-epic" / "vqa-benchmark"
T1, T2 = "<TIME 00:01:02.500 video 1>", "<TIME 00:01:09.000 video 1>"
VIDEO = {"video 1": {"id": "P01-20240202-110250"}}


def q(question: str, choices: list, correct: int = 0, qid: str = "hand_0") -> dict:
    return {"qid": qid, "inputs": VIDEO, "question": question, "choices": choices, "correct_idx": correct}


# --- step 1 on hand-written questions ---------------------------------------------------------------------


def test_number_choices_go_open_with_number_format():
    d = step1("How many times did the person open the fridge?", ["0", "3", "4", "2", "1"])
    assert (d.can_stand_alone, d.answer_type, d.reason_code) == (True, "number", "count")
    c = convert(q("How many times did the person open the fridge?", ["0", "3", "4", "2", "1"], 3), source="t.json")
    open_item = next(i for i in c["items"] if i["format"] == "open")
    assert "Answer with a number." in open_item["prompt"] and open_item["expected"] == "2"


def test_which_of_the_following_is_rewritten_when_unique():
    d = step1("Which of the following objects did I pick up first?", ["knife", "plate", "cup", "spoon", "pan"])
    assert d.can_stand_alone and d.reason_code == "unique_name"
    assert d.open_question == "Which object did I pick up first?"
    assert not formats.open_problems(open_prompt(d.open_question, d.answer_type), ["knife"])
    assert rewrite_stand_alone("Which of these ingredients were added last")[0] == "Which ingredient was added last?"


@pytest.mark.parametrize("question, choices, code", [
    ("Which of the following ingredients were added to the dish?", ["salt", "peas", "kale", "rice", "oil"], "set_selection"),
    ("Which of these ingredients is not used in Pesto Pasta", ["salt", "peas", "kale", "rice", "oil"], "negated_selection"),
    ("Which option best describes the tool used?", ["knife", "plate", "cup", "spoon", "pan"], "set_selection"),
    ("What did the person pick up?", ["knife", "plate", "cup", "spoon", "pan"], "no_uniqueness_marker"),
    ("Which of the ingredients in these images has the most fat?", ["salt", "peas", "kale", "rice", "oil"],
     "input_set_selection"),
])
def test_list_dependent_or_non_unique_questions_stay_4b(question, choices, code):
    d = step1(question, choices)
    assert (d.can_stand_alone, d.reason_code) == (False, code)


@pytest.mark.parametrize("choices, code", [
    ([f"From {T1} to {T2}"] * 1 + [f"From {T2} to {T1}", "From 00:03:00 to 00:03:05", "00:04:01", "00:05:00 to 00:05:09"],
     "time_choices"),
    (["knife", "plate", "all of the above", "spoon", "none of these"], "choice_cross_reference"),
    (["knife", "plate", "both A and B", "spoon", "pan"], "choice_cross_reference"),
    (["A and C", "plate", "cup", "spoon", "pan"], "choice_cross_reference"),
    (["113 g", "98 g", "117 g", "101 g", "94 g"], "quantity_with_unit"),
    (["1.5", "2", "3", "4", "5"], "quantity_with_unit"),
    (["3 o'clock", "6 o'clock", "9 o'clock", "12 o'clock", "1 o'clock"], "clock_direction"),
    (["At the fridge.", "At the sink.", "At the hob.", "At the table.", "At the oven."], "location"),
    (["Stir the rice slowly, adding stock.", "Chop the onions.", "Grate the cheese into a bowl.", "Boil water.",
      "Serve."], "long_choices"),
])
def test_choice_shapes_that_need_the_options(choices, code):
    d = step1("What is the highest thing here?", choices)
    assert (d.can_stand_alone, d.reason_code) == (False, code)


def test_ordering_choices_are_4b_and_rendered_as_text():
    choices = [["salt", "oil", "rice"], ["oil", "salt", "rice"], ["rice", "oil", "salt"], ["salt", "rice", "oil"],
               ["oil", "rice", "salt"]]
    c = convert(q("What is the order of ingredients added to the dish in this video?", choices, 2), source="t.json")
    assert c["base_format"] == "option_judgement" and c["stand_alone_reason_code"] == "ordering_choices"
    assert c["answer"] == "rice, oil, salt"


def test_checker_rejection_is_counted_and_kept_as_4b():
    # The wording leaks an option ("kettle"): Step 1 says open, the checker says no.
    c = convert(q("What is the heaviest item moved after the kettle?", ["kettle", "pan", "cup", "bowl", "jug"], 1),
                source="t.json")
    assert c["rejected_by_checker"] and c["base_format"] == "option_judgement"
    assert any("kettle" in p for p in c["checker_problems"]) and not c["checker_markup_only"]
    # Digits of the choices inside <TIME …> markup are not wording: the checker masks markup, so a count
    # question stays open.
    d = step1(f"How many times did I open the drawer in {T1}?", ["0", "1", "2", "3", "4"])
    assert not d.rejected_by_checker and d.can_stand_alone and d.answer_type == "number"


def test_singular():
    assert [singular(w) for w in ["ingredients", "tomatoes", "boxes", "berries", "glass", "rice"]] == \
        ["ingredient", "tomato", "box", "berry", "glass", "rice"]


# --- items: keys consistent across formats, open items pass the checker -----------------------------------

HAND = [
    q("How many times did I close the drawer?", ["0", "3", "4", "2", "1"], 4, "h1"),
    q("Which of the following objects did I pick up first?", ["knife", "plate", "cup", "spoon", "pan"], 2, "h2"),
    q("Which of these ingredients were added?", ["salt", "peas", "kale", "rice", "oil"], 0, "h3"),
    q(f"When was ingredient salt added to recipe soup?", [f"From {T1} to {T2}", f"From {T2} to {T1}",
      "From <TIME 00:00:01.000 video 1> to <TIME 00:00:02.000 video 1>",
      "From <TIME 00:00:03.000 video 1> to <TIME 00:00:04.000 video 1>",
      "From <TIME 00:00:05.000 video 1> to <TIME 00:00:06.000 video 1>"], 1, "h4"),
    q("What is the ingredient with highest fat in this recipe?", ["butter", "onions", "rice", "peas", "kale"], 0, "h5"),
    q("Where is the kettle?", ["sink", "hob", "counter", "shelf", "drawer"], 3, "h6"),
]


def check_items(question: dict, items: list[dict]) -> None:
    """Every item's expected answer agrees with the base question's key; chances are formats.chance's."""
    idx, options = question["answer_index"], question["options"]
    n = len(options)
    by_format = {i["format"]: i for i in items}
    assert set(by_format) in ({"yes_no", "multiple_choice", "official_mcq", "open", "open_with_reason"},
                              {"yes_no", "multiple_choice", "official_mcq", "option_judgement", "open_with_reason"})
    official = by_format["official_mcq"]  # the question as its authors ask it: five choices, a letter
    assert official["expected"] == LETTERS[idx] and official["chance"] == pytest.approx(1 / n)
    assert official["prompt"].endswith("Correct:") and f"({LETTERS[idx]}) " in official["prompt"]
    assert options[idx] == question["answer"]
    mc = by_format["multiple_choice"]
    assert mc["expected"] == LETTERS[idx] and f"\n{LETTERS[idx]}. {options[idx]}\n" in mc["prompt"] + "\n"
    assert mc["chance"] == pytest.approx(1 / 5 if n == 5 else 1 / n)
    yn = by_format["yes_no"]
    shown = int(yn["statement_value"].split(":")[1])
    assert yn["expected"] == ("yes" if shown == idx else "no") and yn["statement_true"] == (shown == idx)
    assert options[shown].rstrip(".") in yn["prompt"] or yn["yes_no_style"] == "statement"
    assert yn["chance"] == 0.5
    assert list(items[0]["option_truth"]) == [i == idx for i in range(n)]
    reasoned = by_format["open_with_reason"]
    if "open" in by_format:
        item = by_format["open"]
        assert not formats.open_problems(item["prompt"], options), item["prompt"]
        assert item["expected"] in (options[idx], str(int(options[idx])) if options[idx].isdigit() else None)
        assert item["chance"] == 0.0 and question["base_format"] == "open"
        assert reasoned["base_format"] == "open" and reasoned["expected"] == item["expected"]
        assert not formats.open_problems(reasoned["prompt"], options)
    else:
        item = by_format["option_judgement"]
        truth = item["expected"].split(",")
        assert len(truth) == n and truth.count("true") == 1 and truth[idx] == "true"
        assert item["chance"] == pytest.approx(chance("option_judgement", n_options=5)) == pytest.approx(1 / 5)
        assert reasoned["base_format"] == "option_judgement" and reasoned["expected"] == item["expected"]
        assert reasoned["chance"] == item["chance"] and REASON_LINE in reasoned["prompt"]
        assert f"{LETTERS[n - 1]}: <true/false>" in item["prompt"]


@pytest.mark.parametrize("record", HAND, ids=[r["qid"] for r in HAND])
@pytest.mark.parametrize("want_true", [True, False])
def test_hand_written_items_are_consistent(record, want_true):
    c = convert(record, source="hand.json", want_true=want_true)
    check_items(c, c["items"])
    assert all(i["dataset"] == DATASET and i["question_id"] == c["question_id"] for i in c["items"])


def test_declarative_and_fallback_yes_no():
    assert declarative(f"How many times did I close the drawer in {T1}?", "1") == f"I closed the drawer 1 time in {T1}."
    assert declarative("What is the person looking at in this video segment?", "At the fridge.") == \
        "In this video segment, the person is looking at the fridge."
    c = convert(q("Which of these recipes were carried out in this video?", ["Pesto Pasta", "Omurice", "Stir Fry",
                                                                           "Chili", "Dal"], 1), source="t.json",
                want_true=True)
    yn = next(i for i in c["items"] if i["format"] == "yes_no")
    assert yn["yes_no_style"] == "proposed_answer"
    assert yn["prompt"].startswith("Question: Which of these recipes were carried out in this video?\n"
                                   "Proposed answer: Omurice.\n\nIs the proposed answer correct?")


def test_imported_prompts_are_the_format_templates_with_letters_beyond_d():
    opts = ["knife", "plate", "cup", "spoon", "fork"]
    assert "\nE. fork\n" in multiple_choice_prompt("Q?", opts)
    assert "E: <true/false>" in option_judgement_prompt("Q?", opts, True)


# --- files ------------------------------------------------------------------------------------------------


def write(path: Path, data) -> Path:
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_bad_shapes_name_file_question_and_field(tmp_path):
    f = write(tmp_path / "bad.json", {
        "ok_0": {"inputs": VIDEO, "question": "How many?", "choices": ["1", "2", "3", "4", "5"], "correct_idx": 0},
        "bad_1": {"inputs": VIDEO, "question": "How many?", "choices": ["1", "2"], "correct_idx": 7},
        "bad_2": {"inputs": {}, "question": "", "choices": "1,2", "correct_idx": "0"},
        "bad_3": {"inputs": VIDEO, "question": "Q?", "choices": ["a", "A", "b", "c", "d"], "correct_idx": 0},
    })
    with pytest.raises(VqaFileError) as exc:
        read_vqa_file(f)
    lines = {str(p) for p in exc.value.problems}
    assert "bad.json:bad_1:correct_idx: 7 is out of range for 2 choices" in lines
    assert {"bad.json:bad_2:inputs", "bad.json:bad_2:question", "bad.json:bad_2:choices", "bad.json:bad_2:correct_idx"} \
        <= {s.rsplit(":", 1)[0] for s in lines}
    assert any(s.startswith("bad.json:bad_3:choices: duplicate choice") for s in lines)
    assert not any(":ok_0:" in s for s in lines)
    with pytest.raises(VqaFileError, match="broken.json:-:-: cannot read JSON"):
        read_vqa_file(write(tmp_path / "broken.json", "{not json"))


def _proto(n: int = 4) -> dict:
    return {f"proto_counting_{i}": {"inputs": VIDEO, "question": "How many times did I close the drawer?",
                                    "choices": ["0", "1", "2", "3", "4"], "correct_idx": i % 5} for i in range(n)}


def test_sample_file_copies_are_skipped_and_differences_are_errors(tmp_path):
    proto = _proto()
    full = write(tmp_path / "proto_counting.json", proto)
    sample = {"proto_counting": {"n_questions_in_file": 4, "sample": {k: proto[k] for k in list(proto)[:3]}}}
    sample_file = write(tmp_path / "vqa_benchmark_sample.json", sample)
    questions, items, report = import_files([tmp_path])
    assert len(questions) == 4 and len(items) == 20 and questions["question_id"].is_unique
    row = report.set_index("file").loc["vqa_benchmark_sample.json"]
    assert (row["n_questions"], row["n_skipped_duplicates"], row["n_imported"]) == (3, 3, 0)
    alone, _, _ = import_files([sample_file])
    assert len(alone) == 3 and set(alone["prototype"]) == {"proto_counting"}
    sample["proto_counting"]["sample"]["proto_counting_0"] = {**proto["proto_counting_0"], "correct_idx": 4}
    write(sample_file, sample)
    with pytest.raises(VqaFileError, match="vqa_benchmark_sample.json:proto_counting_0:-: differs from proto_counting.json"):
        import_files([full, sample_file])
    write(tmp_path / "other.json", {"proto_counting_1": proto["proto_counting_1"]})
    with pytest.raises(VqaFileError, match="duplicate question id"):
        import_files([full, tmp_path / "other.json"])


def test_main_import_writes_outputs_and_exit_codes(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    write(src / "proto_counting.json", _proto(6))
    out = tmp_path / "out"
    assert main_import([src], out) == 0
    items = pd.read_parquet(out / "hd_epic_vqa_items.parquet")
    questions = pd.read_parquet(out / "hd_epic_vqa_questions.parquet")
    report = pd.read_csv(out / "hd_epic_vqa_import_report.csv")
    assert len(questions) == 6 and len(items) == 30 and report["n_open"].tolist() == [6]
    assert set(formats.ITEM_COLUMNS) <= set(items.columns)
    assert (items.loc[items["format"] == "yes_no", "expected"] == "yes").sum() == 3  # balanced per file
    assert "proto_counting.json" in capsys.readouterr().out
    assert main_import([tmp_path / "missing.json"], out) == 1
    write(src / "bad.json", {"x": {"question": "Q?"}})
    assert main_import([src], tmp_path / "out2") == 1 and not (tmp_path / "out2").exists()
    assert "bad.json:x:inputs:" in capsys.readouterr().err


# --- every staged file -------------------------------------------------------------------------------------


@pytest.mark.skipif(not STAGED.is_dir(), reason=f"staged HD-EPIC VQA files not present at {STAGED}")
def test_all_staged_files_convert():
    files = sorted(STAGED.glob("*.json"))
    questions, items, report = import_files(files)
    per_file = {f.name: len(read_vqa_file(f)) for f in files if f.name != "vqa_benchmark_sample.json"}
    assert len(questions) == sum(per_file.values()) and questions["question_id"].is_unique
    # Each question in every format imported questions are asked in, but one of open / option_judgement (its
    # base format): yes_no, multiple_choice, official_mcq (the authors' protocol), the base, open_with_reason.
    per_question = len(item_formats("imported")) - 1
    assert len(items) == per_question * len(questions)
    assert (report["n_open"] + report["n_option_judgement"] == report["n_imported"]).all()
    sample = report.set_index("file").loc["vqa_benchmark_sample.json"]
    assert sample["n_imported"] == 0 and sample["n_skipped_duplicates"] == sample["n_questions"]
    by_question: dict[str, list[dict]] = {}
    for item in items.to_dict("records"):
        by_question.setdefault(item["question_id"], []).append(item)
    for qrow in questions.to_dict("records"):
        check_items(qrow, by_question[qrow["question_id"]])
    yes = items[items["format"] == "yes_no"].groupby("source_file")["expected"].agg(
        lambda s: abs(2 * (s == "yes").sum() - len(s)))
    assert (yes <= 1).all()
    rejected = questions[questions["rejected_by_checker"]]
    assert (rejected["base_format"] == "option_judgement").all()


def test_unconvertible_questions_skipped_with_reason_unless_strict(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    good = {"inputs": VIDEO, "question": "How many times did I open the fridge?", "choices": ["1", "2", "3", "4", "5"],
            "correct_idx": 0}
    write(src / "proto.json", {
        "ok_0": good, "ok_1": {**good, "correct_idx": 2},
        "dup": {**good, "choices": ["a", "A", "b", "c", "d"]},
        "no_key": {**good, "correct_idx": 5},
        "bad_time": {**good, "inputs": {"video 1": {"id": "P01-20240202-110250", "start_time": "00:01:02.5x",
                                                    "end_time": "00:02:00.000"}}},
        "backwards": {**good, "inputs": {"video 1": {"id": "P01-20240202-110250", "start_time": "00:03:00.000",
                                                     "end_time": "00:02:00.000"}}},
    })
    skipped: list = []
    questions, _, report = import_files([src], skipped=skipped)
    assert sorted(questions["source_qid"]) == ["ok_0", "ok_1"]
    assert {s["qid"]: s["reason"] for s in skipped} == {"dup": "duplicate_choices", "no_key": "answer_not_among_choices",
                                                       "bad_time": "malformed_times", "backwards": "malformed_times"}
    row = report.iloc[0]
    assert (row["n_questions"], row["n_imported"], row["n_skipped_duplicate_choices"],
            row["n_skipped_answer_not_among_choices"], row["n_skipped_malformed_times"]) == (6, 2, 1, 1, 2)
    with pytest.raises(VqaFileError, match="proto.json:dup:choices: duplicate choice"):
        import_files([src], strict=True)
    assert main_import([src], tmp_path / "out") == 0
    assert "skipped as unconvertible: 4 (answer_not_among_choices 1, duplicate_choices 1, malformed_times 2)" \
        in capsys.readouterr().out
    table = pd.read_parquet(tmp_path / "out" / "hd_epic_vqa_skipped.parquet")
    assert len(table) == 4
    assert main_import([src], tmp_path / "out3", strict=True) == 1 and not (tmp_path / "out3").exists()
