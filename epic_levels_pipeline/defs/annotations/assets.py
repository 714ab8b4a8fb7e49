"""Ingestion: validated annotation tables, the entity catalogue, and each clip's overlapping rows."""


import dagster as dg
import pandas as pd

from ...annotations.readers import TABLE_COLUMNS, Annotations, discover, files_fingerprint, read_tables
from ...annotations.layout import locate
from ...annotations.catalogue import Catalogue, build_catalogue
from ...annotations.clips import Clip, gaps
from ...annotations.clip_rows import clips_annotations
from ...annotations.clip_hash import content_hash
from ...errors import AnnotationError
from ..metadata import ClipBatch, counts_markdown, markdown_table, table_metadata
from ..partitions import CLIP_BACKFILL, clip_partitions
from ..resources import ProjectResource

ANNOTATION_TABLES = list(TABLE_COLUMNS)


def source_fingerprint(project: ProjectResource) -> str:
    """Content hash of the annotation files: the sensor compares it with the tables' materialization."""
    return files_fingerprint(project.paths.annotations)


@dg.multi_asset(
    outs={name: dg.AssetOut(description=f"Validated `{name}` annotation table (times in seconds).",
                            kinds={"pandas", "parquet"}, code_version="1", is_required=True)
          for name in ANNOTATION_TABLES},
    group_name="annotations",
    can_subset=False,
)
def annotation_tables(context: dg.AssetExecutionContext, project: ProjectResource):
    """Read and validate every annotation file under the annotations root (settings.py); fail (keeping the last good
    materialization) on any problem, naming file, row and column."""
    files, skipped = discover([project.paths.annotations])
    tables, problems = read_tables(files)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise dg.Failure(description=str(AnnotationError(errors)),
                         metadata={"problems": dg.MetadataValue.md("\n".join(f"- `{p}`" for p in errors[:200]))})
    dropped = [p for p in problems if p.severity == "dropped"]
    fingerprint = source_fingerprint(project)
    # test-split files, shadowed copies and files without a reader yet, each with its reason (layout.py)
    skipped_reasons = [line for line in locate(project.paths.annotations).describe() if line.startswith("skipped")]
    for name in ANNOTATION_TABLES:
        frame = tables[name]
        reasons = {}
        for p in dropped:
            if name in _table_of(p.file):
                reason = p.message.split(";")[0]
                reasons[reason] = reasons.get(reason, 0) + 1
        meta = table_metadata(frame)
        meta.update({
            "files": dg.MetadataValue.md("\n".join(f"- `{f}`" for f in files if name in _table_of(str(f)))),
            "dropped_rows": dg.MetadataValue.int(sum(reasons.values())),
            "dropped_by_reason": dg.MetadataValue.md(counts_markdown(reasons)),
            # e.g. the sounds of EPIC-SOUNDS and of HD-EPIC (HD_EPIC_Sounds.csv), side by side
            "rows_by_file": dg.MetadataValue.md(counts_markdown(
                frame["source_file"].value_counts().to_dict() if "source_file" in frame.columns else {}, "file", "rows")),
            "source_fingerprint": fingerprint,
            "skipped_files": dg.MetadataValue.md("\n".join(f"- {line}" for line in skipped_reasons) or "none"),
        })
        yield dg.Output(frame, output_name=name, metadata=meta)
    context.log.info(f"read {len(files)} files; {len(skipped)} files in the folder are not annotation files")


def _table_of(file_name: str) -> str:
    from pathlib import Path

    from ...annotations.file_kinds import file_kind

    kind = file_kind(Path(file_name))
    return kind.table if kind else ""


@dg.asset(
    group_name="annotations", kinds={"python"}, code_version="2",  # 2: stored as JSON
    ins={name: dg.AssetIn(name) for name in ANNOTATION_TABLES},
    description="Every candidate a distractor may be drawn from (nouns, actions, sound classes, activities with "
                "their objects, object names) and the synonym lists scorers match against.",
)
def entity_catalogue(sounds: pd.DataFrame, narrations: pd.DataFrame, activities: pd.DataFrame,
                     recipe_steps: pd.DataFrame, object_tracks: pd.DataFrame, vocabulary: pd.DataFrame,
                     videos: pd.DataFrame) -> dg.Output[Catalogue]:
    ann = Annotations(sounds, narrations, activities, recipe_steps, object_tracks, vocabulary, videos)
    cat = build_catalogue(ann)
    return dg.Output(cat, metadata={
        "nouns": len(cat.nouns), "actions": len(cat.actions), "sound_classes": len(cat.sound_classes),
        "activities": len(cat.activities), "objects": len(cat.objects),
        "placeholder_object_names_excluded": dg.MetadataValue.md(", ".join(cat.placeholder_objects[:50]) or "_(none)_"),
    })


def annotations_from(tables: dict[str, pd.DataFrame]) -> Annotations:
    full = {name: tables.get(name, pd.DataFrame(columns=TABLE_COLUMNS[name])) for name in ANNOTATION_TABLES}
    return Annotations(**full)


@dg.asset(
    partitions_def=clip_partitions, group_name="annotations", kinds={"pandas", "parquet"}, code_version="1",
    backfill_policy=CLIP_BACKFILL,
    ins={name: dg.AssetIn(name) for name in ("sounds", "narrations", "activities", "recipe_steps", "object_tracks")},
    description="Every annotation row overlapping the clip's window, with its stream, id and span clipped and "
                "unclipped (plus, for hd_epic, the recipe's steps outside the window).",
)
def clip_annotations(context: dg.AssetExecutionContext, sounds: pd.DataFrame, narrations: pd.DataFrame,
                     activities: pd.DataFrame, recipe_steps: pd.DataFrame, object_tracks: pd.DataFrame):
    """One interval join per table for every clip of the run. The content hash of a clip's rows is its
    data version when the run holds one clip, and is in its materialization's metadata either way
    (``content_hash``; a batch's partitions share one data version)."""
    clips = ClipBatch(context)
    tables = {"sounds": sounds, "narrations": narrations, "activities": activities, "recipe_steps": recipe_steps,
              "object_tracks": object_tracks}
    by_clip = clips_annotations(annotations_from(tables), [Clip.from_key(k) for k in clips])
    digests = {}
    for key, rows in by_clip.items():
        clip = Clip.from_key(key)
        digests[key] = content_hash(rows)
        meta = clips.metadata(rows, ["stream", "row_id", "label", "start_s", "stop_s", "start_clipped_s",
                                     "stop_clipped_s"], 12)
        meta["content_hash"] = digests[key]
        if not clips.batch:  # a batch's clips keep their counts and hashes (batch_metadata)
            per_stream = rows.groupby(["stream", "in_window"]).size().rename("rows").reset_index() if len(rows) else pd.DataFrame()
            meta.update({
                "dataset": clip.dataset, "video_id": clip.video_id, "window": f"{clip.start_s:g}-{clip.end_s:g} s",
                "rows_by_stream": dg.MetadataValue.md(markdown_table(per_stream)),
                "known_gaps": dg.MetadataValue.md("\n".join(f"- {g}" for g in gaps(clip, rows)) or "_(none)_"),
            })
        clips.add(key, rows, meta)
    if not clips.batch:
        return clips.output(data_version=dg.DataVersion(digests[clips.keys[0]]))
    return clips.output()
