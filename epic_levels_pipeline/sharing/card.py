"""The export's dataset card: ``README.md`` with the YAML front matter ``datasets.load_dataset`` reads
(licence, one config per answer format with a split per dataset, features) and a body a person reads (counts per
level × subtype × format, how the keys were computed, what to cite)."""

from __future__ import annotations

import pandas as pd
import yaml

from ..formats.registry import item_formats

# The Hugging Face feature of each export column (``datasets`` YAML form).
FEATURES = [
    ("item_id", "string"), ("question_id", "string"), ("dataset", "string"), ("clip_id", "string"),
    ("video_id", "string"), ("start_s", "float64"), ("end_s", "float64"), ("level", "string"),
    ("subtype", "string"), ("strategy", "string"), ("format", "string"), ("base_format", "string"),
    ("answer_type", "string"), ("prompt", "string"), ("options", ["string"]), ("answer", "string"),
    ("expected", "string"), ("chance", "float64"), ("conditions", ["string"]),
]

CITATIONS = """\
- EPIC-KITCHENS-100: Dima Damen, Hazel Doughty, Giovanni Maria Farinella, Antonino Furnari, Evangelos Kazakos,
  Jian Ma, Davide Moltisanti, Jonathan Munro, Toby Perrett, Will Price, Michael Wray. "Rescaling Egocentric
  Vision: Collection, Pipeline and Challenges for EPIC-KITCHENS-100". International Journal of Computer Vision
  (IJCV), 2022.
- EPIC-SOUNDS: Jaesung Huh, Jacob Chalk, Evangelos Kazakos, Dima Damen, Andrew Zisserman. "EPIC-SOUNDS: A
  Large-Scale Dataset of Actions that Sound". IEEE International Conference on Acoustics, Speech and Signal
  Processing (ICASSP), 2023; extended in IEEE Transactions on Pattern Analysis and Machine Intelligence (TPAMI), 2025.
- HD-EPIC: Toby Perrett, Ahmad Darkhalil, Saptarshi Sinha, et al. "HD-EPIC: A Highly-Detailed Egocentric Video
  Dataset". IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR), 2025 (arXiv 2502.04144).
"""

KEYS = """\
Every question is built from the annotations of one clip window, never written by hand:

- **Levels by evidence.** Each subtype declares the evidence its answer needs — `presence` (L1: what occurs
  anywhere in the window), `moment` (L2: one cued moment), `sequence` (L3: two or more moments related),
  `beyond` (L4: task knowledge outside the window); the level is derived from that scope and rechecked from
  each question's provenance.
- **Keys computed by a program.** One solver per subtype reads only the clip's annotations and a candidate set
  and says which candidates are true; a question is kept only when exactly one is, and it is the generator's
  intended answer.
- **Distractors from named strategies** (`strategy`: `absent_from_clip`, `same_clip_other_moments`,
  `shares_objects`, `same_recipe_other_steps`, `other_counts`), drawn so that a text-only model that knows
  what is common gains nothing.
- **Five formats per base question** (`format`): `yes_no`, `multiple_choice`, `statements` (select every true
  one), `open` — or `option_judgement` (each option judged true/false) when the question cannot stand without
  its options — and `open_with_reason` (the open or option-judgement item with a one-sentence reason).
  `chance` is the probability of a right answer by guessing among what the item lists without the clip
  (1/2, 1/n, 1/(2^k − 1), 0 for open, 1/k for option judgement: exactly one of its k options is true, so
  marking one option true at random is right 1 time in k).
- **`prompt`** is exactly the text the pipeline sends a model; **`answer`** is a reply in the prompt's stated
  form that the scoring rules score correct, and **`expected`** its machine form. Replies are scored by rules
  first (the format's parser), by an LLM judge only for open replies the rules cannot resolve.
- **`conditions`**: the conditions an item is asked under — `clip` (the window's video with its audio),
  `no_clip` (the prompt alone) and, where the clip's audio is annotated (EPIC-SOUNDS clips, HD-EPIC clips with
  HD-EPIC Sounds rows), `silenced` (the video with digital silence).
"""


def _front_matter(configs: dict[str, dict[str, str]], by_config: dict[str, dict[str, int]],
                  sizes: dict[str, dict[str, int]]) -> str:
    def features() -> list[dict]:  # a fresh list per config: no YAML anchors in the card
        return [{"name": n, "list": t[0]} if isinstance(t, list) else {"name": n, "dtype": t} for n, t in FEATURES]

    meta = {
        "license": "cc-by-nc-4.0",
        "language": ["en"],
        "pretty_name": "epic-levels: evidence-levelled video and audio questions on egocentric kitchens",
        "task_categories": ["visual-question-answering", "video-text-to-text"],
        "tags": ["egocentric", "video", "audio", "kitchens", "EPIC-KITCHENS", "EPIC-SOUNDS", "HD-EPIC"],
        "configs": [{"config_name": fmt, **({"default": True} if fmt == "multiple_choice" else {}),
                     "data_files": [{"split": d, "path": p} for d, p in splits.items()]}
                    for fmt, splits in configs.items()],
        "dataset_info": [{"config_name": fmt, "features": features(),
                          "splits": [{"name": d, "num_bytes": sizes[fmt][d], "num_examples": by_config[fmt][d]}
                                     for d in splits]}
                         for fmt, splits in configs.items()],
    }
    return "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=120) + "---\n"


def counts_table(rows: pd.DataFrame) -> str:
    """Items per level × subtype (rows) and format (columns), as a Markdown table."""
    table = rows.groupby(["level", "subtype", "format"]).size().unstack("format", fill_value=0)
    formats = [f for f in item_formats() if f in table.columns]
    lines = ["| level | subtype | " + " | ".join(formats) + " |", "|---|---|" + "---|" * len(formats)]
    for (level, subtype), counts in table[formats].sort_index().iterrows():
        lines.append(f"| {level} | `{subtype}` | " + " | ".join(str(int(counts[f])) for f in formats) + " |")
    total = table[formats].sum()
    lines.append("| **all** | | " + " | ".join(f"**{int(total[f])}**" for f in formats) + " |")
    return "\n".join(lines)


def dataset_card(rows: pd.DataFrame, configs: dict[str, dict[str, str]], by_config: dict[str, dict[str, int]],
                 sizes: dict[str, dict[str, int]]) -> str:
    """The whole ``README.md`` of an export (no timestamps: the same rows give the same text); ``sizes`` are the
    splits' Arrow sizes in bytes (``dataset_info``'s ``num_bytes``)."""
    n_clips = rows["clip_id"].nunique()
    n_questions = rows["question_id"].nunique()
    splits = "\n".join(f"| `{fmt}` | " + ", ".join(f"`{d}` ({by_config[fmt][d]})" for d in s) + " |"
                       for fmt, s in configs.items())
    return f"""{_front_matter(configs, by_config, sizes)}
# epic-levels

A video-and-audio question-answering benchmark on egocentric kitchen clips, generated from public annotations
(HD-EPIC; EPIC-SOUNDS with EPIC-KITCHENS-100 narrations): {len(rows)} items — {n_questions} base questions in
their answer formats — over {n_clips} clips.

```python
from datasets import load_dataset
items = load_dataset("path/to/this/folder", "multiple_choice")  # one config per format, one split per dataset
```

The same rows are in `jsonl/<format>/<dataset>.jsonl`. `clips.csv` lists every clip (`dataset`, `video_id`,
`start`, `end` in seconds from the start of the source video): **the videos are not included** — they stay under
their own licence; get them from the datasets' own pages and cut the windows yourself.

## Configs and splits

| config (format) | splits (dataset, rows) |
|---|---|
{splits}

## How the keys were computed

{KEYS}
## Items per level × subtype × format

{counts_table(rows)}

## Licence

The questions are derived from annotations published under the Creative Commons Attribution-NonCommercial 4.0
International licence (CC BY-NC 4.0, https://creativecommons.org/licenses/by-nc/4.0/) and are released under the
same licence: non-commercial use only, with attribution to the source datasets below.

## Citation

Cite the source datasets:

{CITATIONS}"""
