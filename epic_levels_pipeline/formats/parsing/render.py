"""Rendering replies in a stated format (what offline responders write) and parsing them back by format."""

from __future__ import annotations

from ...annotations.language import LETTERS
from .closed import letter_as_written, parse_letter, parse_letter_set, parse_option_judgements, parse_yes_no
from .lines import _INLINE_BECAUSE, FORMATS, Parsed, answer_text


# --- rendering replies, and parsing them by format -------------------------------------------------------

def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _letter(value, n_options: int = 26) -> str:
    if isinstance(value, (int,)) and not isinstance(value, bool):
        return LETTERS[value]
    letter = str(value).strip().upper()
    if len(letter) != 1 or letter not in LETTERS[:n_options]:
        raise ValueError(f"not an option letter: {value!r}")
    return letter


def render_reply(fmt: str, value, *, reason: str | None = None) -> str:
    """A reply in the stated output format of ``fmt`` that the matching parser reads back as ``value``.

    - ``yes_no``: ``"yes"``/``"no"`` or a bool → ``Answer: yes``.
    - ``multiple_choice``: a letter or a 0-based index → ``Answer: B``.
    - ``official_mcq``: a letter or a 0-based index → ``B`` (the letter alone: HD-EPIC's own protocol).
    - ``statements``: letters or indices, non-empty → ``Answer: A, C`` (sorted, duplicates dropped).
    - ``open`` / ``open_with_reason_open``: text → ``Answer: <text>`` (whitespace collapsed to one line).
    - ``option_judgement`` / ``open_with_reason_judgement``: bools → ``A: true`` lines.
    - ``reason``: a ``Because: <sentence>`` line is appended (required by the two ``open_with_reason_*``
      formats, allowed for the others). An open text or reason containing ``Because:`` is refused, since it
      could not be read back unchanged.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {FORMATS}")
    if fmt == "yes_no":
        word = ("yes" if value else "no") if isinstance(value, bool) else str(value).strip().lower()
        if word not in ("yes", "no"):
            raise ValueError(f"yes_no value must be yes/no or a bool, not {value!r}")
        body = f"Answer: {word}"
    elif fmt == "multiple_choice":
        body = f"Answer: {_letter(value)}"
    elif fmt == "official_mcq":  # the letter alone, as the authors' prompt asks
        body = _letter(value)
    elif fmt == "statements":
        letters = sorted({_letter(v) for v in ([value] if isinstance(value, str) else value)})
        if not letters:
            raise ValueError("statements need at least one letter")
        body = "Answer: " + ", ".join(letters)
    elif fmt in ("open", "open_with_reason_open"):
        text = _one_line(value)
        if not text or _INLINE_BECAUSE.search(text):
            raise ValueError(f"open answer must be non-empty and contain no 'Because:': {value!r}")
        body = f"Answer: {text}"
    else:
        body = "\n".join(f"{LETTERS[i]}: {'true' if bool(v) else 'false'}" for i, v in enumerate(value))
    if fmt.startswith("open_with_reason") and not (reason and reason.strip()):
        raise ValueError(f"format {fmt} needs a reason")
    if reason is not None and reason.strip():
        sentence = _one_line(reason)
        if _INLINE_BECAUSE.search(sentence):
            raise ValueError("a reason must not itself contain 'Because:'")
        body += f"\nBecause: {sentence}"
    return body


def parse_reply(fmt: str, reply, *, n_options: int = 4) -> Parsed:
    """Parse ``reply`` with the parser of ``fmt`` (the inverse of :func:`render_reply`).

    ``open`` formats return :func:`answer_text` (match it to options with :func:`match_open`); the reason of
    the ``open_with_reason_*`` formats is read with :func:`reason_text` and never changes this verdict.
    """
    if fmt == "yes_no":
        return parse_yes_no(reply)
    if fmt == "multiple_choice":
        return parse_letter(reply, n_options=n_options)
    if fmt == "official_mcq":
        return letter_as_written(reply, n_options=n_options)
    if fmt == "statements":
        return parse_letter_set(reply, n_options=n_options)
    if fmt in ("open", "open_with_reason_open"):
        return answer_text(reply)
    if fmt in ("option_judgement", "open_with_reason_judgement"):
        return parse_option_judgements(reply, n_options=n_options)
    raise ValueError(f"unknown format {fmt!r}; expected one of {FORMATS}")


def machine_form(value) -> str:
    """A parsed value in the ``expected`` column's machine form (:mod:`epic_levels_pipeline.formats`):
    ``"yes"``, ``"B"``, a letter set as sorted ``"A,C"``, judgements as ``"true,false,false,true"``, a count
    as digits, open text unchanged."""
    if isinstance(value, (frozenset, set)):
        return ",".join(sorted(value))
    if isinstance(value, tuple):
        return ",".join("true" if v else "false" for v in value)
    return str(value)
