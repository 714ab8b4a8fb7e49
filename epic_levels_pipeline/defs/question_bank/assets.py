"""Question bank: distractor pools and solver-verified questions per clip, with their checks."""



import dagster as dg
import pandas as pd

from ...bank.checks import key_problems, level_problems, option_problems, shortcut_rates
from ...annotations.catalogue import Catalogue
from ...bank.clip_view import ClipView
from ...annotations.clips import Clip
from ...bank.build import build_bank, render_question
from ...bank.subtypes import DEFAULT_VARIANTS, BankConfig
from ..metadata import ClipBatch, counts_markdown, markdown_table
from ..automation import PER_CLIP
from ..partitions import CLIP_BACKFILL, clip_in, clip_partitions
from ..resources import ProjectResource

SHORTCUT_MARGIN = 0.25  # presence-oracle rate above chance that fails the per-clip shortcut check


class QuestionBankConfig(dg.Config):
    """Which distractor strategies to generate per subtype (the leaky and the fixed variant can run side by side)."""

    variants: dict[str, list[str]] = {k: list(v) for k, v in DEFAULT_VARIANTS.items()}
    max_per_subtype: int = 3
    distractor_rule: str = "exchangeable"  # or "uniform_rank", "uniform": bank/distractors.py RULES
    distractor_seed: int | None = None  # None: the project's seed


def level_subtype_table(questions: pd.DataFrame) -> str:
    if not len(questions):
        return "_(no questions)_"
    table = questions.pivot_table(index="subtype", columns="level", values="question_id", aggfunc="count", fill_value=0)
    return markdown_table(table.reset_index())


@dg.multi_asset(
    partitions_def=clip_partitions, group_name="question_bank", can_subset=False, backfill_policy=CLIP_BACKFILL,
    ins={"clip_annotations": clip_in(), "entity_catalogue": dg.AssetIn()},
    outs={
        "questions": dg.AssetOut(kinds={"pandas", "parquet"}, code_version="1", automation_condition=PER_CLIP,
                                 description="Base questions with options, program-computed key, level and provenance."),
        "distractor_pools": dg.AssetOut(kinds={"pandas", "parquet"}, code_version="1", automation_condition=PER_CLIP,
                                        description="Candidate wrong options per question, with strategy and justifying rows."),
    },
    check_specs=[
        dg.AssetCheckSpec("one_key_per_question", asset="questions", blocking=True,
                          description="Exactly one option is true by the solver, and it is the stored key."),
        dg.AssetCheckSpec("level_matches_provenance", asset="questions", blocking=True,
                          description="The scope derived from each question's evidence equals its subtype's scope."),
        dg.AssetCheckSpec("distinct_options", asset="questions", blocking=True,
                          description="No two options of a question are the same entity after normalisation, "
                                      "or nested in one another (word sets; head noun for entities)."),
        dg.AssetCheckSpec("presence_shortcut", asset="questions", blocking=False,
                          description="Presence oracle near chance on L2+ questions with same-clip distractors."),
    ],
)
def question_bank(context: dg.AssetExecutionContext, config: QuestionBankConfig, project: ProjectResource,
                  clip_annotations: dict[str, pd.DataFrame], entity_catalogue: Catalogue):
    bank_config = BankConfig(variants={k: tuple(v) for k, v in config.variants.items()},
                             max_per_subtype=config.max_per_subtype,
                             seed=project.seed if config.distractor_seed is None else config.distractor_seed,
                             distractor_rule=config.distractor_rule)
    clips = ClipBatch(context, ("questions", "distractor_pools"))
    questions = {}
    key_issues, level_issues, option_issues = [], [], []
    for key in clips:
        clip, rows = Clip.from_key(key), clip_annotations[key]
        bank = build_bank(clip, rows, entity_catalogue, bank_config)
        q = bank.questions
        meta = clips.metadata(q, ["level", "subtype", "distractor_strategy", "question", "answer"], 8, "questions")
        meta["dropped"] = dg.MetadataValue.int(sum(bank.drops.values()))
        if not clips.batch:  # a batch's shared metadata keeps the counts (batch_metadata)
            samples = "\n\n".join("```\n" + render_question(row) + "\n```" for _, row in q.head(4).iterrows())
            meta.update({
                "by_level_and_subtype": dg.MetadataValue.md(level_subtype_table(q)),
                "sample_questions": dg.MetadataValue.md(samples or "_(none)_"),
                "dropped_by_reason": dg.MetadataValue.md(counts_markdown(dict(bank.drops))),
            })
        questions[key] = q
        clips.add(key, bank.question_table, meta, "questions")  # the Arrow tables are written as they are
        clips.add(key, bank.pool_table, clips.metadata(bank.pools, ["question_id", "distractor_strategy", "role", "text",
                                                                     "present", "chosen"], 8, "distractor_pools"),
                  "distractor_pools")
        key_issues += key_problems(q, ClipView(clip, rows, entity_catalogue))
        level_issues += level_problems(q)
        option_issues += option_problems(q)
    # Blocking checks run before anything is written: a failing bank never replaces the last good one.
    n = sum(len(q) for q in questions.values())
    yield dg.AssetCheckResult(check_name="one_key_per_question", asset_key="questions", passed=not key_issues,
                              metadata={"questions": n, "problems": dg.MetadataValue.md("\n".join(f"- {p}" for p in key_issues) or "_(none)_")})
    yield dg.AssetCheckResult(check_name="level_matches_provenance", asset_key="questions", passed=not level_issues,
                              metadata={"questions": n, "problems": dg.MetadataValue.md("\n".join(f"- {p}" for p in level_issues) or "_(none)_")})
    yield dg.AssetCheckResult(check_name="distinct_options", asset_key="questions", passed=not option_issues,
                              metadata={"questions": n, "problems": dg.MetadataValue.md("\n".join(f"- {p}" for p in option_issues) or "_(none)_")})
    issues = key_issues + level_issues + option_issues
    if issues:
        raise dg.Failure(description=f"{len(issues)} question(s) failed blocking checks for {', '.join(questions)}; "
                                     "the last good question bank is kept", metadata={"problems": dg.MetadataValue.md(
                                         "\n".join(f"- {p}" for p in issues)[:20000])})
    yield clips.output("questions")
    yield clips.output("distractor_pools")
    rates = shortcut_rates(pd.concat(list(questions.values()), ignore_index=True))
    fixed = rates[(rates["level"] != "L1") & (rates["distractor_strategy"] != "absent_from_clip")]
    leaky = fixed[fixed["presence_oracle_rate"] > fixed["chance"] + SHORTCUT_MARGIN]
    yield dg.AssetCheckResult(check_name="presence_shortcut", asset_key="questions", passed=not len(leaky),
                              severity=dg.AssetCheckSeverity.WARN,
                              metadata={"rates": dg.MetadataValue.md(markdown_table(rates))})
