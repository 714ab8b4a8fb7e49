"""Formats: every base question rendered in the five answer formats, with checks on the renderings."""

import dagster as dg
import pandas as pd

from ...annotations.catalogue import Catalogue
from ...bank.clip_view import ClipView
from ...records import records
from ...annotations.clips import Clip
from ...formats.items import build_items, format_problems, open_problems, statement_truth_problems
from ..metadata import ClipBatch, counts_markdown
from ..automation import PER_CLIP
from ..partitions import CLIP_BACKFILL, clip_in, clip_partitions
from ..resources import ProjectResource


@dg.asset(
    partitions_def=clip_partitions, automation_condition=PER_CLIP, group_name="formats", kinds={"pandas", "parquet"}, code_version="2",
    backfill_policy=CLIP_BACKFILL,
    ins={"questions": clip_in(), "clip_annotations": clip_in(), "entity_catalogue": dg.AssetIn()},
    description="Each base question as yes_no, multiple_choice, statements, open (or option_judgement when it "
                "cannot stand without its options) and open_with_reason; prompt, expected answer, chance; "
                "audio_annotated (the clip's audio is annotated: the item is also asked under silenced).",
    check_specs=[
        dg.AssetCheckSpec("five_formats_per_question", asset="items", blocking=True),
        dg.AssetCheckSpec("no_list_dependent_wording", asset="items", blocking=True,
                          description="Open items use no list-dependent wording and leak no option."),
        dg.AssetCheckSpec("statement_truths_from_solvers", asset="items", blocking=True),
    ],
)
def items(context: dg.AssetExecutionContext, project: ProjectResource, questions: dict[str, pd.DataFrame],
          clip_annotations: dict[str, pd.DataFrame], entity_catalogue: Catalogue):
    clips = ClipBatch(context)
    problems = {"five_formats_per_question": [], "no_list_dependent_wording": [], "statement_truths_from_solvers": []}
    for key in clips:
        clip, clip_questions = Clip.from_key(key), questions[key]
        view = ClipView(clip, clip_annotations[key], entity_catalogue)
        frame, rejected = build_items(clip_questions, view, entity_catalogue, seed=project.seed)
        meta = clips.metadata(frame, ["format", "expected", "chance", "prompt"], 6)
        if not clips.batch:  # a batch's shared metadata keeps the counts (batch_metadata)
            yes = frame[frame["format"] == "yes_no"]
            meta.update({
                "by_format": dg.MetadataValue.md(counts_markdown(frame["format"].value_counts().to_dict(), "format", "items")),
                "yes_no_true_share": float((yes["expected"] == "yes").mean()) if len(yes) else 0.0,
                "open_rejected_to_option_judgement": dg.MetadataValue.md("\n".join(f"- {r}" for r in rejected) or "_(none)_"),
            })
        clips.add(key, frame, meta)
        problems["five_formats_per_question"] += format_problems(frame, clip_questions)
        open_items = records(frame.loc[(frame["base_format"] == "open").to_numpy(), ["item_id", "prompt", "options"]])
        problems["no_list_dependent_wording"] += [f"{r.item_id}: {p}" for r in open_items
                                                  for p in open_problems(r.prompt, list(r.options))]
        problems["statement_truths_from_solvers"] += statement_truth_problems(frame, view, clip_questions)
    # Blocking checks run before anything is written: failing items never replace the last good ones.
    n = sum(len(f) for f in clips.tables[None].values())
    for name, found in problems.items():
        yield dg.AssetCheckResult(check_name=name, passed=not found,
                                  metadata={"items": n, "problems": dg.MetadataValue.md("\n".join(found[:200]) or "_(none)_")})
    failed = [name for name, found in problems.items() if found]
    if failed:
        raise dg.Failure(description=f"items of {', '.join(clips.keys)} failed blocking checks {failed}; the last good items are kept")
    yield clips.output()
