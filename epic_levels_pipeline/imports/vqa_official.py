"""HD-EPIC's VQA benchmark scored by its authors' protocol, beside the project's formats: ``official_mcq`` replies read
by the authors' letter rule (failed calls wrong), accuracy per question type, categories as unweighted means of
types, the headline as the mean of categories, a pooled figure and lmms-eval's reading beside; intervals resample
videos (docs/design/hd-epic-vqa-import.md)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..formats.parsing import letter_as_written, letter_upper_cased
from ..scoring.metrics.stats import cluster_draws
from .vqa_source import CATEGORIES, category_of

from .vqa_tags import FORMAT
#: The benchmark's 30 question types (prototype file names) by category, as the authors publish them.
OFFICIAL_TYPES = {
    "recipe": ("recipe_recipe_recognition", "recipe_multi_recipe_recognition", "recipe_multi_step_localization",
               "recipe_step_localization", "recipe_prep_localization", "recipe_step_recognition",
               "recipe_rough_step_localization", "recipe_following_activity_recognition"),
    "ingredient": ("ingredient_ingredient_retrieval", "ingredient_ingredient_weight", "ingredient_ingredients_order",
                   "ingredient_ingredient_adding_localization", "ingredient_ingredient_recognition",
                   "ingredient_exact_ingredient_recognition"),
    "nutrition": ("nutrition_image_nutrition_estimation", "nutrition_nutrition_change",
                  "nutrition_video_nutrition_estimation"),
    "fine_grained": ("fine_grained_action_recognition", "fine_grained_how_recognition", "fine_grained_why_recognition",
                     "fine_grained_action_localization"),
    "3d_perception": ("3d_perception_fixture_location", "3d_perception_object_location",
                      "3d_perception_object_contents_retrieval", "3d_perception_fixture_interaction_counting"),
    "object_motion": ("object_motion_object_movement_itinerary", "object_motion_object_movement_counting",
                      "object_motion_stationary_object_localization"),
    "gaze": ("gaze_gaze_estimation", "gaze_interaction_anticipation"),
}
KEYS = ["responder", "model", "condition", "prototype"]
COUNTS = ["n", "correct", "n_unreadable", "n_failed", "n_skipped", "correct_lmms", "n_unreadable_lmms"]
PARTIAL_COLUMNS = KEYS + ["clip_key", "chance"] + COUNTS
AGGREGATES = ("type", "category", "headline", "pooled")
SCORE_COLUMNS = ["responder", "model", "condition", "aggregate", "category", "question_type", "n", "correct",
                 "accuracy", "ci_low", "ci_high", "chance", "n_unreadable", "n_failed", "n_skipped", "accuracy_lmms",
                 "n_unreadable_lmms", "n_types", "n_categories", "n_clips", "note"]

# -- per video ---------------------------------------------------------------------------------------------

def official_partials(responses: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """One video's ``official_mcq`` responses reduced to counts per responder × model × condition × question
    type (:data:`PARTIAL_COLUMNS`): asked (``n``, failed calls included), right by the authors' rule and by
    lmms-eval's, unreadable by each, failed, and not asked (``skipped``)."""
    if not len(responses) or "format" not in responses or not len(items):
        return pd.DataFrame(columns=PARTIAL_COLUMNS)
    r = responses[responses["format"] == FORMAT]
    if not len(r):
        return pd.DataFrame(columns=PARTIAL_COLUMNS)
    info = items.drop_duplicates("item_id").set_index("item_id")
    rows = []
    for x in r.itertuples(index=False):
        item = info.loc[x.item_id]
        n_options, expected = len(item["options"]), item["expected"]
        status = str(x.status)
        row = {"responder": x.responder, "model": x.model, "condition": x.condition, "prototype": item["prototype"],
               "clip_key": x.clip_key, "chance": float(item["chance"]), **dict.fromkeys(COUNTS, 0)}
        if status == "skipped":
            row["n_skipped"] = 1
        elif status != "ok":
            row.update(n=1, n_failed=1, n_unreadable=0)
        else:
            authors, lmms = letter_as_written(x.reply, n_options=n_options), letter_upper_cased(x.reply, n_options=n_options)
            row.update(n=1, correct=int(authors.ok and authors.value == expected), n_unreadable=int(not authors.ok),
                       correct_lmms=int(lmms.ok and lmms.value == expected), n_unreadable_lmms=int(not lmms.ok))
        rows.append(row)
    frame = pd.DataFrame(rows)
    out = frame.groupby(KEYS + ["clip_key", "chance"], sort=True)[COUNTS].sum().reset_index()
    return out.astype({c: "int64" for c in COUNTS})[PARTIAL_COLUMNS]


# -- every video -------------------------------------------------------------------------------------------

def _missing_note(categories: list[str]) -> str:
    missing = [c for c in CATEGORIES if c not in categories]
    if not missing:
        return ""
    return (f"mean of {len(categories)} of the benchmark's {len(CATEGORIES)} categories: "
            f"{', '.join(missing)} not imported")


def _type_note(category: str, types: list[str]) -> str:
    known = OFFICIAL_TYPES.get(category, ())
    absent = [t for t in known if t not in types]
    return f"mean of {len(types)} of {len(known)} types ({', '.join(absent)} not imported)" if absent else ""


def _group_rows(p: pd.DataFrame, *, n_boot: int, seed: int) -> list[dict]:
    """The rows of one responder × model × condition (every aggregate)."""
    counted = p[p["n"] > 0]
    types = sorted(counted["prototype"].unique())
    cats = {t: category_of(t) for t in types}
    categories = [c for c in CATEGORIES if c in cats.values()] + sorted(set(cats.values()) - set(CATEGORIES))
    videos = sorted(counted["clip_key"].unique())
    v_index, t_index = {v: i for i, v in enumerate(videos)}, {t: i for i, t in enumerate(types)}
    shape = (len(videos), len(types))
    n_vt, c_vt = np.zeros(shape), np.zeros(shape)
    np.add.at(n_vt, ([v_index[v] for v in counted["clip_key"]], [t_index[t] for t in counted["prototype"]]),
              counted["n"].to_numpy(dtype=float))
    np.add.at(c_vt, ([v_index[v] for v in counted["clip_key"]], [t_index[t] for t in counted["prototype"]]),
              counted["correct"].to_numpy(dtype=float))
    draws = cluster_draws(len(videos), n_boot, seed) if len(videos) else np.zeros((n_boot, 0))
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a resample drawing none of a type's (category's) videos
        boot_type = (draws @ c_vt) / (draws @ n_vt)  # n_boot × types (NaN: none of its videos drawn)
        boot_pool = (draws @ c_vt.sum(axis=1)) / (draws @ n_vt.sum(axis=1))
        cat_cols = {c: [t_index[t] for t in types if cats[t] == c] for c in categories}
        boot_cat = {c: np.nanmean(boot_type[:, cols], axis=1) for c, cols in cat_cols.items()}
        boot_head = (np.nanmean(np.column_stack([boot_cat[c] for c in categories]), axis=1) if categories
                     else np.full(n_boot, np.nan))

    def interval(boot: np.ndarray) -> tuple[float, float]:
        boot = boot[np.isfinite(boot)]
        return (float(np.quantile(boot, 0.025)), float(np.quantile(boot, 0.975))) if len(boot) else (np.nan, np.nan)

    def sums(frame: pd.DataFrame) -> dict:
        s = frame[COUNTS].sum()
        n = int(s["n"])
        return {"n": n, "correct": int(s["correct"]), "accuracy": s["correct"] / n if n else np.nan,
                "chance": float((frame["chance"] * frame["n"]).sum() / n) if n else np.nan,
                "n_unreadable": int(s["n_unreadable"]), "n_failed": int(s["n_failed"]),
                "n_skipped": int(s["n_skipped"]), "accuracy_lmms": s["correct_lmms"] / n if n else np.nan,
                "n_unreadable_lmms": int(s["n_unreadable_lmms"]), "n_clips": int(frame.loc[frame["n"] > 0, "clip_key"].nunique())}

    rows, type_acc, cat_acc, cat_lmms = [], {}, {}, {}
    for t in sorted(p["prototype"].unique()):
        s = sums(p[p["prototype"] == t])
        low, high = interval(boot_type[:, t_index[t]]) if t in t_index else (np.nan, np.nan)
        type_acc[t] = (s["accuracy"], s["accuracy_lmms"])
        rows.append({"aggregate": "type", "category": category_of(t), "question_type": t, **s, "ci_low": low,
                     "ci_high": high, "n_types": 1, "n_categories": 1, "note": ""})
    for c in categories:
        members = [t for t in types if cats[t] == c]
        s = sums(p[p["prototype"].isin(members)])
        cat_acc[c] = float(np.mean([type_acc[t][0] for t in members]))
        cat_lmms[c] = float(np.mean([type_acc[t][1] for t in members]))
        rows.append({"aggregate": "category", "category": c, "question_type": "*", **s, "accuracy": cat_acc[c],
                     "accuracy_lmms": cat_lmms[c], "ci_low": interval(boot_cat[c])[0], "ci_high": interval(boot_cat[c])[1],
                     "n_types": len(members), "n_categories": 1, "note": _type_note(c, members)})
    s = sums(p)
    if categories:
        low, high = interval(boot_head)
        rows.append({"aggregate": "headline", "category": "*", "question_type": "*", **s,
                     "accuracy": float(np.mean(list(cat_acc.values()))), "accuracy_lmms": float(np.mean(list(cat_lmms.values()))),
                     "ci_low": low, "ci_high": high, "n_types": len(types), "n_categories": len(categories),
                     "note": _missing_note(categories)})
    low, high = interval(boot_pool)
    rows.append({"aggregate": "pooled", "category": "*", "question_type": "*", **s, "ci_low": low, "ci_high": high,
                 "n_types": len(types), "n_categories": len(categories),
                 "note": "every question counted once (not a published figure)"})
    return rows


def official_scores(partials: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """``vqa_official_scores`` from every video's :func:`official_partials` (one row per responder ×
    model × condition × aggregate × category × question type; docs/design/hd-epic-vqa-import.md)."""
    if not len(partials):
        return pd.DataFrame(columns=SCORE_COLUMNS)
    out = []
    for (responder, model, condition), p in partials.groupby(["responder", "model", "condition"], sort=True):
        for row in _group_rows(p, n_boot=n_boot, seed=seed):
            out.append({"responder": responder, "model": model, "condition": condition, **row})
    frame = pd.DataFrame(out, columns=SCORE_COLUMNS)
    order = {a: i for i, a in enumerate(AGGREGATES)}
    rank = {c: i for i, c in enumerate(CATEGORIES)}
    frame = frame.assign(_a=frame["aggregate"].map(order), _c=frame["category"].map(lambda c: rank.get(c, len(rank))))
    return frame.sort_values(["responder", "model", "condition", "_a", "_c", "question_type"], kind="stable") \
        .drop(columns=["_a", "_c"]).reset_index(drop=True)
