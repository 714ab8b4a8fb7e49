"""Turning annotation labels into text a person reads: sound cue phrases (a fixed table of every EPIC-SOUNDS class;
a missing class is an error, never a raw label), noun keys read as ``modifier head``, actions as gerunds or
infinitives, object names without instance suffixes."""

from __future__ import annotations

import re

# Option letters, in order: options, statements and judge candidates are lettered A, B, C, ... everywhere.
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

SOUND_CUES: dict[str, str] = {
    "metal-only collision": "metal objects clanging together",
    "cut / chop": "chopping",
    "rustle": "rustling",
    "scrub / scrape / scour / wipe": "scrubbing or scraping",
    "water": "running or splashing water",
    "open / close": "something being opened or closed",
    "metal / ceramic collision": "metal hitting ceramic",
    "stir / mix / whisk": "stirring or whisking",
    "footstep": "footsteps",
    "plastic-only collision": "two plastic objects knocking together",
    "slide object": "an object sliding across a surface",
    "metal / plastic collision": "metal hitting plastic",
    "metal / wood collision": "metal hitting wood",
    "pour": "pouring",
    "ceramic-only collision": "two ceramic objects knocking together",
    "beep": "a beep",
    "metal / glass collision": "metal hitting glass",
    "click": "a click",
    "metal / paper collision": "metal hitting paper",
    "glass-only collision": "two glass objects knocking together",
    "human": "a human voice or breath",
    "background": "background noise",
    "plastic / paper collision": "plastic hitting paper",
    "kneading": "dough being kneaded",
    "metal / marble collision": "metal hitting marble",
    "paper-only collision": "two paper objects knocking together",
    "plastic / ceramic collision": "plastic hitting ceramic",
    "ceramic / glass collision": "ceramic hitting glass",
    "sizzling / boiling": "sizzling or boiling",
    "plastic / marble collision": "plastic hitting marble",
    "plastic / wood collision": "plastic hitting wood",
    "metal / cloth collision": "metal hitting cloth",
    "ceramic / marble collision": "ceramic hitting marble",
    "ceramic / wood collision": "ceramic hitting wood",
    "wood-only collision": "two wooden objects knocking together",
    "wood / glass collision": "wood hitting glass",
    "plastic / glass collision": "plastic hitting glass",
    "glass / marble collision": "glass hitting marble",
    "hoover / fan": "a vacuum cleaner or fan",
    "cloth-only collision": "cloth rubbing against cloth",
    "kettle / mixer / appliance": "a kettle, mixer or other appliance running",
    "spray": "spraying",
    "drink / eat": "drinking or eating",
    "zip": "a zip being opened or closed",
}


def cue_phrase(sound_class: str) -> str:
    try:
        return SOUND_CUES[sound_class]
    except KeyError:
        raise KeyError(f"sound class {sound_class!r} has no cue phrase in language.SOUND_CUES") from None


def capitalise(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def noun_display(key: str) -> str:
    """``bottle:wine`` → ``wine bottle``; ``bowl:washing:up`` → ``washing up bowl``; ``plate`` → ``plate``."""
    parts = [p.strip() for p in str(key).replace("_", " ").split(":") if p.strip()]
    if not parts:
        return str(key)
    return " ".join(parts[1:] + parts[:1])


_DOUBLE = re.compile(r"^[^aeiou]*[aeiou][^aeiouwxy]$")
_IRREGULAR = {"be": "being", "see": "seeing", "tie": "tying", "lie": "lying", "die": "dying", "flee": "fleeing",
              "free": "freeing", "agree": "agreeing", "open": "opening", "empty": "emptying"}


def gerund(verb: str) -> str:
    """``wash`` → ``washing``; ``take`` → ``taking``; ``cut`` → ``cutting``; ``stir`` → ``stirring``."""
    v = verb.lower()
    if v in _IRREGULAR:
        return _IRREGULAR[v]
    if v.endswith("ie"):
        return v[:-2] + "ying"
    if v.endswith("e") and not v.endswith(("ee", "ye", "oe")) and len(v) > 2:
        return v[:-1] + "ing"
    if _DOUBLE.match(v):
        return v + v[-1] + "ing"
    return v + "ing"


_DETERMINERS = {"the", "a", "an", "some", "my", "his", "her", "their", "this", "that", "these", "those", "of",
                "its", "another", "other", "each", "every", "all", "both", "one", "two", "more"}


def _noun_words(nouns: list[str]) -> set[str]:
    words: set[str] = set()
    for noun in nouns:
        for part in re.split(r"[:\s]+", str(noun).lower()):
            if part:
                words.add(part)
    return words


def _is_noun_word(token: str, words: set[str]) -> bool:
    t = token.lower()
    return t in words or t.rstrip("s") in words or (t.endswith("es") and t[:-2] in words) or (
        t.endswith("ies") and t[:-3] + "y" in words)


def with_articles(words_in: list[str], nouns: list[str]) -> list[str]:
    words = _noun_words(nouns)
    out: list[str] = []
    prev_noun = False
    for i, token in enumerate(words_in):
        is_noun = i > 0 and _is_noun_word(token, words)
        if is_noun and not prev_noun and out and out[-1].lower() not in _DETERMINERS:
            out.append("the")
        out.append(token)
        prev_noun = is_noun
    return out


def action_phrase(narration: str, nouns: list[str], form: str = "gerund", verb: str | None = None) -> str:
    """A narration as an action a person reads: gerund (``washing the blueberries``) or infinitive.

    Some narrations already start with a gerund ("stuffing tortillas with cheese", verb ``stuff``): when the
    narration's verb lemma is known and the first word is not it but an ``-ing`` form, the gerund is kept
    for the gerund form and replaced by the lemma for the infinitive ("stuff the tortillas …")."""
    tokens = str(narration).strip().split()
    if not tokens:
        return ""
    tokens = with_articles(tokens, nouns)
    lemma = str(verb).split("-")[0].lower() if verb else None
    already_gerund = bool(lemma) and tokens[0].lower() != lemma and tokens[0].lower().endswith("ing")
    if form == "gerund":
        if not already_gerund:
            tokens[0] = gerund(tokens[0])
    elif already_gerund:
        tokens[0] = lemma
    return " ".join(tokens)


def first_sentence(text: str, limit: int = 110) -> str:
    """A recipe step's first sentence, shortened at a word boundary to ``limit`` characters."""
    text = " ".join(str(text).split())
    m = re.match(r"^(.+?[.!?])(\s|$)", text)
    sentence = m.group(1) if m else text
    if len(sentence) > limit:
        sentence = sentence[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " …"
    return sentence.rstrip(".")


def seconds_phrase(seconds: float) -> str:
    n = int(round(seconds))
    return "1 second" if n == 1 else f"{n} seconds"
