"""Judges for the local OpenAI-compatible server (:class:`.openai_server.OpenAITestServer`): reply functions that read
the project's three judge prompts and answer in character, so several judges can disagree in known ways.

- QA judge (``Answer given: …`` / ``Candidates:``): ``reader`` picks the candidate the answer names (the same
  words, else the candidate sharing the most words; none when nothing is shared); ``first`` always picks ``A``
  (a positional judge); ``doubter`` says ``none`` to everything.
- caption label judge (``Do these two descriptions name the same …``): ``reader`` agrees when the two share a
  word; ``first`` always agrees; ``doubter`` always says it cannot tell.
- caption semantic judge (``First: …`` / ``Second: …`` and the 1–5 scale): ``reader`` scores by shared words
  (E = 5 when every word of the side asked about is in the other, A = 1 when none is, C = 3 between);
  ``first`` always answers ``E``; ``doubter`` ``none``.

Anything else gets the server's default reply. Use ``judge_reply(kind)`` as the server's ``reply_fn``; a judge
that times out is the same server with ``latency_s`` above the model's ``timeout_s``.
"""

from __future__ import annotations

import json
import re

try:
    from .openai_server import default_reply, prompt_text
except ImportError:  # imported by module name
    from openai_server import default_reply, prompt_text

KINDS = ("reader", "first", "doubter")
_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in {"the", "a", "an", "of"}}


def _choice(letter: str | None) -> str:
    return json.dumps({"choice": letter or "none"})


def _line(text: str, head: str) -> str:
    m = re.search(rf"^{re.escape(head)}\s*(.*)$", text, re.M)
    return m.group(1).strip() if m else ""


def _qa(kind: str, text: str) -> str:
    if kind == "first":
        return _choice("A")
    if kind == "doubter":
        return _choice(None)
    answer = _words(_line(text, "Answer given:"))
    candidates = re.findall(r"^([A-Z])\. (.*)$", text.split("Candidates:", 1)[1], re.M)
    best = max(candidates, key=lambda c: len(answer & _words(c[1])), default=None)
    return _choice(best[0] if best and answer & _words(best[1]) else None)


def _label(kind: str, text: str) -> str:
    if kind == "doubter":
        return _choice(None)
    if kind == "first":
        return _choice("A")
    shared = _words(_line(text, "First:")) & _words(_line(text, "Second:"))
    return _choice("A" if shared else "B")


def _semantic(kind: str, text: str) -> str:
    if kind == "doubter":
        return _choice(None)
    if kind == "first":
        return _choice("E")
    first, second = _words(_line(text, "First:")), _words(_line(text, "Second:"))
    asked, other = (first, second) if "FIRST description states does the SECOND" in text else (second, first)
    covered = len(asked & other) / len(asked) if asked else 0.0
    return _choice("E" if covered == 1 else "A" if covered == 0 else "C")


def judge_reply(kind: str):
    """A ``reply_fn`` answering the project's judge prompts as judge ``kind`` (:data:`KINDS`)."""
    if kind not in KINDS:
        raise ValueError(f"judge kind must be one of {KINDS}")

    def reply(body: dict) -> str:
        text = prompt_text(body)
        if "Answer given:" in text and "Candidates:" in text:
            return _qa(kind, text)
        if "Do these two descriptions name the same" in text:
            return _label(kind, text)
        if "Scale: A = 1" in text:
            return _semantic(kind, text)
        return default_reply(body)

    return reply
