"""Rule parsers: adversarial replies with their expected verdicts, and render → parse round trips."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from epic_levels_pipeline.formats.parsing import (
    FORMATS, Parsed, answer_text, machine_form, match_open, normalise_name, number_value, number_word, parse_letter,
    parse_letter_set, parse_number, parse_option_judgements, parse_reply, parse_yes_no, reason_text, render_reply,
)

P, U, D = "parsed", "unparsed", "undecided"


def verdict(p: Parsed):
    return (p.status, p.value)


# --- yes / no -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("reply, expected", [
    ("Answer: yes", (P, "yes")),
    ("Answer: no", (P, "no")),
    ("answer: YES", (P, "yes")),
    ("**Answer:** No.", (P, "no")),
    ("**Answer**: yes", (P, "yes")),
    ("   Answer :   yes   \n\n", (P, "yes")),
    ("Answer: Yes, the tap is running.", (P, "yes")),
    ("Answer: no\nThough one could say yes if the sound counts.", (P, "no")),
    ("Let me think. No sound at first, then yes.\nAnswer: yes", (P, "yes")),
    ("Answer: yes\nBecause: no one else was there.", (P, "yes")),
    ("Yes.", (P, "yes")),
    ("**no**", (P, "no")),
    ("Answer: yes or no", (U, None)),
    ("Answer: maybe", (U, None)),
    ("Answer: true", (U, None)),
    ("Answer: not yes", (U, None)),
    ("Answer:", (U, None)),
    ("I think yes", (U, None)),
    ("", (U, None)),
    (None, (U, None)),
])
def test_yes_no(reply, expected):
    assert verdict(parse_yes_no(reply)) == expected


# --- one letter -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("reply, expected", [
    ("Answer: B", (P, "B")),
    ("Answer: (b)", (P, "B")),
    ("Answer: b", (P, "B")),
    ("Answer: B.", (P, "B")),
    ("Answer: B) the wooden spoon", (P, "B")),
    ("**Answer:** B", (P, "B")),
    ("**Answer:** **B**", (P, "B")),
    ("Answer:   [C]  ", (P, "C")),
    ("Answer: Option D", (P, "D")),
    ("Final answer: A", (P, "A")),
    ("B", (P, "B")),
    ("B.", (P, "B")),
    ("(b)", (P, "B")),
    ("  **C**  \n", (P, "C")),
    ("The answer is B", (P, "B")),
    ("After watching, the correct answer is (c).", (P, "C")),
    ("**Answer:**\n\nB\n\nC would need a second sound.", (P, "B")),  # empty answer line: next line
    ("Answer: A\n...on reflection...\nAnswer: C", (P, "C")),           # the last answer line
    ("Answer: B\nReasoning: option C is wrong, A is not it either.", (P, "B")),
    ("Answer: B. A beep", (P, "B")),     # option text after the letter: 'A' is the article
    ("Answer: B, a spoon", (P, "B")),
    ("Answer: A is correct", (P, "A")),
    ("Answer: Bowl", (U, None)),         # a letter inside a word
    ("Answer: Chopping", (U, None)),
    ("Answer: A spoon", (U, None)),      # the article, not option A
    ("Answer: B or C", (U, None)),
    ("Answer: B, C", (U, None)),
    ("Answer: b or c", (U, None)),
    ("Answer: C or A is right", (U, None)),
    ("Answer: not B", (U, None)),
    ("not B", (U, None)),
    ("Answer: B is not right", (U, None)),
    ("The answer is not B", (U, None)),
    ("Answer: E", (U, None)),            # beyond four options
    ("I pick B", (U, None)),
    ("The answer is B. Actually the answer is C.", (U, None)),
    ("", (U, None)),
])
def test_letter(reply, expected):
    assert verdict(parse_letter(reply)) == expected


def test_letter_respects_n_options():
    assert parse_letter("Answer: E", n_options=5).value == "E"
    assert parse_letter("Answer: D", n_options=3).status == U


# --- letter sets ----------------------------------------------------------------------------------------

AC = frozenset("AC")


@pytest.mark.parametrize("reply, expected", [
    ("Answer: A, C", (P, AC)),
    ("Answer: A and C", (P, AC)),
    ("Answer: A,C", (P, AC)),
    ("Answer: C, A", (P, AC)),
    ("Answer: a, c", (P, AC)),
    ("Answer: (A) (C)", (P, AC)),
    ("Answer: A & C.", (P, AC)),
    ("Answer: A, A, C", (P, AC)),
    ("Answer: A, C, and D", (P, frozenset("ACD"))),
    ("**Answer:** A and C are true", (P, AC)),
    ("Answer: B", (P, frozenset("B"))),
    ("A, C", (P, AC)),
    ("The answer is A and C", (P, AC)),
    ("Answer: A, C\nB: true would need the tap to run.", (P, AC)),
    ("Answer: A, E", (U, None)),
    ("Answer: none", (U, None)),
    ("Answer:", (U, None)),
    ("Answer: all but B", (U, None)),
    ("Answer: A and C, not B", (U, None)),
    ("bad", (U, None)),  # letters inside a word are not a list
    ("", (U, None)),
])
def test_letter_set(reply, expected):
    assert verdict(parse_letter_set(reply)) == expected


# --- option judgements (4b) -----------------------------------------------------------------------------

TFFT = (True, False, False, True)


@pytest.mark.parametrize("reply, expected", [
    ("A: true\nB: false\nC: false\nD: true", (P, TFFT)),
    ("D: true\nB: false\nA: true\nC: false", (P, TFFT)),
    ("a: TRUE\nb: False\nc: F\nd: T", (P, TFFT)),
    ("A: yes\nB: no\nC: no\nD: yes", (P, TFFT)),
    ("**A:** true\n**B:** false\n- **C**: false\n- D: true", (P, TFFT)),
    ("(A) true\n(B) false\n(C) false\n(D) true", (P, TFFT)),
    ("A) true\nB) false\nC) false\nD) true", (P, TFFT)),
    ("  A:   true  \n\n B:false\nC :  false\nD: true.  ", (P, TFFT)),
    ("Answer: A: true, B: false, C: false, D: true", (P, TFFT)),
    ("A: true\nB: false\nC: false\nD: true\nStatement B is true because the tap runs; all true.", (P, TFFT)),
    ("A: true\nB: false\nC: false\nD: true\nI think B: true could be argued.", (P, TFFT)),
    ("A: true\nB: false\nC: false\nD: true\nBecause: B: true is tempting but wrong.", (P, TFFT)),
    ("A: true\nB: false\nC: false\nD: true\nA: true", (P, TFFT)),  # duplicate, same verdict
    ("A: true\nB: false\nC: false", (U, None)),                    # D missing
    ("A: true\nB: false\nC: false\nD: true\nA: false", (U, None)),  # duplicate, conflicting
    ("A: true/false\nB: false\nC: false\nD: true", (U, None)),
    ("A: not true\nB: false\nC: false\nD: true", (U, None)),
    ("A: true\nB: false\nC: false\nD: true\nE: false", (U, None)),
    ("A is true, B is false, C is false, D is true", (U, None)),
    ("", (U, None)),
])
def test_option_judgements(reply, expected):
    assert verdict(parse_option_judgements(reply)) == expected


# --- numbers --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("reply, expected", [
    ("Answer: 3", (P, 3)),
    ("Answer: three", (P, 3)),
    ("Answer: Three times.", (P, 3)),
    ("Answer: twice", (P, 2)),
    ("Answer: once", (P, 1)),
    ("Answer: 3 (three)", (P, 3)),
    ("Answer: zero", (P, 0)),
    ("Answer: never", (P, 0)),
    ("Answer: twenty", (P, 20)),
    ("Answer: 12", (P, 12)),
    ("3", (P, 3)),
    ("five times", (P, 5)),
    ("Answer: 4\nI counted one, two, three, four taps.", (P, 4)),
    ("Answer: 2 or 3", (U, None)),
    ("Answer: two or three times", (U, None)),
    ("Answer: twenty-one", (U, None)),
    ("Answer: 3.5", (U, None)),
    ("Answer: not 3", (U, None)),
    ("Answer: several", (U, None)),
    ("I counted 3 taps", (U, None)),
])
def test_number(reply, expected):
    assert verdict(parse_number(reply)) == expected


def test_number_words_round_trip():
    for n in range(0, 21):
        assert number_value(number_word(n)) == n
        assert number_value(str(n)) == n
    assert number_word(42) == "42"
    assert number_value("3.5") is None


# --- open text and reasons ------------------------------------------------------------------------------

@pytest.mark.parametrize("reply, expected", [
    ("Answer: the wooden spoon", (P, "the wooden spoon")),
    ("**Answer:** *wooden spoon*.", (P, "wooden spoon")),
    ('Answer: "spoon"', (P, "spoon")),
    ("Answer:   spoon   \nBecause: it stirs.", (P, "spoon")),
    ("Answer: spoon\nBecause: Answer: fork", (P, "spoon")),
    ("Answer: spoon Because: it stirs", (P, "spoon")),
    ("I saw a spoon\nAnswer: fork\nOr maybe not.", (P, "fork")),
    ("Answer: spoon?", (P, "spoon?")),
    ("It was a spoon.", (U, None)),
    ("Answer:   ", (U, None)),
])
def test_answer_text(reply, expected):
    assert verdict(answer_text(reply)) == expected


@pytest.mark.parametrize("reply, expected", [
    ("Answer: spoon\nBecause: it was used to stir.", "it was used to stir."),
    ("Answer: spoon\n**Because:** it stirs", "it stirs"),
    ("A: true\nB: false\nC: false\nD: true\nbecause:   B is absent  ", "B is absent"),
    ("Answer: spoon Because: it stirs", "it stirs"),
    ("Answer: spoon", None),
    ("Answer: spoon\nBecause:", None),
])
def test_reason_text(reply, expected):
    assert reason_text(reply) == expected


# --- open names matched to options ----------------------------------------------------------------------

CANDIDATES = [
    ["pan", "pan:frying"],
    ["pan lid", "lid:pan"],
    ["spoon", "teaspoon", "spoon:wooden"],
    ["board", "board:chopping"],
    ["knife"],
]


@pytest.mark.parametrize("answer, expected", [
    ("pan", (P, 0)),
    ("The pans", (P, 0)),
    ("the frying pan on the hob", (P, 0)),
    ("the pan lid", (P, 1)),          # "pan lid" is not "pan"
    ("lid of the pan", (D, None)),      # "pan" after "of" is a complement: not named
    ("a teaspoon", (P, 2)),
    ("Wooden spoons", (P, 2)),
    ("spoon:wooden", (P, 2)),
    ("chopping board", (P, 3)),         # "board" inside the longer "chopping board" is discarded
    ("knives", (P, 4)),
    ("the spoon and the knife", (D, None)),
    ("spoon, then knife", (D, None)),
    ("not the spoon", (D, None)),
    ("no spoon", (D, None)),
    ("it isn't the knife", (D, None)),
    ("neither", (D, None)),
    ("maybe the spoon", (D, None)),
    ("perhaps a knife", (D, None)),
    ("either the spoon", (D, None)),
    ("spoon or ladle", (D, None)),
    ("spoon/ladle", (D, None)),
    ("I think the spoon", (D, None)),
    ("possibly the knife", (D, None)),
    ("not sure, knife", (D, None)),
    ("knife?", (D, None)),
    ("a ladle", (D, None)),             # nothing named: the judge decides
    ("spoon rest", (D, None)),          # "spoon" modifies "rest"
    ("", (U, None)),
])
def test_match_open(answer, expected):
    assert verdict(match_open(answer, CANDIDATES)) == expected


def test_match_open_key_index_does_not_change_the_verdict():
    for key in (None, 0, 1, 2):
        assert match_open("the pan lid", CANDIDATES, key_index=key).value == 1


def test_normalise_name_reads_head_modifier():
    assert normalise_name("spoon:wooden") == ("wooden", "spoon")
    assert normalise_name("bowl:washing:up") == ("washing", "up", "bowl")
    assert normalise_name("The Wooden-Spoon.") == ("wooden", "spoon")


# --- render → parse round trips -------------------------------------------------------------------------

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
TEXT = st.lists(WORD, min_size=1, max_size=5).map(" ".join)
REASON = st.lists(WORD, min_size=1, max_size=8).map(lambda ws: " ".join(ws) + ".")
JUDGEMENTS = st.tuples(st.booleans(), st.booleans(), st.booleans(), st.booleans())
LETTER_SET = st.sets(st.sampled_from("ABCD"), min_size=1).map(frozenset)
TRAILING = ("", "\n\nReasoning: every option looked true at first; yes, I checked them all.",
            "\nThat is my final choice, and I'm sure it is true.")


@st.composite
def decorated(draw, reply: str) -> str:
    """The reply with random surrounding whitespace, case, markdown and trailing reasoning."""
    marker = draw(st.sampled_from(["Answer:", "**Answer:**", "**Answer**:", "Answer :", "answer:", "ANSWER:"]))
    reply = reply.replace("Answer:", marker)
    if draw(st.booleans()):
        reply = reply.replace(marker + " ", marker + "   ")
    if draw(st.booleans()):  # bold judgement letters
        reply = "\n".join(f"**{ln[:2]}** {ln[3:]}" if ln[1:2] == ":" else ln for ln in reply.splitlines())
    case = draw(st.sampled_from(["keep", "upper", "lower"]))
    reply = {"keep": reply, "upper": reply.upper(), "lower": reply.lower()}[case]
    before = draw(st.sampled_from(["", "\n", "  ", "\n\n   "]))
    after = draw(st.sampled_from(["", "\n", "   ", "\n\n"]))
    return before + reply + draw(st.sampled_from(TRAILING)) + after


@given(st.sampled_from(["yes", "no"]), st.data())
def test_round_trip_yes_no(value, data):
    reply = data.draw(decorated(render_reply("yes_no", value)))
    assert parse_yes_no(reply) == Parsed(value, "parsed")
    assert parse_reply("yes_no", render_reply("yes_no", value == "yes")).value == value


@given(st.sampled_from("ABCD"), st.data())
def test_round_trip_multiple_choice(value, data):
    reply = data.draw(decorated(render_reply("multiple_choice", value)))
    assert parse_letter(reply) == Parsed(value, "parsed")
    assert parse_reply("multiple_choice", render_reply("multiple_choice", "ABCD".index(value))).value == value


@given(LETTER_SET, st.data())
def test_round_trip_statements(value, data):
    reply = data.draw(decorated(render_reply("statements", value)))
    assert parse_letter_set(reply) == Parsed(value, "parsed")


@given(TEXT, st.data())
def test_round_trip_open(value, data):
    reply = data.draw(decorated(render_reply("open", value)))
    parsed = answer_text(reply)
    assert parsed.ok and parsed.value.lower() == value.lower()


@given(JUDGEMENTS, st.data())
def test_round_trip_option_judgement(value, data):
    reply = data.draw(decorated(render_reply("option_judgement", value)))
    assert parse_option_judgements(reply) == Parsed(value, "parsed")


@given(TEXT, REASON)
def test_round_trip_open_with_reason(value, reason):
    reply = render_reply("open_with_reason_open", value, reason=reason)
    assert parse_reply("open_with_reason_open", reply) == Parsed(value, "parsed")
    assert reason_text(reply) == reason


@given(JUDGEMENTS, REASON)
def test_round_trip_judgement_with_reason(value, reason):
    reply = render_reply("open_with_reason_judgement", value, reason=reason)
    assert parse_reply("open_with_reason_judgement", reply) == Parsed(value, "parsed")
    assert reason_text(reply) == reason


@given(st.integers(0, 20), st.sampled_from(["{d}", "{w}", "{w} times", "{d} times"]))
def test_round_trip_numbers(n, template):
    reply = "Answer: " + template.format(d=n, w=number_word(n))
    assert parse_number(reply) == Parsed(n, "parsed")


@given(st.sampled_from(["spoon", "wooden spoon", "pan lid", "chopping board", "knife", "kettle"]),
       st.sampled_from(["", "the ", "a ", "some "]), st.booleans(), st.sampled_from(["", ".", " on the hob"]))
def test_named_option_is_found(name, article, plural, tail):
    candidates = [["spoon", "spoon:wooden"], ["lid:pan"], ["board:chopping"], ["knife"], ["kettle"]]
    expected = {"spoon": 0, "wooden spoon": 0, "pan lid": 1, "chopping board": 2, "knife": 3, "kettle": 4}[name]
    word = name + ("s" if plural and not name.endswith("fe") else "")
    assert verdict(match_open(article + word + tail, candidates)) == (P, expected)


def test_render_reply_refuses_what_would_not_parse_back():
    with pytest.raises(ValueError):
        render_reply("open_with_reason_open", "spoon")
    with pytest.raises(ValueError):
        render_reply("open", "spoon Because: it stirs")
    with pytest.raises(ValueError):
        render_reply("statements", [])
    with pytest.raises(ValueError):
        render_reply("nonsense", "x")
    assert set(FORMATS) >= {"yes_no", "multiple_choice", "statements", "open", "option_judgement"}


def test_machine_form_matches_the_expected_column():
    assert machine_form(parse_letter_set("Answer: C and A").value) == "A,C"
    assert machine_form(parse_option_judgements("A: f\nB: t\nC: f\nD: f").value) == "false,true,false,false"
    assert machine_form(parse_letter("Answer: b").value) == "B"
    assert machine_form(parse_yes_no("YES").value) == "yes"
    assert machine_form(parse_number("Answer: three").value) == "3"
