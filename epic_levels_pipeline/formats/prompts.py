"""The prompt templates of the formats: each states its output form (the reply a parser reads)."""

from __future__ import annotations

from ..annotations.language import LETTERS
from ..bank.subtypes import OPEN_FORMATS

REASON_LINE = "Because: <one sentence on what you saw or heard that supports your answer>"
# What HD-EPIC's authors' instruction says, in our words: a letter only, always an answer.
OFFICIAL_INSTRUCTION = ("Answer the multiple-choice question about the video with the letter of the correct answer "
                        "only, for example A or B. Give no other text, and answer even if you are not sure.")


def options_block(options: list[str]) -> str:
    return "\n".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(options))


def yes_no_prompt(statement: str) -> str:
    return (f"Statement: {statement}\n\nIs this statement true for the clip?\n"
            "Reply in exactly this format:\nAnswer: <yes/no>")


def multiple_choice_prompt(question: str, options: list[str]) -> str:
    return (f"{question}\n{options_block(options)}\n\nReply with the letter of the correct option, in exactly this format:\n"
            "Answer: <letter>")


def official_mcq_prompt(question: str, options: list[str]) -> str:
    """The question as HD-EPIC's evaluation asks it: ``Question: <q>. Answers: (A) <choice>. (B) … Correct:``
    after the instruction (their system prompt, which the providers here take as the prompt's first lines)."""
    answers = " ".join(f"({LETTERS[i]}) {o}." for i, o in enumerate(options))
    return f"{OFFICIAL_INSTRUCTION}\n\nQuestion: {question}. Answers: {answers} Correct:"


def statements_prompt(statements: list[str]) -> str:
    return ("Which of these statements are true for the clip? Several may be true; select every true one.\n"
            f"{options_block(statements)}\n\nReply in exactly this format, listing the letters of all true statements:\n"
            "Answer: <letters separated by commas>")


def open_prompt(question: str, answer_type: str, reason: bool = False) -> str:
    tail = f"\n{REASON_LINE}" if reason else ""
    return f"{question} {OPEN_FORMATS[answer_type]}\n\nReply in exactly this format:\nAnswer: <your answer>{tail}"


def option_judgement_prompt(question: str, options: list[str], reason: bool = False) -> str:
    lines = "\n".join(f"{LETTERS[i]}: <true/false>" for i in range(len(options)))
    tail = f"\n{REASON_LINE}" if reason else ""
    return (f"{question}\n{options_block(options)}\n\nJudge each option on its own: is it true for the clip? "
            f"Reply in exactly this format, one line per option:\n{lines}{tail}")
