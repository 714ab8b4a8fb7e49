"""Offline caption responders (``oracle``, ``jitter_<σ>s``, ``corrupted``, ``presence``, ``blind``, ``chance``): the
track runs with no model key, and they bound what the scores mean. Each returns the JSON text a model would send,
seeded by (seed, responder, clip, condition) (docs/design/captions.md)."""

from __future__ import annotations

import hashlib
import random
from dataclasses import replace

from .parse import render_caption
from .sources import Catalogue, Clip
from .structure import Structure, Unit, overlap_s

JITTER_SIGMAS = (0.25, 0.5, 1.0, 2.0, 4.0)
OFFLINE_RESPONDERS = ("oracle", *(f"jitter_{s:g}s" for s in JITTER_SIGMAS), "corrupted", "presence", "blind", "chance")
CORRUPT_LABEL = "something else"  # a kind with one label has no other to swap in
BLIND_UNITS = 6


def _rng(*parts) -> random.Random:
    return random.Random(int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:16], 16))


def perceived(ref: Structure, condition: str) -> Structure:
    """What a perceiving responder sees of the reference under ``condition``."""
    if condition == "no_clip":
        return Structure(ref.dataset, ref.duration_s)
    if condition == "silenced":
        return Structure(ref.dataset, ref.duration_s, [], list(ref.actions), list(ref.references),
                         ref.links_of(("action", "reference")))
    return ref


def _span(rng: random.Random, duration: float, length: float) -> tuple[float, float]:
    length = min(max(length, 0.2), duration)
    start = rng.uniform(0, duration - length)
    return round(start, 3), round(start + length, 3)


def oracle(ref: Structure, condition: str, **_) -> str:
    return render_caption(perceived(ref, condition))


def jitter(ref: Structure, condition: str, *, sigma: float, clip_key: str, seed: int = 0) -> str:
    s = perceived(ref, condition)
    rng = _rng(seed, "jitter", clip_key, condition)   # independent of sigma: common random numbers
    d = s.duration_s

    def move(u: Unit) -> Unit:
        a, b = u.start_s + sigma * rng.gauss(0, 1), u.stop_s + sigma * rng.gauss(0, 1)
        a, b = sorted((min(max(a, 0.0), d), min(max(b, 0.0), d)))
        return replace(u, start_s=round(a, 3), stop_s=round(b, 3))

    return render_caption(Structure(s.dataset, d, [move(u) for u in s.events], [move(u) for u in s.actions],
                                    list(s.references), list(s.links)))


def presence(ref: Structure, condition: str, *, clip_key: str, seed: int = 0) -> str:
    s = perceived(ref, condition)
    rng = _rng(seed, "presence", clip_key, condition)

    def place(u: Unit) -> Unit:
        a, b = _span(rng, s.duration_s, u.length_s)
        return replace(u, start_s=a, stop_s=b)

    return render_caption(Structure(s.dataset, s.duration_s, [place(u) for u in s.events],
                                    [place(u) for u in s.actions], list(s.references), list(s.links)))


def corrupted(ref: Structure, condition: str, **_) -> str:
    s = perceived(ref, condition)

    def swap(units: list[Unit]) -> list[Unit]:
        out = []
        for i, u in enumerate(units):
            other = next((v for v in units[i + 1:] + units[:i] if v.label != u.label), None)
            if other is None:
                out.append(replace(u, label=CORRUPT_LABEL, verb="do", noun=CORRUPT_LABEL))
            else:
                out.append(replace(u, label=other.label, verb=other.verb, noun=other.noun))
        return out

    return render_caption(Structure(s.dataset, s.duration_s, swap(s.events), swap(s.actions), swap(s.references),
                                    list(s.links)))


def _most_common(cat: Catalogue, kind: str) -> str | None:
    best = [(n, v) for v, n in cat.frequency.items() if v.startswith(kind + ":")]
    return max(best)[1].split(":", 1)[1] if best else None


def _action(verb: str, noun: str, uid: str, span) -> Unit:
    return Unit("action", uid, *span, label=f"{verb} the {noun}", verb=verb, noun=noun)


def blind(ref: Structure, condition: str, *, cat: Catalogue, clip_key: str, seed: int = 0) -> str:
    rng = _rng(seed, "blind", clip_key, condition)
    d, s = ref.duration_s, Structure(ref.dataset, ref.duration_s)
    if ref.dataset == "hd_epic":
        noun, verb = _most_common(cat, "object") or "spoon", "move"
    else:
        sound = _most_common(cat, "sound")
        pair = _most_common(cat, "action")
        v, n = (int(x) for x in pair.split(":")) if pair else (0, 0)
        verb, noun = cat.verb_keys.get(v, "take"), cat.nouns.get(n, {}).get("name", "plate")
        s.events = [Unit("event", f"E{i}", *_span(rng, d, d / 20), label=sound or "water") for i in range(1, BLIND_UNITS + 1)]
    s.actions = [_action(verb, noun, f"A{i}", _span(rng, d, d / 10)) for i in range(1, BLIND_UNITS + 1)]
    s.references = [Unit("reference", "R1", label=noun)]
    s.links = [(a.id, "R1") for a in s.actions] + [(e.id, a.id) for e in s.events for a in s.actions if overlap_s(e, a) > 0]
    return render_caption(s)


def chance(ref: Structure, condition: str, *, cat: Catalogue, clip_key: str, seed: int = 0) -> str:
    rng = _rng(seed, "chance", clip_key, condition)
    d, s = ref.duration_s, Structure(ref.dataset, ref.duration_s)
    if ref.dataset == "hd_epic":
        objects = sorted(cat.objects) or ["spoon"]
        nouns = [rng.choice(objects) for _ in range(rng.randint(1, 8))]
        s.actions = [_action("move", n, f"A{i}", _span(rng, d, rng.uniform(0.5, d / 3))) for i, n in enumerate(nouns, 1)]
    else:
        classes = cat.sound_classes or ["water"]
        s.events = [Unit("event", f"E{i}", *_span(rng, d, rng.uniform(0.2, d / 5)), label=rng.choice(classes))
                    for i in range(1, rng.randint(1, 8) + 1)]
        pairs = sorted(cat.actions) or [(0, 0)]
        s.actions = []
        for i in range(1, rng.randint(1, 8) + 1):
            v, n = rng.choice(pairs)
            s.actions.append(_action(cat.verb_keys.get(v, "take"), cat.nouns.get(n, {}).get("name", "plate"),
                                     f"A{i}", _span(rng, d, rng.uniform(0.5, d / 5))))
    names = list(dict.fromkeys(a.noun for a in s.actions))
    s.references = [Unit("reference", f"R{i}", label=n) for i, n in enumerate(names, 1)]
    rid = {n: f"R{i}" for i, n in enumerate(names, 1)}
    s.links = [(a.id, rid[a.noun]) for a in s.actions]
    s.links += [(e.id, rng.choice(s.actions).id) for e in s.events if s.actions and rng.random() < 0.5]
    return render_caption(s)


def offline_reply(name: str, ref: Structure, condition: str, *, cat: Catalogue, clip: Clip, seed: int = 0) -> str:
    """The reply of offline responder ``name`` to ``clip``'s caption prompt under ``condition``."""
    if name == "oracle":
        return oracle(ref, condition)
    if name.startswith("jitter_") and name.endswith("s"):
        return jitter(ref, condition, sigma=float(name[len("jitter_"):-1]), clip_key=clip.key, seed=seed)
    if name == "corrupted":
        return corrupted(ref, condition)
    if name == "presence":
        return presence(ref, condition, clip_key=clip.key, seed=seed)
    if name == "blind":
        return blind(ref, condition, cat=cat, clip_key=clip.key, seed=seed)
    if name == "chance":
        return chance(ref, condition, cat=cat, clip_key=clip.key, seed=seed)
    raise ValueError(f"unknown caption responder {name!r}; known: {', '.join(OFFLINE_RESPONDERS)} "
                     "(jitter takes any σ: jitter_<seconds>s)")
