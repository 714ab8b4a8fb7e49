"""Alignment and metrics of one response against its clip's reference: events and actions matched by tIoU with a
label verdict each, references aligned through co-linked actions; P / R / F1 per unit kind, label, EVSA links,
``ccc`` and structural error rates. Not applicable is NaN; an unparsed reply scores 0 (docs/design/captions.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .labels import Judge, LabelRules
from .match import ACTION_TIOU, EVENT_TIOU, MATCHERS, tiou_matrix
from .parse import CHECKS, Parsed
from .semantic import SEMANTIC_COUNTS, SEMANTIC_METRICS, SemanticJudge, score_pairs
from .structure import Structure, Unit, id_order

UNIT_CHECKS = ("missing_fields", "duplicate_ids", "times_out_of_range", "empty_spans")
LINK_CHECKS = ("dangling_links", "invalid_reference_use", "links_without_overlap")
PRF_FAMILIES = ("event", "event_label", "action", "action_label", "reference", "reference_label",
                "reference_name", "evsa")
METRICS = [f"{f}_{m}" for f in PRF_FAMILIES for m in ("p", "r", "f1")] + \
          ["ccc", "parse_failure"] + [f"rate_{c}" for c in CHECKS]


@dataclass(frozen=True)
class Thresholds:
    event: float = EVENT_TIOU
    action: float = ACTION_TIOU


@dataclass
class Pair:
    unit: str
    ref: Unit | None
    resp: Unit | None
    tiou: float | None = None
    verdict: str | None = None
    by: str | None = None
    precision: float | None = None  # the semantic layer's 1-5 scores of an aligned pair (None: not scored)
    recall: float | None = None


@dataclass
class Result:
    metrics: dict[str, float]
    counts: dict[str, int]
    pairs: list[Pair] = field(default_factory=list)


def _prf(tp: int, n_ref: int, n_resp: int) -> tuple[float, float, float]:
    nan = math.nan
    p = tp / n_resp if n_resp else nan
    r = tp / n_ref if n_ref else nan
    f1 = 2 * tp / (n_ref + n_resp) if (n_ref + n_resp) else nan
    return p, r, f1


def _put(metrics: dict, family: str, values: tuple[float, float, float]) -> None:
    for m, v in zip(("p", "r", "f1"), values):
        metrics[f"{family}_{m}"] = v


def score_response(ref: Structure, parsed: Parsed, rules: LabelRules, *, matcher: str = "greedy",
                   thresholds: Thresholds = Thresholds(), judge: Judge | None = None,
                   semantic: SemanticJudge | None = None, with_semantic: bool = False) -> Result:
    """Metrics, counts and the aligned pairs of one response; with ``with_semantic`` also the semantic layer of
    its aligned pairs (:mod:`.semantic`, judged by ``semantic``; NaN without one)."""
    result = _score_response(ref, parsed, rules, matcher, thresholds, judge)
    result.metrics.update(dict.fromkeys(SEMANTIC_METRICS, math.nan))
    result.counts.update(dict.fromkeys(SEMANTIC_COUNTS, 0))
    if with_semantic and parsed.parsed:
        aligned = [p for p in result.pairs if p.ref is not None and p.resp is not None]
        values, each = score_pairs([(p.unit, p.ref, p.resp) for p in aligned], semantic)
        result.metrics.update({k: values[k] for k in SEMANTIC_METRICS})
        result.counts.update({k: values[k] for k in SEMANTIC_COUNTS})
        for p, scored in zip(aligned, each):
            if scored is not None:
                p.precision, p.recall = scored
    return result


def _score_response(ref: Structure, parsed: Parsed, rules: LabelRules, matcher: str, thresholds: Thresholds,
                    judge: Judge | None) -> Result:
    events_apply = ref.dataset != "hd_epic"
    metrics: dict[str, float] = dict.fromkeys(METRICS, math.nan)
    counts = {"n_undecided": 0, "n_judged": 0}
    if not parsed.parsed:
        for name in METRICS:
            if not name.startswith("rate_") and not (not events_apply and name.startswith(("event", "evsa"))):
                metrics[name] = 0.0
        metrics["ccc"] = 0.0 if ref.dataset == "hd_epic" else math.nan
        metrics["parse_failure"] = 1.0
        pairs = [Pair(kind, u, None) for kind in ("event", "action", "reference") for u in ref.units(kind)]
        return Result(metrics, counts, pairs)
    resp = parsed.structure
    match = MATCHERS[matcher]
    pairs: list[Pair] = []
    matched: dict[str, dict[str, str]] = {}   # kind -> response id -> reference id
    for kind, threshold in (("event", thresholds.event), ("action", thresholds.action)):
        r_units, p_units = ref.units(kind), resp.units(kind)
        found = match(r_units, p_units, threshold, tiou_matrix(r_units, p_units))
        matched[kind] = {}
        agree = 0
        for i, j, t in found:
            verdict, by = rules.verdict(kind, r_units[i], p_units[j], ref.dataset, judge)
            counts["n_undecided"] += verdict == "undecided"
            counts["n_judged"] += by == "judge"
            agree += verdict == "agree"
            matched[kind][p_units[j].id] = r_units[i].id
            pairs.append(Pair(kind, r_units[i], p_units[j], t, verdict, by))
        pairs += [Pair(kind, r_units[i], None) for i in sorted(set(range(len(r_units))) - {i for i, _, _ in found})]
        pairs += [Pair(kind, None, p_units[j]) for j in sorted(set(range(len(p_units))) - {j for _, j, _ in found})]
        counts[f"n_ref_{kind}s"], counts[f"n_resp_{kind}s"] = len(r_units), len(p_units)
        if kind == "event" and not events_apply:
            continue
        _put(metrics, kind, _prf(len(found), len(r_units), len(p_units)))
        _put(metrics, f"{kind}_label", _prf(agree, len(r_units), len(p_units)))

    pairs += _references(ref, resp, matched["action"], rules, judge, metrics, counts)
    if events_apply:
        _evsa(ref, resp, matched, metrics)
    if ref.dataset == "hd_epic":
        metrics["ccc"] = _ccc(ref, resp, matched["action"])
    n_units = max(parsed.n_units_raw, 1)
    n_links = parsed.n_links_raw
    for c in UNIT_CHECKS:
        metrics[f"rate_{c}"] = parsed.checks[c] / n_units
    for c in LINK_CHECKS:
        metrics[f"rate_{c}"] = parsed.checks[c] / n_links if n_links else 0.0
    metrics["parse_failure"] = 0.0
    return Result(metrics, counts, pairs)


def _references(ref: Structure, resp: Structure, action_map: dict[str, str], rules: LabelRules,
                judge: Judge | None, metrics: dict, counts: dict) -> list[Pair]:
    ref_links = ref.links_of(("action", "reference"))
    resp_links = resp.links_of(("action", "reference"))
    ref_refs_of: dict[str, set[str]] = {}
    for a, r in ref_links:
        ref_refs_of.setdefault(a, set()).add(r)
    colinks: dict[tuple[str, str], int] = {}
    for a, q in resp_links:
        for r in ref_refs_of.get(action_map.get(a, ""), ()):
            colinks[(r, q)] = colinks.get((r, q), 0) + 1
    by_id = {u.id: u for u in ref.references}
    resp_by_id = {u.id: u for u in resp.references}
    used_r, used_q, pairs, agree = set(), set(), [], 0
    for (r, q), n in sorted(colinks.items(), key=lambda kv: (-kv[1], id_order(kv[0][0]), id_order(kv[0][1]))):
        if r in used_r or q in used_q or r not in by_id or q not in resp_by_id:
            continue
        used_r.add(r)
        used_q.add(q)
        verdict, by = rules.verdict("reference", by_id[r], resp_by_id[q], ref.dataset, judge)
        counts["n_undecided"] += verdict == "undecided"
        counts["n_judged"] += by == "judge"
        agree += verdict == "agree"
        pairs.append(Pair("reference", by_id[r], resp_by_id[q], None, verdict, by))
    pairs += [Pair("reference", u, None) for u in ref.references if u.id not in used_r]
    pairs += [Pair("reference", None, u) for u in resp.references if u.id not in used_q]
    n_ref, n_resp = len(ref.references), len(resp.references)
    counts["n_ref_references"], counts["n_resp_references"] = n_ref, n_resp
    _put(metrics, "reference", _prf(len(used_r), n_ref, n_resp))
    _put(metrics, "reference_label", _prf(agree, n_ref, n_resp))
    # Names alone (ungrounded): one-to-one by rule agreement, in id order.
    taken, name_tp = set(), 0
    for u in sorted(ref.references, key=lambda u: id_order(u.id)):
        for q in sorted(resp.references, key=lambda q: id_order(q.id)):
            if q.id not in taken and rules.reference(u, q, ref.dataset) == "agree":
                taken.add(q.id)
                name_tp += 1
                break
    _put(metrics, "reference_name", _prf(name_tp, n_ref, n_resp))
    return pairs


def _evsa(ref: Structure, resp: Structure, matched: dict[str, dict[str, str]], metrics: dict) -> None:
    ref_links = set(ref.links_of(("event", "action")))
    resp_links = resp.links_of(("event", "action"))
    mapped = {(matched["event"].get(e), matched["action"].get(a)) for e, a in resp_links}
    tp = len(mapped & ref_links)
    _put(metrics, "evsa", _prf(tp, len(ref_links), len(resp_links)))


def _ccc(ref: Structure, resp: Structure, action_map: dict[str, str]) -> float:
    ref_obj = dict(ref.links_of(("action", "reference")))          # action -> its one object
    resp_refs: dict[str, set[str]] = {}
    for a, q in resp.links_of(("action", "reference")):
        resp_refs.setdefault(a, set()).add(q)
    movements: dict[str, list[set[str]]] = {}
    for resp_action, ref_action in action_map.items():
        obj = ref_obj.get(ref_action)
        if obj is not None:
            movements.setdefault(obj, []).append(resp_refs.get(resp_action, set()))
    eligible = [sets for sets in movements.values() if len(sets) >= 2]
    if not eligible:
        return math.nan
    consistent = sum(1 for sets in eligible if set.intersection(*sets))
    return consistent / len(eligible)
