"""A format is one entry: ``pair_choice`` (the key beside one wrong option, replied ``Pick: A``) is defined in this
module alone, registered, and flows through the items, the offline responders, the verdicts and the scores of the
bundled clips, with nothing else in the package changed."""

from __future__ import annotations

import re

import pytest

from epic_levels_pipeline.cli import build_parser
from epic_levels_pipeline.formats.answers import PICK_ONE
from epic_levels_pipeline.formats.parsing import PARSED, UNPARSED, Parsed, ReplyForm, parse_reply, render_reply
from epic_levels_pipeline.formats.registry import (FORMATS, Format, chance, item_formats, register_format,
                                                   unregister_format)
from epic_levels_pipeline.pipeline import run_core
from epic_levels_pipeline.seeding import stable_seed
from epic_levels_pipeline.settings import Paths

from ..conftest import ROOT

NAME = "pair_choice"
_PICK = re.compile(r"^\s*Pick:\s*([AB])\s*$", re.M)


def _parse(reply, *, n_options: int = 2) -> Parsed:
    found = _PICK.findall(str(reply or ""))
    return Parsed(found[-1], PARSED, "pick line") if found else Parsed(None, UNPARSED, "no 'Pick: A|B' line")


PICK_FORM = ReplyForm("pick", lambda value: f"Pick: {'AB'[value] if isinstance(value, int) else value}", _parse)


def _items(entry, q) -> list[dict]:
    """The key and the first wrong option, in an order seeded by the question."""
    wrong = next(i for i, t in enumerate(q.truth) if not t)
    shown = sorted([q.key, wrong], key=lambda i: stable_seed("pair", q.question_id, i))
    options = [q.options[i] for i in shown]
    prompt = (f"{q.question}\nA. {options[0]}\nB. {options[1]}\n\n"
              "Reply with the letter of the correct option, in exactly this format:\nPick: <letter>")
    return [q.item(NAME, NAME, prompt, "AB"[shown.index(q.key)], entry.chance(2), options=options,
                   option_values=[q.values[i] for i in shown], option_truth=[bool(q.truth[i]) for i in shown])]


def _rule(item, reply: str):
    p = _parse(reply)
    return (p.value, p.value == item.expected, "rule", p.note, None) if p.ok else ("", False, "unparsed", p.note, None)


PAIR = Format(NAME, lambda n: 1 / n, _items, PICK_FORM, _rule, PICK_ONE, output_tokens=4, asked_of=("bank",),
              listed=lambda item: [str(o) for o in item.options])


@pytest.fixture()
def pair_format():
    register_format(PAIR)
    try:
        yield PAIR
    finally:
        unregister_format(NAME)
    assert NAME not in FORMATS


def test_the_reply_form_reads_back_what_it_writes(pair_format):
    assert parse_reply("pick", render_reply("pick", 1)).value == "B"
    assert NAME in item_formats() and chance(NAME, n_options=2) == 0.5


def test_the_command_lines_format_choices_come_from_the_registry(pair_format):
    args = build_parser().parse_args(["questions", "--clip", "epic_sounds__P09_08__45-75", "--format", NAME])
    assert args.format == NAME
    unregister_format(NAME)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["questions", "--clip", "epic_sounds__P09_08__45-75", "--format", NAME])
    register_format(PAIR)


def test_a_format_defined_here_flows_through_items_responses_verdicts_and_scores(pair_format, bundled):
    ann, cat = bundled
    result = run_core(Paths(ROOT), annotations=ann, catalogue=cat, n_boot=50)
    items = result.items[result.items["format"] == NAME]
    assert len(items) == result.questions["question_id"].nunique() > 0
    assert set(items["expected"]) <= {"A", "B"} and (items["chance"] == 0.5).all()

    responses = result.responses[result.responses["format"] == NAME]
    assert set(responses["responder"]) == {"oracle", "chance", "presence", "blind"}
    assert responses["reply"].str.fullmatch(r"Pick: [AB]|Answer: cannot tell").all()

    verdicts = result.verdicts[result.verdicts["format"] == NAME]
    assert len(verdicts) == len(responses)
    oracle_clip = verdicts[(verdicts["responder"] == "oracle") & (verdicts["condition"] == "clip")]
    assert oracle_clip["scored_by"].eq("rule").all() and oracle_clip["correct"].all()

    scores = result.scores[(result.scores["format"] == NAME) & (result.scores["dataset"] == "*")
                           & (result.scores["level"] == "*") & (result.scores["subtype"] == "*")]
    oracle = scores[(scores["responder"] == "oracle") & (scores["condition"] == "clip")]
    assert oracle["chance"].iloc[0] == 0.5 and oracle["chance_corrected"].iloc[0] == pytest.approx(1.0)
    chance_score = scores[(scores["responder"] == "chance") & (scores["condition"] == "clip")]
    assert abs(chance_score["accuracy"].iloc[0] - 0.5) < 0.2
