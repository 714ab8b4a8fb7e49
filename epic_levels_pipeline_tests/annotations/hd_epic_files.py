"""Small HD-EPIC sound and narration files in the documented schema (the staged files lack them).

``write_streams`` writes, under an annotations root, ``hd-epic/audio-annotations/HD_EPIC_Sounds.csv`` (and
``.pkl`` on request) and ``hd-epic/narrations-and-action-segments/HD_EPIC_Narrations.pkl`` — the columns of
the ``hd-epic/hd-epic-annotations`` README — for given windows of HD-EPIC videos: seeded sequences of
sounds (EPIC-SOUNDS classes and ids) and narrations (HD-EPIC noun and verb class ids, which are
EPIC-KITCHENS-100's for ids below 300 / 97), some with two main actions and some with none.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pandas as pd

from epic_levels_pipeline.annotations.clips import Clip

ROOT = Path(__file__).resolve().parents[2]
SOUNDS_DIR = Path("hd-epic") / "audio-annotations"
NARRATIONS_DIR = Path("hd-epic") / "narrations-and-action-segments"

# (class, EPIC-SOUNDS class id): HD-EPIC's README example is "rustle", 4 — the EPIC-SOUNDS id.
SOUND_CLASSES = [("rustle", 4), ("open / close", 3), ("water", 5), ("cut / chop", 2), ("metal-only collision", 0),
                 ("plastic-only collision", 6), ("footstep", 7), ("stir / mix / whisk", 8), ("slide object", 9),
                 ("beep", 15), ("click", 16), ("pour", 19)]
VERBS = [(0, "take"), (1, "put"), (2, "wash"), (3, "open"), (4, "close"), (7, "cut"), (9, "pour"), (10, "mix"),
         (98, "reach")]  # 98 is one of HD-EPIC's own verb classes
NOUNS = [(0, "tap"), (1, "spoon"), (2, "plate"), (3, "upper cupboard"), (4, "knife"), (5, "pan"), (6, "lid"),
         (7, "bowl"), (8, "drawer"), (10, "glass"), (13, "cup"), (16, "onion"), (300, "hook")]  # 300: HD-EPIC's own


def timestamp(seconds: float) -> str:
    """``HH:mm:ss.SSS``, the documented form of HD-EPIC sound times."""
    ms = int(round(seconds * 1000))
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}.{ms:03d}"


def sound_rows(clips: list[Clip], seed: int = 0) -> pd.DataFrame:
    rng = random.Random(f"sounds:{seed}")
    rows = []
    for clip in clips:
        t = clip.start_s + rng.uniform(0.2, 1.0)
        while t < clip.end_s - 1.0:
            cls, cid = rng.choice(SOUND_CLASSES)
            stop = t + rng.uniform(0.4, 2.0)
            rows.append({"participant_id": clip.video_id[:3], "video_id": clip.video_id,
                         "start_timestamp": timestamp(t), "stop_timestamp": timestamp(stop),
                         "start_sample": int(round(t * 48_000)), "stop_sample": int(round(stop * 48_000)),
                         "class": cls, "class_id": cid})
            t = stop + rng.uniform(0.3, 2.5)
    return pd.DataFrame(rows)


def narration_rows(clips: list[Clip], seed: int = 0) -> pd.DataFrame:
    rng = random.Random(f"narrations:{seed}")
    rows = []
    for clip in clips:
        t, n = clip.start_s + rng.uniform(0.5, 1.5), 0
        while t < clip.end_s - 1.5:
            n += 1
            stop = t + rng.uniform(1.2, 3.5)
            k = rng.choices([0, 1, 2], weights=[1, 16, 3])[0]
            actions = [(rng.choice(VERBS), rng.choice(NOUNS)) for _ in range(k)]
            nouns = [noun for _, noun in actions] or [rng.choice(NOUNS)]
            words = " and ".join(f"{v[1]} the {o[1]}" for v, o in actions) or f"look at the {nouns[0][1]}"
            rows.append({
                "unique_narration_id": f"{clip.video_id}-{int(clip.start_s)}-{n}", "participant_id": clip.video_id[:3],
                "video_id": clip.video_id, "narration": f"{words[0].upper()}{words[1:]} with the left hand.",
                "start_timestamp": round(t, 2), "end_timestamp": round(stop, 2),
                "nouns": [o[1] for o in nouns], "verbs": [v[1] for v, _ in actions],
                "pairs": [(v[1], o[1]) for v, o in actions], "main_actions": [(v[1], o[1]) for v, o in actions],
                "verb_classes": [v[0] for v, _ in actions], "noun_classes": [o[0] for o in nouns],
                "pair_classes": [(v[0], o[0]) for v, o in actions],
                "main_action_classes": [(v[0], o[0]) for v, o in actions],
                "hands": ["left hand"], "narration_timestamp": round(t + 0.5, 2),
            })
            t = stop + rng.uniform(0.2, 1.5)
    return pd.DataFrame(rows)


def write_streams(root: Path, clips: list[Clip], seed: int = 0, sounds_pickle: bool = False) -> tuple[Path, Path]:
    """Write the HD-EPIC sound CSV (and its pickle twin when asked) and the narration pickle under ``root``."""
    (root / SOUNDS_DIR).mkdir(parents=True, exist_ok=True)
    (root / NARRATIONS_DIR).mkdir(parents=True, exist_ok=True)
    sounds = sound_rows(clips, seed)
    sounds_path = root / SOUNDS_DIR / "HD_EPIC_Sounds.csv"
    sounds.to_csv(sounds_path, index=False)
    if sounds_pickle:
        sounds.to_pickle(root / SOUNDS_DIR / "HD_EPIC_Sounds.pkl")
    narrations_path = root / NARRATIONS_DIR / "HD_EPIC_Narrations.pkl"
    narration_rows(clips, seed).to_pickle(narrations_path)
    return sounds_path, narrations_path


def bundled_hd_epic_clips() -> list[Clip]:
    from epic_levels_pipeline.annotations.clip_keys import read_manifest

    return [c for c in read_manifest(ROOT / "data" / "clips.csv") if c.dataset == "hd_epic"]


def annotations_root(tmp: Path, clips: list[Clip] | None = None, seed: int = 0, sounds_pickle: bool = False) -> Path:
    """A copy of the bundled annotations with HD-EPIC sounds and narrations for ``clips`` (default: the
    bundled HD-EPIC windows) added."""
    root = tmp / "annotations"
    shutil.copytree(ROOT / "data" / "annotations", root)
    write_streams(root, bundled_hd_epic_clips() if clips is None else clips, seed, sounds_pickle)
    return root
