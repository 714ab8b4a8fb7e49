"""Label agreement on aligned pairs: ``agree``, ``disagree`` or ``undecided`` by rules per unit kind (same text,
the class or its cue phrase, verb and noun class instances), a judge only for undecided pairs. Undecided pairs
count as not agreeing and are counted, never dropped (docs/design/captions.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from .sources import SOUND_CUES, Catalogue, object_class
from .structure import Unit

Judge = Callable[[str, str, str], "bool | None"]
_ARTICLES = {"the", "a", "an", "some", "of"}
_CONSONANTS = set("bcdfghjklmnpqrstvwxz")


def normalise(text) -> str:
    words = re.sub(r"[^a-z0-9 ]+", " ", str(text or "").lower().replace(":", " ")).split()
    return " ".join(w for w in words if w not in _ARTICLES)


def stem(word: str) -> str:
    """A light stemmer, the same on both sides of a comparison: ``chopping`` → ``chop``, ``berries`` →
    ``berry``, ``dishes`` → ``dish``, ``opened`` → ``open``."""
    w = word
    if w.endswith("ing") and len(w) > 5:
        w = w[:-3]
    elif w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    elif w.endswith("es") and w[:-2].endswith(("s", "x", "ch", "sh")):
        return w[:-2]
    elif w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        return w[:-1]
    elif w.endswith("ed") and len(w) > 4:
        w = w[:-2]
    else:
        return w
    if len(w) > 2 and w[-1] == w[-2] and w[-1] in _CONSONANTS:
        w = w[:-1]
    return w


def stems(text) -> str:
    return " ".join(stem(w) for w in normalise(text).split())


def _contains(term: str, text: str) -> bool:
    return bool(term) and f" {term} " in f" {text} "


def _instance_forms(instance: str) -> set[str]:
    """``bottle:wine`` → ``bottle wine``, ``wine bottle``; ``pick-up`` → ``pick up``."""
    raw = str(instance).lower().replace("-", " ")
    parts = [p for p in raw.split(":") if p.strip()]
    forms = {stems(" ".join(parts))}
    if len(parts) > 1:
        forms.add(stems(" ".join(parts[1:] + parts[:1])))
    return {f for f in forms if f}


@dataclass
class LabelRules:
    catalogue: Catalogue
    sound_terms: dict[str, set[str]] = field(default_factory=dict)
    verbs: dict[str, set[str]] = field(default_factory=dict)      # stemmed form -> epic_100 verb keys
    nouns: dict[str, set[str]] = field(default_factory=dict)      # stemmed form -> epic_100 noun keys
    hd_classes: set[str] = field(default_factory=set)

    @classmethod
    def build(cls, cat: Catalogue) -> "LabelRules":
        r = cls(cat)
        for c, cue in SOUND_CUES.items():
            terms = {stems(c), stems(cue)}
            if "collision" not in c:
                terms |= {stems(p) for p in c.split("/")}
            r.sound_terms[c] = {t for t in terms if t}
        for key, inst in cat.verb_synonyms.get("epic_100", {}).items():
            for form in _instance_forms(key) | {f for i in inst for f in _instance_forms(i)}:
                r.verbs.setdefault(form, set()).add(key)
        for key, inst in cat.noun_synonyms.get("epic_100", {}).items():
            for form in _instance_forms(key) | {f for i in inst for f in _instance_forms(i)}:
                r.nouns.setdefault(form, set()).add(key)
        r.hd_classes = set(cat.object_classes.values())
        return r

    # --- per kind ---------------------------------------------------------------------------------
    def event(self, ref: Unit, resp: Unit) -> str:
        text = stems(resp.label)
        if not text:
            return "undecided"
        if text == stems(ref.label):
            return "agree"
        if ref.sound_class is None:
            parts = {stems(p) for p in str(ref.description or "").split("/")}
            return "agree" if any(_contains(p, text) for p in parts) else "undecided"
        if any(_contains(t, text) for t in self.sound_terms.get(ref.sound_class, {stems(ref.sound_class)})):
            return "agree"
        named = [c for c, terms in self.sound_terms.items() if any(_contains(t, text) for t in terms)]
        return "disagree" if named else "undecided"

    def _word_class(self, index: dict[str, set[str]], word) -> set[str]:
        text = stems(word)
        if not text:
            return set()
        return index.get(text) or index.get(text.replace(" ", "")) or set()

    def _epic_noun(self, ref_class: int | None, resp_noun) -> bool | None:
        key = self.catalogue.noun_keys.get(ref_class) if ref_class is not None else None
        found = self._word_class(self.nouns, resp_noun)
        if key is None or not found:
            return None
        return key in found

    def _hd_noun(self, ref_name, resp_noun) -> bool | None:
        if not normalise(resp_noun):
            return None
        if stems(ref_name) == stems(resp_noun):
            return True
        a, b = object_class(self.catalogue, ref_name), object_class(self.catalogue, normalise(resp_noun))
        if a == b:
            return True
        return False if b in self.hd_classes else None

    def action(self, ref: Unit, resp: Unit, dataset: str) -> str:
        if normalise(ref.label) and normalise(ref.label) == normalise(resp.label):
            return "agree"
        if dataset == "hd_epic":
            return _verdict([self._hd_noun(ref.object_name, resp.noun or resp.label)])
        if ref.verb_class is None:
            return "undecided"
        verb_key = self.catalogue.verb_keys.get(ref.verb_class)
        verb_text = resp.verb or (normalise(resp.description).split() or [""])[0]
        found = self._word_class(self.verbs, verb_text)
        verb_ok = None if not found or verb_key is None else verb_key in found
        return _verdict([verb_ok, self._epic_noun(ref.noun_class, resp.noun)])

    def reference(self, ref: Unit, resp: Unit, dataset: str) -> str:
        if normalise(ref.label) and normalise(ref.label) == normalise(resp.label):
            return "agree"
        if dataset == "hd_epic":
            return _verdict([self._hd_noun(ref.object_name, resp.label)])
        return _verdict([self._epic_noun(ref.noun_class, resp.label)])

    def verdict(self, kind: str, ref: Unit, resp: Unit, dataset: str, judge: Judge | None = None) -> tuple[str, str]:
        """``(verdict, by)`` with ``by`` in ``rule`` / ``judge``."""
        v = self.event(ref, resp) if kind == "event" else (self.action(ref, resp, dataset) if kind == "action"
                                                             else self.reference(ref, resp, dataset))
        if v != "undecided" or judge is None:
            return v, "rule"
        answer = judge(kind, ref.label, resp.label)
        if answer is None:
            return "undecided", "judge"
        return ("agree" if answer else "disagree"), "judge"


def _verdict(parts: list[bool | None]) -> str:
    if any(p is False for p in parts):
        return "disagree"
    if all(p is True for p in parts):
        return "agree"
    return "undecided"


_RULES: dict[int, LabelRules] = {}


def rules_for(cat: Catalogue) -> LabelRules:
    """The rules of a catalogue, built once per catalogue object."""
    r = _RULES.get(id(cat))
    if r is None or r.catalogue is not cat:
        r = _RULES[id(cat)] = LabelRules.build(cat)
    return r
