"""Table-level functions of the caption track, what the assets call (DataFrames in, DataFrames out):
:func:`caption_references`, :func:`caption_responses`, :func:`caption_alignments`, :func:`caption_scores`, and the
threshold sensitivity per clip (:func:`caption_threshold_partials`) and across clips
(:func:`sensitivity_from_partials`). Model replies join ``caption_responses`` with the same columns."""

from __future__ import annotations

import json
import math

import pandas as pd
from scipy.stats import spearmanr

from ..responses.offline import OFFLINE_MODEL

from .labels import Judge, rules_for
from .panel import CaptionPanel, one_judge
from .parse import CHECKS, Parsed, parse_caption
from .prompt import caption_prompt, conditions_for
from .reference import reference_structure, validate_structure
from .responders import OFFLINE_RESPONDERS, offline_reply
from .score import METRICS, Thresholds, score_response
from .semantic import KINDS as SEMANTIC_KINDS, NO_JUDGE_NOTE, SEMANTIC_COUNTS, SEMANTIC_METRICS, description
from .sources import Catalogue, Clip, audio_annotated
from .structure import Structure, Unit

REFERENCE_COLUMNS = ["clip_key", "dataset", "duration_s", "kind", "unit_id", "start_s", "stop_s", "label",
                     "sound_class", "description", "verb", "verb_class", "noun", "noun_class", "object_name",
                     "synonyms", "linked_ids", "source_stream", "source_id"]
RESPONSE_COLUMNS = ["clip_key", "dataset", "condition", "responder", "model", "prompt", "reply", "status", "error",
                    "cache_key", "cached", "prompt_tokens", "output_tokens", "served_model", "model_digest"]
OFFLINE_MODEL = "offline"  # the model column of the offline caption responders' rows (as in the QA track)
ALIGNMENT_COLUMNS = ["clip_key", "dataset", "condition", "responder", "model", "matcher", "unit", "ref_id", "resp_id",
                     "ref_start_s", "ref_stop_s", "resp_start_s", "resp_stop_s", "tiou", "verdict", "verdict_by",
                     "ref_label", "resp_label", "ref_source_id", "semantic_precision", "semantic_recall",
                     "judge_votes"]
RESPONSE_SCORE_COLUMNS = ["clip_key", "dataset", "condition", "responder", "model", "matcher", "parsed", "parse_error",
                          "n_undecided", "n_judged", *[f"n_{c}" for c in CHECKS], *METRICS, *SEMANTIC_COUNTS,
                          *SEMANTIC_METRICS]
SCORE_COLUMNS = ["responder", "model", "condition", "dataset", "matcher", "metric", "n", "value"]
SWEEP_COLUMNS = ["unit", "threshold", "is_default", "condition", "metric", "responder", "model", "value",
                 "spearman_rho", "n_ranked"]
SWEEPS = {"event": [0.1, 0.2, 0.3, 0.4, 0.5], "action": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]}
SWEEP_METRICS = ["event_f1", "event_label_f1", "action_f1", "action_label_f1", "reference_f1", "evsa_f1", "ccc"]
SWEEP_KEYS = ["unit", "threshold", "is_default", "condition", "responder", "model"]
SWEEP_PARTIAL_COLUMNS = ["clip_key", *SWEEP_KEYS, *SWEEP_METRICS]


# --- references ------------------------------------------------------------------------------------
def caption_references(clip: Clip, rows: pd.DataFrame, catalogue: Catalogue) -> pd.DataFrame:
    """The ``caption_references`` rows of a clip: one row per unit, its outgoing links in ``linked_ids``."""
    return structure_table(clip.key, reference_structure(clip, rows, catalogue))


def reference_metadata(clip: Clip, rows: pd.DataFrame, catalogue: Catalogue) -> dict:
    """What an auditor reads beside the table: counts, notes (gaps stated), and validity problems."""
    s = reference_structure(clip, rows, catalogue)
    return {"events": len(s.events), "actions": len(s.actions), "references": len(s.references),
            "links": len(s.links), "notes": s.notes, "problems": validate_structure(s)}


def structure_table(clip_key: str, s: Structure) -> pd.DataFrame:
    out = []
    targets: dict[str, list[str]] = {}
    for a, b in s.links:
        targets.setdefault(a, []).append(b)
    for kind in ("event", "action", "reference"):
        for u in s.units(kind):
            out.append({"clip_key": clip_key, "dataset": s.dataset, "duration_s": s.duration_s, "kind": kind,
                        "unit_id": u.id, "start_s": u.start_s, "stop_s": u.stop_s, "label": u.label,
                        "sound_class": u.sound_class, "description": u.description, "verb": u.verb,
                        "verb_class": u.verb_class, "noun": u.noun, "noun_class": u.noun_class,
                        "object_name": u.object_name, "synonyms": list(u.synonyms),
                        "linked_ids": targets.get(u.id, []), "source_stream": u.source_stream,
                        "source_id": u.source_id})
    frame = pd.DataFrame(out, columns=REFERENCE_COLUMNS)
    for c in ("verb_class", "noun_class"):
        frame[c] = pd.to_numeric(frame[c], errors="coerce").astype("Int64")
    for c in ("start_s", "stop_s", "duration_s"):
        frame[c] = pd.to_numeric(frame[c], errors="coerce").astype(float)
    return frame


def _opt(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA else v


def structure_from_table(clip_key: str, frame: pd.DataFrame) -> Structure:
    """The reference structure back from its ``caption_references`` rows (dataset and window from the key)."""
    clip = Clip.from_key(clip_key)
    s = Structure(clip.dataset, clip.duration_s)
    for r in frame.to_dict("records"):
        vc, nc = _opt(r["verb_class"]), _opt(r["noun_class"])
        u = Unit(r["kind"], r["unit_id"], _opt(r["start_s"]), _opt(r["stop_s"]), r["label"] or "",
                 _opt(r["sound_class"]), _opt(r["description"]), _opt(r["verb"]), None if vc is None else int(vc),
                 _opt(r["noun"]), None if nc is None else int(nc), _opt(r["object_name"]),
                 tuple(r["synonyms"] if r["synonyms"] is not None else ()), _opt(r["source_stream"]), _opt(r["source_id"]))
        s.units(u.kind).append(u)
        s.links += [(u.id, t) for t in (r["linked_ids"] if r["linked_ids"] is not None else [])]
    return s


# --- responses -------------------------------------------------------------------------------------
def caption_responses(clip: Clip, references: pd.DataFrame, catalogue: Catalogue,
                      responders=OFFLINE_RESPONDERS, conditions=None, seed: int = 0, streams=()) -> pd.DataFrame:
    """Offline responders' replies to every condition of the clip (``model`` is ``offline`` for them): ``conditions``,
    else the clip's (``silenced`` where its audio is annotated: an ``epic_sounds`` clip, or one whose annotation
    rows' ``streams`` hold sound rows)."""
    ref = structure_from_table(clip.key, references[references["clip_key"] == clip.key])
    rows = []
    for condition in conditions or conditions_for(audio_annotated(clip.dataset, streams)):
        prompt = caption_prompt(clip, condition)
        for name in responders:
            rows.append({"clip_key": clip.key, "dataset": clip.dataset, "condition": condition, "responder": name,
                         "model": OFFLINE_MODEL, "prompt": prompt, "status": "ok", "error": None,
                         "cache_key": "", "cached": False, "prompt_tokens": 0, "output_tokens": 0,
                         "served_model": OFFLINE_MODEL, "model_digest": "",
                         "reply": offline_reply(name, ref, condition, cat=catalogue, clip=clip, seed=seed)})
    return pd.DataFrame(rows, columns=RESPONSE_COLUMNS)


# --- alignment and scores --------------------------------------------------------------------------
def _memo(judge: Judge | None) -> Judge | None:
    if judge is None:
        return None
    seen: dict = {}

    def ask(kind, a, b):
        if (kind, a, b) not in seen:
            seen[(kind, a, b)] = judge(kind, a, b)
        return seen[(kind, a, b)]
    return ask


def _prepared(references: pd.DataFrame, responses: pd.DataFrame):
    refs = {k: structure_from_table(k, g) for k, g in references.groupby("clip_key", sort=False)}
    for r in responses.to_dict("records"):
        key = r["clip_key"]
        if key not in refs:
            refs[key] = structure_from_table(key, references.iloc[0:0])
        ref = refs[key]
        status = r.get("status", "ok")
        if status != "ok":
            yield r, ref, Parsed(None, error=f"no reply (status {status}: {r.get('error') or 'no detail'})")
        else:
            yield r, ref, parse_caption(r["reply"], ref.dataset, ref.duration_s)


def _semantic_of(judge) -> object | None:
    return judge.semantic if isinstance(judge, CaptionPanel) and judge.has_semantic else None


def _votes(panel, p) -> str:
    """Every judge's answer about an aligned pair (JSON), when several judges were asked."""
    if not isinstance(panel, CaptionPanel) or len(panel.names) < 2 or p.ref is None or p.resp is None:
        return ""
    out = {}
    label = panel.label_votes.get((p.unit, p.ref.label, p.resp.label)) if p.by == "judge" else None
    a, b = description(p.ref), description(p.resp)
    for name in panel.names:
        vote = {}
        if label is not None:
            vote["label"] = {True: "agree", False: "disagree", None: "none"}[label[name]]
        for direction, key in (("precision", "semantic_precision"), ("recall", "semantic_recall")):
            answer = panel.semantic_votes.get((p.unit, a, b, direction), {}).get(name)
            if answer is not None:
                vote[key] = "failed" if answer[1] else answer[0]
        if vote:
            out[name] = vote
    return json.dumps(out) if out else ""


def caption_alignments(references: pd.DataFrame, responses: pd.DataFrame, catalogue: Catalogue,
                       judge: Judge | None = None, thresholds: Thresholds = Thresholds()
                       ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every matched and unmatched unit of every response (both matchers), and one score row per
    response × matcher. A reply whose ``status`` is not ``ok`` (the runner gave up) scores as unparsed.
    ``judge`` is a label judge or a :class:`.panel.CaptionPanel`, whose semantic judges also score the greedy
    matcher's aligned pairs (:mod:`.semantic`; no panel: the semantic columns are empty)."""
    panel, semantic = judge, _semantic_of(judge)
    rules, judge = rules_for(catalogue), _memo(judge)
    align_rows, score_rows = [], []
    for r, ref, parsed in _prepared(references, responses):
        ident = {k: r[k] for k in ("clip_key", "dataset", "condition", "responder", "model")}
        for matcher in ("greedy", "hungarian"):
            res = score_response(ref, parsed, rules, matcher=matcher, thresholds=thresholds, judge=judge,
                                 semantic=semantic, with_semantic=matcher == "greedy")
            score_rows.append({**ident, "matcher": matcher, "parsed": parsed.parsed, "parse_error": parsed.error,
                               "n_undecided": res.counts["n_undecided"], "n_judged": res.counts["n_judged"],
                               **{f"n_{c}": parsed.checks[c] for c in CHECKS}, **res.metrics,
                               **{c: res.counts[c] for c in SEMANTIC_COUNTS}})
            for p in res.pairs:
                align_rows.append({**ident, "matcher": matcher, "unit": p.unit,
                                   "ref_id": p.ref.id if p.ref else None, "resp_id": p.resp.id if p.resp else None,
                                   "ref_start_s": p.ref.start_s if p.ref else None,
                                   "ref_stop_s": p.ref.stop_s if p.ref else None,
                                   "resp_start_s": p.resp.start_s if p.resp else None,
                                   "resp_stop_s": p.resp.stop_s if p.resp else None,
                                   "tiou": p.tiou, "verdict": p.verdict, "verdict_by": p.by,
                                   "ref_label": p.ref.label if p.ref else None,
                                   "resp_label": p.resp.label if p.resp else None,
                                   "ref_source_id": p.ref.source_id if p.ref else None,
                                   "semantic_precision": p.precision, "semantic_recall": p.recall,
                                   "judge_votes": _votes(panel, p) if matcher == "greedy" else ""})
    return (pd.DataFrame(align_rows, columns=ALIGNMENT_COLUMNS), pd.DataFrame(score_rows, columns=RESPONSE_SCORE_COLUMNS))


SEMANTIC_PAIR_COUNTS = [f"n_semantic_{k}" for k in SEMANTIC_KINDS]
JUDGE_METRICS = ["event_label_f1", "action_label_f1", "reference_label_f1", *SEMANTIC_METRICS]
JUDGE_PARTIAL_COLUMNS = ["clip_key", "dataset", "condition", "responder", "model", "judge", "metric", "value", "n"]


def caption_judge_partials(references: pd.DataFrame, responses: pd.DataFrame, catalogue: Catalogue,
                           judge) -> pd.DataFrame:
    """Per response (greedy) × judge of a panel of two or more × metric (:data:`JUDGE_METRICS`): the metric as
    that judge alone would have made it (its own label and semantic answers; ``judge`` ``verdict``: as scored),
    for the judge-swap sensitivity of the caption track. Empty without such a panel."""
    if not isinstance(judge, CaptionPanel) or len(judge.names) < 2:
        return pd.DataFrame(columns=JUDGE_PARTIAL_COLUMNS)
    rules = rules_for(catalogue)
    views = {"verdict": (judge, _semantic_of(judge))}
    views.update({name: one_judge(judge, name) for name in judge.names})
    rows = []
    for r, ref, parsed in _prepared(references, responses):
        ident = {k: r[k] for k in ("clip_key", "dataset", "condition", "responder", "model")}
        for name, (label, semantic) in views.items():
            res = score_response(ref, parsed, rules, judge=label, semantic=semantic if judge.has_semantic else None,
                                 with_semantic=True)
            for metric in JUDGE_METRICS:
                kind = metric.split("_")[1] if metric.startswith("semantic_") else metric.split("_")[0]
                n = res.counts.get(f"n_semantic_{kind}", 0) if metric.startswith("semantic_") else 1
                rows.append({**ident, "judge": name, "metric": metric, "value": res.metrics[metric], "n": n})
    return pd.DataFrame(rows, columns=JUDGE_PARTIAL_COLUMNS)


def caption_judge_votes(judge) -> pd.DataFrame:
    """Every judge's answer about every pair a panel of two or more was asked about: ``track`` caption_label
    (agree / disagree / none) or caption_semantic (1-5 per direction), one row per pair × judge (failed: no label)."""
    columns = ["track", "unit", "judge", "label", "clip_key"]
    if not isinstance(judge, CaptionPanel) or len(judge.names) < 2:
        return pd.DataFrame(columns=columns)
    rows = []
    for (kind, a, b), votes in judge.label_votes.items():
        for name, v in votes.items():
            rows.append({"track": "caption_label", "unit": f"{kind}|{a}|{b}", "judge": name,
                         "label": {True: "agree", False: "disagree", None: "none"}[v], "clip_key": ""})
    for (kind, a, b, direction), votes in judge.semantic_votes.items():
        for name, (score, failed) in votes.items():
            rows.append({"track": "caption_semantic", "unit": f"{kind}|{a}|{b}|{direction}", "judge": name,
                         "label": None if failed or score is None else str(score), "clip_key": ""})
    return pd.DataFrame(rows, columns=columns)


def caption_scores(response_scores: pd.DataFrame) -> pd.DataFrame:
    """Cross-clip scores, long: the mean of each metric over the responses where it applies (``n`` of
    them), per responder × model × condition × dataset (``'*'``: both datasets) × matcher. The groups are
    taken over the responses as they are (one row each), and each metric's rows then follow one another.

    A response is one clip's caption, so each mean is per clip, then over clips (OmniCapBench's way); beside the
    semantic metrics ``semantic_<kind>_<p|r>_pooled`` weights each clip by its scored pairs (every pair once, ``n``
    pairs), and ``schema_gate`` is the share of replies that parse into the structure."""
    if not len(response_scores):
        return pd.DataFrame(columns=SCORE_COLUMNS)
    keys = ["responder", "model", "condition", "dataset", "matcher"]
    semantic = [m for m in SEMANTIC_METRICS if m in response_scores]
    metrics = METRICS + semantic
    values = response_scores[metrics].apply(pd.to_numeric, errors="coerce")
    values["schema_gate"] = 1.0 - values["parse_failure"]
    pooled = {}
    for m in semantic:
        kind = m.split("_")[1]
        weight = pd.to_numeric(response_scores.get(f"n_semantic_{kind}", 0), errors="coerce").fillna(0)
        pooled[m] = (values[m].fillna(0) * weight, weight.where(values[m].notna(), 0))
    names = metrics + ["schema_gate"]
    frame = pd.concat([response_scores[keys], values[names]], axis=1)
    for m, (num, den) in pooled.items():
        frame[f"{m}__num"], frame[f"{m}__den"] = num.to_numpy(), den.to_numpy()
    counts, means, sums = [], [], []
    for part in (frame, frame.assign(dataset="*")):
        grouped = part.groupby(keys, sort=False, dropna=False)
        counts.append(grouped[names].count())
        means.append(grouped[names].mean())
        sums.append(grouped[[c for c in frame.columns if c.endswith(("__num", "__den"))]].sum())
    long = pd.concat(counts).reset_index().melt(id_vars=keys, value_vars=names, var_name="metric", value_name="n")
    long["value"] = pd.concat(means).reset_index().melt(id_vars=keys, value_vars=names)["value"].to_numpy()
    if pooled:
        total = pd.concat(sums).reset_index()
        rows = []
        for m in pooled:
            den = total[f"{m}__den"]
            rows.append(total[keys].assign(metric=f"{m}_pooled", n=den.astype(int),
                                           value=(total[f"{m}__num"] / den.where(den > 0)).to_numpy()))
        long = pd.concat([long, *rows], ignore_index=True)
    return long[SCORE_COLUMNS]


def caption_threshold_partials(references: pd.DataFrame, responses: pd.DataFrame, catalogue: Catalogue,
                               judge: Judge | None = None) -> pd.DataFrame:
    """A clip's share of the threshold sweep: each response's greedy metrics (``SWEEP_METRICS``) with the event
    tIoU swept over 0.1–0.5 and the action tIoU over 0.1–0.7 (the other at its default), one row per
    setting × response. Written with the clip, so the cross-clip sweep only averages these rows."""
    rules, judge = rules_for(catalogue), _memo(judge)
    prepared = list(_prepared(references, responses))
    default = Thresholds()
    rows = []
    for unit, values in SWEEPS.items():
        for t in values:
            th = Thresholds(event=t) if unit == "event" else Thresholds(action=t)
            for r, ref, parsed in prepared:
                m = score_response(ref, parsed, rules, thresholds=th, judge=judge).metrics
                rows.append({"clip_key": r["clip_key"], "unit": unit, "threshold": t, "is_default": th == default,
                             "condition": r["condition"], "responder": r["responder"], "model": r["model"],
                             **{k: m[k] for k in SWEEP_METRICS}})
    frame = pd.DataFrame(rows, columns=SWEEP_PARTIAL_COLUMNS)
    for k in SWEEP_METRICS:
        frame[k] = pd.to_numeric(frame[k], errors="coerce").astype(float)
    return frame


def sensitivity_from_partials(partials: pd.DataFrame) -> pd.DataFrame:
    """The sweep over every clip: each metric averaged over the responses where it applies, per setting ×
    responder × model × condition, and the Spearman ρ of the responder ranking at each threshold against the
    ranking at the defaults (NaN with fewer than 3 ranked responders or a constant metric)."""
    if not len(partials):
        return pd.DataFrame(columns=SWEEP_COLUMNS)
    wide = partials.groupby(SWEEP_KEYS, dropna=False)[SWEEP_METRICS].mean().reset_index()
    agg = wide.melt(id_vars=SWEEP_KEYS, value_vars=SWEEP_METRICS, var_name="metric", value_name="value")
    base = agg[agg["is_default"]].drop(columns=["threshold", "is_default"])
    out = []
    for (unit, t, condition, metric), g in agg.groupby(["unit", "threshold", "condition", "metric"]):
        b = base[(base["unit"] == unit) & (base["condition"] == condition) & (base["metric"] == metric)]
        joined = g.merge(b, on=["responder", "model"], suffixes=("", "_default")).dropna(subset=["value", "value_default"])
        rho = math.nan
        if len(joined) >= 3 and joined["value"].nunique() > 1 and joined["value_default"].nunique() > 1:
            rho = float(spearmanr(joined["value"], joined["value_default"]).statistic)
        out.append(g.assign(spearman_rho=rho, n_ranked=len(joined)))
    result = pd.concat(out, ignore_index=True) if out else pd.DataFrame(columns=SWEEP_COLUMNS)
    return result[SWEEP_COLUMNS].sort_values(["unit", "condition", "metric", "threshold", "responder"],
                                             kind="stable").reset_index(drop=True)


def caption_threshold_sensitivity(references: pd.DataFrame, responses: pd.DataFrame, catalogue: Catalogue,
                                  judge: Judge | None = None) -> pd.DataFrame:
    """The threshold sweep of these responses in one call: :func:`sensitivity_from_partials` of
    :func:`caption_threshold_partials` (which the pipeline writes per clip)."""
    return sensitivity_from_partials(caption_threshold_partials(references, responses, catalogue, judge))


def side_by_side(references: pd.DataFrame, responses: pd.DataFrame, clip_key: str, responder: str,
                 condition: str = "clip") -> str:
    """Text for ``epic-levels captions --clip KEY``: the reference and a responder's caption, unit by unit."""
    ref = structure_from_table(clip_key, references[references["clip_key"] == clip_key])
    row = responses[(responses["clip_key"] == clip_key) & (responses["responder"] == responder)
                    & (responses["condition"] == condition)]
    if not len(row):
        raise KeyError(f"no {responder!r} reply for {clip_key} under {condition!r}")
    parsed = parse_caption(row["reply"].iat[0], ref.dataset, ref.duration_s)
    resp = parsed.structure or Structure(ref.dataset, ref.duration_s)
    lines = [f"{clip_key} — reference | {responder} ({condition})" + ("" if parsed.parsed else f" UNPARSED: {parsed.error}")]
    for kind in ("event", "action", "reference"):
        a, b = ref.units(kind), resp.units(kind)
        lines.append(f"[{kind}s] {len(a)} | {len(b)}")
        for i in range(max(len(a), len(b))):
            left = _line(a[i]) if i < len(a) else ""
            right = _line(b[i]) if i < len(b) else ""
            lines.append(f"  {left:<48} | {right}")
    return "\n".join(lines)


def _line(u: Unit) -> str:
    span = f"{u.start_s:6.2f}-{u.stop_s:6.2f} " if u.start_s is not None else ""
    return f"{u.id:>4} {span}{u.label}"[:48]


MAIN_METRICS = ["event_f1", "event_label_f1", "action_f1", "action_label_f1", "reference_f1", "evsa_f1", "ccc",
                "parse_failure"]


def main_table(scores: pd.DataFrame, matcher: str = "greedy") -> pd.DataFrame:
    """The main caption metrics (both datasets, one matcher), one row per responder × model × condition."""
    top = scores[(scores["dataset"] == "*") & (scores["matcher"] == matcher) & scores["metric"].isin(MAIN_METRICS)]
    if not len(top):
        return pd.DataFrame(columns=["responder", "model", "condition", *MAIN_METRICS])
    table = top.pivot_table(index=["responder", "model", "condition"], columns="metric", values="value",
                            aggfunc="first", dropna=False)
    table = table.reindex(columns=[m for m in MAIN_METRICS if m in table.columns])
    return table.round(3).reset_index().rename_axis(columns=None)


def oracle_problems(response_scores: pd.DataFrame) -> list[str]:
    """The self-test: the ``oracle`` under ``clip`` must score 1.0 on every metric that applies (both
    matchers), parse, and break no structural rule. One line per failing response × metric."""
    rows = response_scores[(response_scores["responder"] == "oracle") & (response_scores["condition"] == "clip")]
    if not len(rows):
        return ["no oracle reply under clip: the self-test cannot run"]
    problems = []
    rates = [m for m in METRICS if m.startswith("rate_")] + ["parse_failure"]
    for r in rows.to_dict("records"):  # the semantic layer, where a judge scored it: 5 of 5 both ways
        for m in SEMANTIC_METRICS:
            v = r.get(m)
            if v is not None and not (isinstance(v, float) and math.isnan(v)) and abs(float(v) - 5.0) > 1e-9:
                problems.append(f"{r['clip_key']} ({r['matcher']}): {m} = {float(v):.4f}, expected 5")
    for r in rows.to_dict("records"):
        where = f"{r['clip_key']} ({r['matcher']})"
        for m in METRICS:
            v = r[m]
            if v is None or (isinstance(v, float) and math.isnan(v)):
                continue
            want = 0.0 if m in rates else 1.0
            if abs(float(v) - want) > 1e-9:
                problems.append(f"{where}: {m} = {float(v):.4f}, expected {want:g}")
    return problems
