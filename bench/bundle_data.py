"""Rebuild the bundled annotation copies in data/annotations from the full staged files.

Reads data/clips.csv and copies, from the staged source folder (default ../shared/data), every row of
every video that the manifest names — whole videos, so distractor pools and the catalogue have more than
the window — in the sources' own file formats (the same readers and validation apply to bundled and full
files). Licence facts (SOURCE.md) are copied beside each dataset folder. Skips cleanly when the staged
files are absent.

    python bench/bundle_data.py [--source ../shared/data]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def filter_csv(src: Path, dst: Path, keep) -> int:
    dst.parent.mkdir(parents=True, exist_ok=True)
    text = src.read_text("utf-8")
    reader = csv.DictReader(io.StringIO(text))
    rows = [r for r in reader if keep(r)]
    with dst.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=reader.fieldnames, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", default=str(ROOT.parent / "shared" / "data"))
    args = parser.parse_args()
    src = Path(args.source)
    if not (src / "epic-sounds").exists():
        print(f"staged files not found under {src}; nothing to do")
        return 0
    out = ROOT / "data" / "annotations"
    lines = [l for l in (ROOT / "data" / "clips.csv").read_text("utf-8").splitlines() if not l.startswith("#")]
    manifest = list(csv.DictReader(lines))
    epic = {r["video_id"] for r in manifest if r["dataset"] == "epic_sounds"}
    hd = {r["video_id"] for r in manifest if r["dataset"] == "hd_epic"}
    counts = {}

    es, ek, he = src / "epic-sounds", src / "epic-kitchens-100", src / "hd-epic"
    o_es, o_ek, o_he = out / "epic-sounds", out / "epic-kitchens-100", out / "hd-epic"
    by_video = lambda videos: (lambda r: r["video_id"] in videos)  # noqa: E731
    counts["EPIC_Sounds_validation.csv"] = filter_csv(es / "EPIC_Sounds_validation.csv", o_es / "EPIC_Sounds_validation.csv", by_video(epic))
    counts["sound_events_not_categorised.csv"] = filter_csv(es / "sound_events_not_categorised.csv", o_es / "sound_events_not_categorised.csv", by_video(epic))
    counts["EPIC_100_validation.csv"] = filter_csv(ek / "EPIC_100_validation.csv", o_ek / "EPIC_100_validation.csv", by_video(epic))
    for name in ("EPIC_100_noun_classes.csv", "EPIC_100_verb_classes.csv", "EPIC_100_video_info.csv"):
        o_ek.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ek / name, o_ek / name)
    # P02_133 is a train video: its narrations come from the seed-clip reconstruction (see SOURCE.md there),
    # 17 of 34 labelled, in the EPIC-KITCHENS-100 columns plus label_source.
    seed = src / "seed_clips" / "P02_133_full_video_epic100_narrations.csv"
    if "P02_133" in epic and seed.exists():
        columns = ["narration_id", "participant_id", "video_id", "narration_timestamp", "start_timestamp", "stop_timestamp",
                   "start_frame", "stop_frame", "narration", "verb", "verb_class", "noun", "noun_class", "all_nouns",
                   "all_noun_classes", "label_source"]
        rows = list(csv.DictReader(seed.open()))
        with (o_ek / "EPIC_100_train_P02_133_partial.csv").open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
            writer.writeheader()
            for r in rows:
                for c in ("verb_class", "noun_class"):  # the seed file wrote classes as floats ("0.0")
                    if r.get(c):
                        r[c] = str(int(float(r[c])))
                writer.writerow(r)
        counts["EPIC_100_train_P02_133_partial.csv"] = len(rows)
        shutil.copyfile(src / "seed_clips" / "README.md", o_ek / "P02_133_SEED_CLIPS_README.md")

    for activity_file in sorted((he / "high-level" / "activities").glob("P*_recipe_timestamps.csv")):
        n = filter_csv(activity_file, o_he / "high-level" / "activities" / activity_file.name, by_video(hd))
        if n == 0:
            (o_he / "high-level" / "activities" / activity_file.name).unlink()
        else:
            counts[activity_file.name] = n
    recipes = json.loads((he / "high-level" / "complete_recipes.json").read_text("utf-8"))
    kept = {k: v for k, v in recipes.items() if any(set(c["videos"]) & hd for c in v["captures"])}
    (o_he / "high-level" / "complete_recipes.json").write_text(json.dumps(kept, indent=1), "utf-8")
    counts["complete_recipes.json (recipes)"] = len(kept)
    assoc = json.loads((he / "scene-and-object-movements" / "assoc_info.json").read_text("utf-8"))
    kept_assoc = {v: a for v, a in assoc.items() if v in hd}
    (o_he / "scene-and-object-movements").mkdir(parents=True, exist_ok=True)
    (o_he / "scene-and-object-movements" / "assoc_info.json").write_text(json.dumps(kept_assoc, indent=1), "utf-8")
    counts["assoc_info.json (videos)"] = len(kept_assoc)
    for rel in ("narrations-and-action-segments/HD_EPIC_noun_classes.csv", "narrations-and-action-segments/HD_EPIC_verb_classes.csv",
                "youtube-links/HD_EPIC_YouTube_URLs.csv"):
        (o_he / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(he / rel, o_he / rel)
    for folder, o in ((es, o_es), (ek, o_ek), (he, o_he)):
        shutil.copyfile(folder / "SOURCE.md", o / "SOURCE.md")
    for name, n in counts.items():
        print(f"{name}: {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
