"""Text from files reaches the terminal escaped and cut (``terminal.py``): a file cannot drive the user's terminal."""

import io

from hypothesis import given, strategies as st

from epic_levels_pipeline.cli import main
from epic_levels_pipeline.errors import Problem
from epic_levels_pipeline.terminal import VALUE_LIMIT, EscapingWriter, printable, printable_lines

# The first line of the probe's file: an invalid UTF-8 byte, a colour, a colour reset, a window title set by OSC.
HOSTILE = b"\x80\x1b[31mRED\x1b[0m\x1b]0;pwned\x07"


def test_control_characters_are_written_as_escapes():
    text = HOSTILE.decode("utf-8", errors="replace") + "\r\u202eevil\t"
    shown = printable(text)
    assert shown == "\ufffd\\x1b[31mRED\\x1b[0m\\x1b]0;pwned\\x07\\x0d\\u202eevil\\x09"
    assert shown.isprintable()
    assert printable("P09_08 tap running (café)") == "P09_08 tap running (café)"  # plain text unchanged


def test_long_values_are_cut_and_say_how_much():
    shown = printable("x" * (VALUE_LIMIT + 50))
    assert shown == "x" * VALUE_LIMIT + "… (50 more characters)"
    assert printable("y" * 10, limit=None) == "y" * 10


def test_a_message_of_several_lines_keeps_its_own_newlines_only():
    assert printable_lines("first \x1b[2J\nsecond\r") == "first \\x1b[2J\nsecond\\x0d"


@given(st.text())
def test_whatever_a_file_holds_prints_as_printable_lines(text):
    for line in printable_lines(text, limit=None).split("\n"):
        assert line.isprintable()


def test_the_writer_escapes_everything_and_cuts_long_lines():
    out = io.StringIO()
    writer = EscapingWriter(out, limit=20)
    writer.write("t \x1b]0;x\x07\n")
    writer.write("a" * 15)
    writer.write("b" * 15 + "\nnext\n")
    assert not writer.isatty()
    assert out.getvalue() == "t \\x1b]0;x\\x07\n" + "a" * 15 + "b" * 5 + " …(line cut)\nnext\n"


def test_a_problem_escapes_and_cuts_each_of_its_parts():
    problem = Problem("f.csv", 1, "\x1b[31mcol", "bad value " + "z" * 1000)
    shown = str(problem)
    assert shown.startswith("f.csv:1:\\x1b[31mcol: bad value ") and shown.isprintable()
    assert len(shown) < 700


def test_validate_prints_a_hostile_first_line_escaped(tmp_path, capsys):
    """The probe: a CSV whose first line holds escape sequences; `validate` names the problem, the terminal
    receives no escape character."""
    source = tmp_path / "EPIC_Sounds_validation.csv"
    source.write_bytes(HOSTILE + b"\nannotation_id,participant_id\n")
    assert main(["validate", str(source)]) == 1
    out, err = capsys.readouterr()
    assert "\x1b" not in out + err and "\x07" not in out + err
    assert "\\x1b]0;pwned\\x07" in out and "invalid UTF-8 byte 0x80" in out


def test_every_command_prints_through_the_escaping_streams(tmp_path, capsys, monkeypatch):
    """An error message carrying a file's bytes (here the project file's key) reaches stderr escaped."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "clips.csv").write_text("dataset,video_id,start_s,end_s\n")
    (tmp_path / "epic-levels.toml").write_text('[data]\n"\\u001b]0;pwned\\u0007" = "x"\n')
    monkeypatch.setenv("EPIC_LEVELS_HOME", str(tmp_path))
    assert main(["validate"]) == 2  # a configuration problem
    err = capsys.readouterr().err
    assert "\x1b" not in err and "[data].\\x1b]0;pwned\\x07: unknown key" in err
