"""What each kind of candidate value means for a clip: its option text, presence, synonyms, rows, names. One
class per kind (:data:`KINDS`); adding a kind is one class and its line there."""

from __future__ import annotations

import random
import re

from ..annotations.catalogue import Catalogue, action_text, object_class
from ..annotations.language import action_phrase, capitalise, cue_phrase, first_sentence, noun_display
from ..annotations.values import CandidateValue
from .clip_view import ClipView


class Kind:
    """The defaults: no rendering, presence unknown, no extra synonyms, no rows, no names."""

    name = ""

    def render(self, view: "ClipView", value: CandidateValue) -> str:
        raise ValueError(f"unknown candidate kind in {str(value)!r}")

    def present(self, view: "ClipView", value: CandidateValue) -> bool | None:
        return None

    def synonyms(self, cat: Catalogue, view: "ClipView", value: CandidateValue, text: str) -> list[str]:
        return [text]

    def rows(self, view: "ClipView", value: CandidateValue) -> list[str]:
        return []

    def names_in_clip(self, view: "ClipView") -> list[str]:
        return []

    def random_name(self, cat: Catalogue, rng: random.Random) -> str | None:
        return None


class Sound(Kind):
    name = "sound"

    def render(self, view, value):
        return capitalise(cue_phrase(value.payload))

    def present(self, view, value):
        return value.payload in view.present_sound_classes

    def synonyms(self, cat, view, value, text):
        return [text, cue_phrase(value.payload), value.payload]

    def rows(self, view, value):
        return [f"sound:{r}" for r in view.sound_rows.get(value.payload, [])]

    def names_in_clip(self, view):
        return sorted(capitalise(cue_phrase(c)) for c in view.present_sound_classes)

    def random_name(self, cat, rng):
        return capitalise(cue_phrase(rng.choice(cat.sound_classes)))


class Noun(Kind):
    name = "noun"

    def render(self, view, value):
        cat, n = view.catalogue, value.noun_class
        own = view.first_noun_of.get(n)
        if own is not None:  # the clip's own narrators' word ("cabinet"), not the class key ("cupboard")
            return noun_display(own)
        entry = cat.nouns.get(n)
        return entry["name"] if entry else noun_display(cat.noun_keys.get(n, value.payload))

    def present(self, view, value):
        return value.noun_class in view.present_noun_classes

    def synonyms(self, cat, view, value, text):
        names = [text]
        key = cat.noun_keys.get(value.noun_class)
        if key:  # the clip's dataset's own variants of the class (HD-EPIC's lists are longer), else EPIC-KITCHENS-100's
            own = cat.noun_instances(key, "hd_epic") if view.clip.dataset == "hd_epic" else []
            names += [key] + [i for i in (own or cat.noun_instances(key)) if len(i) > 2]
        names += [str(n) for n in view.narrations.loc[view.narrations["noun_class"] == value.noun_class, "noun"]]
        return names

    def rows(self, view, value):
        return [f"narration:{r}" for r in view.noun_rows.get(value.noun_class, [])]

    def names_in_clip(self, view):
        return sorted({self.render(view, CandidateValue("noun", str(int(c))))
                       for c in view.narrations["noun_class"].dropna()})

    def random_name(self, cat, rng):
        return rng.choice(list(cat.nouns.values()))["name"] if cat.nouns else None


class Action(Kind):
    """``action``: what is done (gerund, "cutting the onion"); ``purpose`` is the same pair as an aim."""

    name = "action"
    form = "gerund"

    def render(self, view, value):
        v, n = value.pair
        own = view.first_narration_of.get((v, n))
        if own is not None:  # (the phrase depends on the narration alone: kept with the catalogue, made once)
            nouns = tuple(own.all_nouns)
            phrases = view.catalogue.derived("action_phrases", lambda cat: {})
            key = (own.narration, nouns, self.form, own.verb)
            phrase = phrases.get(key)
            if phrase is None:
                phrase = phrases[key] = action_phrase(own.narration, list(nouns), self.form, own.verb)
            return phrase
        texts = view.catalogue.derived("action_texts", lambda cat: {})
        key = (v, n, self.form)
        if key not in texts:
            texts[key] = action_text(view.catalogue, (v, n), self.form)
        return texts[key]

    def present(self, view, value):
        return value.pair in view.present_actions

    def synonyms(self, cat, view, value, text):
        own = view.first_narration_of.get(value.pair)
        narration = own.narration if own is not None else cat.actions.get(value.pair, {}).get("narration", "")
        bare = re.sub(r"\b(the|a|an)\s+", "", text)
        return [text, bare, narration]

    def rows(self, view, value):
        return [f"narration:{r}" for r in view.action_rows.get(value.pair, [])]

    def names_in_clip(self, view):
        return sorted({self.render(view, CandidateValue(self.name, f"{v}:{n}")) for v, n in view.present_actions})

    def random_name(self, cat, rng):
        return rng.choice(list(cat.actions.values()))["narration"] if cat.actions else None


class Purpose(Action):
    name = "purpose"
    form = "infinitive"

    def synonyms(self, cat, view, value, text):
        names = super().synonyms(cat, view, value, text)
        bare = names[1]
        return names + [f"to {text}", f"to {bare}"]


class Object(Kind):
    name = "object"

    def render(self, view, value):
        return value.payload

    def present(self, view, value):
        return value.payload in view.present_objects

    def synonyms(self, cat, view, value, text):
        return [text, value.payload, object_class(cat, value.payload)]

    def rows(self, view, value):
        return [f"object_track:{r}" for r in view.object_rows.get(value.payload, [])]

    def names_in_clip(self, view):
        return sorted(view.present_objects)

    def random_name(self, cat, rng):
        return rng.choice(list(cat.objects)) if cat.objects else None


class Activity(Kind):
    name = "activity"

    def render(self, view, value):
        return value.payload

    def present(self, view, value):
        return not view.present_objects.isdisjoint(view.catalogue.activities.get(value.payload, {}).get("objects", []))

    def names_in_clip(self, view):
        return sorted(set(view.activities["label"]))

    def random_name(self, cat, rng):
        return rng.choice(list(cat.activities)) if cat.activities else None


class Step(Kind):
    name = "step"

    def render(self, view, value):
        label = view.step_labels.get(value.payload)
        return first_sentence(label) if label is not None else value.payload

    def present(self, view, value):
        return value.payload in view.steps_in_window


class Count(Kind):
    """A number: its text is the number, and it is its only name (presence cannot tell)."""

    name = "count"

    def render(self, view, value):
        return value.payload

    def synonyms(self, cat, view, value, text):
        return [value.payload]

    def random_name(self, cat, rng):
        return str(rng.randrange(0, 21))


KINDS: dict[str, Kind] = {k.name: k for k in (Sound(), Noun(), Action(), Purpose(), Object(), Activity(), Step(),
                                              Count())}
_UNKNOWN = Kind()


def kind_of(name: str) -> Kind:
    """The behaviour of kind ``name`` (the defaults for an unknown kind)."""
    return KINDS.get(name, _UNKNOWN)


def _parsed(value) -> CandidateValue:
    return value if isinstance(value, CandidateValue) else CandidateValue.parse(value)


def render(view: "ClipView", value) -> str:
    """The option text a person reads for a candidate value (worked out once per value and view)."""
    memo = getattr(view, "render_memo", None)
    key = str(value)
    text = None if memo is None else memo.get(key)
    if text is None:
        v = _parsed(value)
        text = kind_of(v.kind).render(view, v)
        if memo is not None:
            memo[key] = text
    return text


def present(view: "ClipView", value) -> bool | None:
    """Does the entity occur anywhere in the window? None when presence cannot tell (numbers)."""
    v = _parsed(value)
    return kind_of(v.kind).present(view, v)


def synonyms(cat: Catalogue, view: "ClipView", value, text: str) -> list[str]:
    """The option text, then the other names of the value, without repeats (case-insensitive)."""
    v = _parsed(value)
    seen, out = set(), []
    for n in kind_of(v.kind).synonyms(cat, view, v, text):
        n = str(n).strip()
        if n and n.lower() not in seen:
            seen.add(n.lower())
            out.append(n)
    return out


def rows_where(view: "ClipView", value) -> list[str]:
    """The rows (``stream:row_id``) where the value occurs in the clip."""
    v = _parsed(value)
    return kind_of(v.kind).rows(view, v)


def names_in_clip(view: "ClipView", kind: str) -> list[str]:
    """Names of entities of ``kind`` that occur in the clip, sorted."""
    return kind_of(kind).names_in_clip(view)


def random_name(cat: Catalogue, kind: str, rng: random.Random) -> str:
    """A random name of ``kind`` from the whole catalogue; "something" when the catalogue has none."""
    name = kind_of(kind).random_name(cat, rng)
    return "something" if name is None else name
