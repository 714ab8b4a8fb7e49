"""The judges of a run as the assets use them: the QA judge (one, or a panel of several) and the caption judge,
built from :meth:`.evaluation.EvaluationResource.judge_panel` (the models file's ``judge`` and ``judges``)."""

from ..captions.models import caption_judge, semantic_judge
from ..captions.panel import CaptionPanel
from ..responses.cache import CallCache
from ..scoring.verdicts import JudgePanel, model_judge
from .evaluation import EvaluationResource


def _label(names: list[str], verdict_by: str, own: bool) -> str:
    if not names:
        return ""
    who = names[0] if len(names) == 1 else f"{', '.join(names)} (verdict: {verdict_by})"
    return who + (" (judging its own replies)" if own else "")


def qa_judge(evaluation: EvaluationResource, cache: CallCache):
    """``(judge, label)``: None with no judge; one judge function; or a :class:`JudgePanel` when the models file
    lists several ``judges`` (each asked about every reply the rules could not decide)."""
    panel, verdict_by = evaluation.judge_panel()
    if not panel:
        return None, ""
    judges = {}
    for name, spec, own in panel:
        caller = evaluation.provider(cache, spec)
        judge = model_judge(caller, cache, rpm=spec.rpm, concurrency=spec.max_concurrency, name=name)
        judge.self_judging = own
        judges[name] = judge
    label = _label(list(judges), verdict_by, any(own for *_, own in panel))
    if len(judges) == 1:
        return next(iter(judges.values())), label
    return JudgePanel(judges, verdict_by), label


def caption_judges(evaluation: EvaluationResource, cache: CallCache):
    """``(judge, label)`` of the caption track: None, one judge, or a :class:`..captions.panel.CaptionPanel`."""
    panel, verdict_by = evaluation.judge_panel()
    if not panel:
        return None, ""
    judges = {}
    for name, spec, _ in panel:
        caller = evaluation.provider(cache, spec)
        limits = {"model": caller.model, "rpm": spec.rpm, "concurrency": spec.max_concurrency}
        judges[name] = (caption_judge(caller, cache, **limits), semantic_judge(caller, cache, **limits))
    label = _label(list(judges), verdict_by, any(own for *_, own in panel))
    return CaptionPanel(judges, verdict_by), label
