"""The report's result sections: the main table (chance-corrected accuracy by level × format), the
leaderboard, the plots and the paired comparisons."""

from __future__ import annotations

import pandas as pd

from .document import (CONDITION_ORDER, DASH, FEW, FORMAT_ORDER, SECTION_LEADERBOARD, SECTION_MAIN, SECTION_PAIRED,
                       SECTION_PLOTS, Document, _format_name, _frame, _has, _label, _level_name, _missing, _ordered,
                       _pool, _slug, fmt, fmt_p, interval_cell)
from .plots import bar_panels, grouped_bars


# -- main table -----------------------------------------------------------------------------------------

MAIN_COLUMNS = ["responder", "model", "condition", "level", "format", "n", "n_clips", "accuracy", "chance",
                "chance_corrected", "ci_low", "ci_high", "accuracy_strict", "chance_corrected_strict",
                "n_undecided", "n_judge", "n_unparsed"]


def main_table(scores: pd.DataFrame | None) -> pd.DataFrame:
    """Long form: one row per responder/model × condition × level × format (``'*'`` = pooled), pooled over
    dataset and subtype. Columns missing in ``scores`` come out NaN."""
    s = _frame(scores)
    needed = {"responder", "model", "condition", "level", "format"}
    if not _has(s, needed):
        return pd.DataFrame(columns=MAIN_COLUMNS)
    s = _pool(_pool(s, "dataset"), "subtype")
    out = s.reindex(columns=MAIN_COLUMNS).copy()
    keys = ["responder", "model", "condition", "level", "format"]
    out = out.drop_duplicates(keys)
    cond_rank = {c: i for i, c in enumerate(CONDITION_ORDER)}
    fmt_rank = {f: i for i, f in enumerate(FORMAT_ORDER)}
    out["_c"] = out["condition"].map(lambda c: cond_rank.get(c, len(cond_rank)))
    out["_l"] = out["level"].map(lambda lv: (1, "") if lv == "*" else (0, str(lv)))
    out["_f"] = out["format"].map(lambda f: len(fmt_rank) + 1 if f == "*" else fmt_rank.get(f, len(fmt_rank)))
    out = out.sort_values(["responder", "model", "_c", "condition", "_l", "_f", "format"], kind="stable")
    return out.drop(columns=["_c", "_l", "_f"]).reset_index(drop=True)


def _cell(row):
    """A score cell: the chance-corrected value, its interval and n below it, and the strict value where open
    replies stayed undecided; faded below :data:`.document.FEW` items."""
    n = 0 if _missing(row["n"]) else int(row["n"])
    if n == 0:
        return f"{DASH} n=0"
    extra = ()
    undecided = row.get("n_undecided")
    if not _missing(undecided) and int(undecided) > 0:
        strict = row.get("chance_corrected_strict")
        extra = (f"strict {fmt(strict)}, {int(undecided)} undecided",) if not _missing(strict) else \
            (f"{int(undecided)} undecided",)
    return interval_cell(row["chance_corrected"], row["ci_low"], row["ci_high"], n, extra)


def _main_section(doc: Document, table: pd.DataFrame, scores: pd.DataFrame) -> None:
    doc.heading(2, SECTION_MAIN)
    doc.notes([
        "Each cell: chance-corrected accuracy `(acc − chance)/(1 − chance)`, below it its 95 % bootstrap interval "
        "(resampled by clip) and n (decided verdicts). 0 = chance, 1 = perfect, below 0 = worse than chance. "
        f"Cells of fewer than {FEW} items are faded and starred.",
        "Rows are condition × level; `all levels` / `all formats` pool every level / format. Datasets and "
        "subtypes are pooled.",
        "`strict` (where a group has undecided rows): undecided open replies counted as wrong, a lower bound; the "
        "first value leaves them out, which favours guessers.",
    ])
    if not len(table):
        doc.empty("The scores table is empty or missing: there is no main table.")
        return
    if "chance_corrected_strict" not in scores.columns:
        doc.para("This scores table has no strict columns (materialized before they existed): undecided rows "
                 "are only counted, not scored strictly.", "note")
    for (responder, model), g in table.groupby(["responder", "model"], sort=False):
        doc.heading(3, _label(responder, model))
        formats = _ordered(g["format"], FORMAT_ORDER)
        rows = []
        for condition in _ordered(g["condition"], CONDITION_ORDER):
            gc = g[g["condition"] == condition]
            for level in _ordered(gc["level"], ()):
                gl = gc[gc["level"] == level].set_index("format")
                cells = {"condition": condition, "level": _level_name(level)}
                for f in formats:
                    cells[_format_name(f)] = _cell(gl.loc[f]) if f in gl.index else DASH
                rows.append(cells)
        doc.table(pd.DataFrame(rows), text_columns=2)
        clips = g["n_clips"].dropna()
        if len(clips) and (clips == 1).any():
            doc.para("Groups from a single clip have row-resampled intervals (no clip variation to resample).",
                     "note")


# -- leaderboard ----------------------------------------------------------------------------------------

def leaderboard_table(table: pd.DataFrame) -> pd.DataFrame:
    """From the main table's long form: all formats pooled (``format == '*'``), one row per responder/model ×
    condition × level."""
    if not len(table) or not (table["format"] == "*").any():
        return table.iloc[0:0]
    return table[table["format"] == "*"].reset_index(drop=True)


def compact_leaderboard(scores: pd.DataFrame | None, condition: str = "clip", baseline: str = "no_clip") -> pd.DataFrame:
    """One row per responder × model, best first: chance-corrected accuracy over all formats under ``condition``
    for all levels (``all``, with its n) and each level, and for all levels under ``baseline`` (what the clip
    adds is the difference). Datasets and subtypes pooled; a level a responder has no items at is NaN."""
    board = leaderboard_table(main_table(scores))
    columns = ["responder", "model", "all", "n", baseline]
    if not len(board) or condition not in set(board["condition"]):
        return pd.DataFrame(columns=columns)
    levels = [lv for lv in _ordered(board["level"], ()) if lv != "*"]
    rows = []
    for (responder, model), g in board.groupby(["responder", "model"], sort=False):
        at = g[g["condition"] == condition].set_index("level")
        base = g[g["condition"] == baseline].set_index("level")
        if "*" not in at.index:
            continue
        row = {"responder": responder, "model": model, "all": at.loc["*", "chance_corrected"],
               "n": int(at.loc["*", "n"])}
        row.update({lv: at.loc[lv, "chance_corrected"] if lv in at.index else float("nan") for lv in levels})
        row[baseline] = base.loc["*", "chance_corrected"] if "*" in base.index else float("nan")
        rows.append(row)
    out = pd.DataFrame(rows, columns=["responder", "model", "all", "n", *levels, baseline])
    return out.sort_values(["all", "responder", "model"], ascending=[False, True, True], kind="stable",
                           na_position="last").reset_index(drop=True)


MODEL_PAIR_COLUMNS = ["a", "b", "condition", "level", "format", "n_pairs", "diff", "diff_ci_low", "diff_ci_high",
                      "mcnemar_p", "accuracy_a", "accuracy_b"]


def model_pairs(paired: pd.DataFrame | None, level: str | None = "*", fmt_name: str | None = "*") -> pd.DataFrame:
    """The models compared with each other (``paired_comparisons`` rows of kind ``model``) at ``level`` and
    format ``fmt_name`` (``'*'`` = pooled; None = every one), ordered by condition (clip first), pair, level and
    format (``'*'`` last); every column of ``paired`` (``format`` ``'*'`` where the table has none)."""
    p = _frame(paired)
    if not _has(p, set(MODEL_PAIR_COLUMNS) - {"format"} | {"kind"}):
        return pd.DataFrame(columns=MODEL_PAIR_COLUMNS)
    p = p[p["kind"] == "model"]
    if "format" not in p.columns:
        p = p.assign(format="*")
    if level is not None:
        p = p[p["level"] == level]
    if fmt_name is not None:
        p = p[p["format"] == fmt_name]
    rank = {c: i for i, c in enumerate(CONDITION_ORDER)}
    fmt_rank = {f: i for i, f in enumerate(FORMAT_ORDER)}
    p = p.assign(_c=p["condition"].map(lambda c: rank.get(c, len(rank))), _l=p["level"] == "*",
                 _f=p["format"].map(lambda f: len(fmt_rank) + 1 if f == "*" else fmt_rank.get(f, len(fmt_rank))))
    p = p.sort_values(["_c", "condition", "a", "b", "_l", "level", "_f", "format"], kind="stable")
    return p.drop(columns=["_c", "_l", "_f"]).reset_index(drop=True)


def _pair_cell(r):
    """A model pair's cell: diff (A − B), its interval, n pairs and the clip-clustered McNemar p."""
    return interval_cell(r["diff"], r["diff_ci_low"], r["diff_ci_high"], r["n_pairs"],
                         extra=(f"p={fmt_p(r['mcnemar_p'])}",))


def _model_pairs_table(doc: Document, paired: pd.DataFrame | None) -> None:
    """Under the leaderboard: each pair of models per condition, a column per level (all formats pooled)."""
    pairs = model_pairs(paired, level=None)
    if not len(pairs):
        return
    levels = _ordered(pairs["level"], ())
    rows = []
    for (condition, a, b), g in pairs.groupby(["condition", "a", "b"], sort=False):
        at = g.set_index("level")
        cells = {"A vs B": f"{a} vs {b}", "condition": condition}
        for level in levels:
            cells[_level_name(level)] = _pair_cell(at.loc[level]) if level in at.index else DASH
        rows.append(cells)
    doc.para("Models compared on the same items (all formats): each cell is `diff` = accuracy of A − accuracy of B "
             "on the items both answered, its 95 % interval (resampled by clip), n pairs and the clip-clustered "
             "McNemar p; per format under Paired comparisons:")
    doc.table(pd.DataFrame(rows), text_columns=2)


def _leaderboard_section(doc: Document, table: pd.DataFrame, paired: pd.DataFrame | None = None) -> None:
    doc.heading(2, SECTION_LEADERBOARD)
    doc.notes(["Chance-corrected accuracy over all formats, its 95 % bootstrap interval (resampled by clip) and n "
               "(decided verdicts), per responder / model (the models by their name, the offline references "
               "`oracle`, `chance`, `presence`, `blind` as `offline`) × level, under each condition.",
               "The figure shows the same values, one panel per condition; whiskers are the intervals; bars of "
               f"fewer than {FEW} items are faded. Per-format detail follows in the main table.",
               "Where two models answered the same items, a table compares them pair by pair (the offline "
               "references take no part; replies imported with `import-replies` are `external/NAME`)."])
    board = leaderboard_table(table)
    if not len(board):
        doc.empty("No scores pooled over formats: no leaderboard.")
        return
    labels = {key: _label(*key) for key in board[["responder", "model"]].drop_duplicates().itertuples(index=False)}
    levels = _ordered(board["level"], ())
    conditions = _ordered(board["condition"], CONDITION_ORDER)
    # best first by the clip condition's all-levels value; the clip condition first, then the others
    order = board[(board["condition"] == CONDITION_ORDER[0]) & (board["level"] == "*")] \
        .sort_values("chance_corrected", ascending=False, kind="stable")
    ranked = list(dict.fromkeys([*zip(order["responder"], order["model"]), *labels]))
    for title, chosen in ((f"Under `{CONDITION_ORDER[0]}`, best first", conditions[:1]),
                          ("Without the clip, and with its sound silenced", conditions[1:])):
        rows = []
        for responder, model in ranked:
            g = board[(board["responder"] == responder) & (board["model"] == model)]
            for condition in chosen:
                gc = g[g["condition"] == condition].set_index("level")
                if not len(gc):
                    continue
                cells = {"responder / model": labels[(responder, model)], "condition": condition}
                for level in levels:
                    cells[_level_name(level)] = _cell(gc.loc[level]) if level in gc.index else DASH
                rows.append(cells)
        if rows:
            doc.para(title + ":")
            doc.table(pd.DataFrame(rows), text_columns=2)
    series = list(labels.values())
    panels = []
    for condition in conditions:
        gc = board[board["condition"] == condition]
        values = {(_level_name(r.level), labels[(r.responder, r.model)]): (r.chance_corrected, r.ci_low, r.ci_high, r.n)
                  for r in gc.itertuples(index=False)}
        panels.append((condition, values))
    png = bar_panels(panels, [_level_name(lv) for lv in levels], series, "chance-corrected accuracy")
    doc.image("leaderboard.png", png, "Leaderboard: chance-corrected accuracy by level per responder/model, "
                                      "under clip, no_clip and silenced")
    _model_pairs_table(doc, paired)


def _plots_section(doc: Document, table: pd.DataFrame) -> None:
    doc.heading(2, SECTION_PLOTS)
    doc.notes(["(a) chance-corrected accuracy by level and format under `clip`, whiskers = 95 % clip-bootstrap "
               "interval; 0 is chance.",
               "(b) the same pooled over levels, per format (and all formats), under clip, no_clip and silenced: "
               "no_clip far above 0 means the question is answerable without the clip; clip above silenced means "
               "the sound helped."])
    if not len(table):
        doc.empty("No scores: no plots.")
        return
    for (responder, model), g in table.groupby(["responder", "model"], sort=False):
        label = _label(responder, model)
        doc.heading(3, label)
        slug = _slug(f"{responder}-{model}")
        clip = g[(g["condition"] == "clip") & (g["format"] != "*")]
        if len(clip):
            levels = _ordered(clip["level"], ())
            formats = _ordered(clip["format"], FORMAT_ORDER)
            values = {(_level_name(r.level), r.format): (r.chance_corrected, r.ci_low, r.ci_high, r.n)
                      for r in clip.itertuples(index=False)}
            png = grouped_bars([_level_name(lv) for lv in levels], formats, values,
                               f"(a) {label}: chance-corrected accuracy under clip", "chance-corrected accuracy")
            doc.image(f"a_{slug}.png", png, f"(a) {label}: chance-corrected accuracy by level and format under clip")
        else:
            doc.empty(f"(a) {label}: no scores under `clip`.")
        pooled = g[g["level"] == "*"]
        if len(pooled):
            formats = _ordered(pooled["format"], FORMAT_ORDER)
            conditions = _ordered(pooled["condition"], CONDITION_ORDER)
            values = {(_format_name(r.format), r.condition): (r.chance_corrected, r.ci_low, r.ci_high, r.n)
                      for r in pooled.itertuples(index=False)}
            png = grouped_bars([_format_name(f) for f in formats], conditions, values,
                               f"(b) {label}: clip vs no_clip vs silenced (all levels)", "chance-corrected accuracy")
            doc.image(f"b_{slug}.png", png, f"(b) {label}: clip vs no_clip vs silenced per format")
        else:
            doc.empty(f"(b) {label}: no scores pooled over levels.")


# -- paired comparisons ---------------------------------------------------------------------------------

def _pair_rows(frame: pd.DataFrame, with_condition: bool, with_format: bool = False) -> pd.DataFrame:
    """One row per pair: its condition (or level; or condition and format, the pair named above the table)."""
    rows = []
    for r in frame.itertuples(index=False):
        row = {}
        if with_condition:
            row["condition"] = r.condition
        else:
            row["level"] = _level_name(r.level)
        if with_format:
            row["format"] = _format_name(r.format)
        else:
            row["A vs B"] = f"{r.a} vs {r.b}"
        row.update({
            "pairs": fmt(r.n_pairs), "both right": fmt(r.both),
            "only A": fmt(r.only_a), "only B": fmt(r.only_b), "neither": fmt(r.neither),
            "acc A": fmt(r.accuracy_a), "acc B": fmt(r.accuracy_b),
            "diff A−B [95 %]": interval_cell(r.diff, r.diff_ci_low, r.diff_ci_high),
            "McNemar p (clip-clustered)": fmt_p(r.mcnemar_p),
        })
        rows.append(row)
    return pd.DataFrame(rows)


def _paired_section(doc: Document, paired: pd.DataFrame) -> None:
    doc.heading(2, SECTION_PAIRED)
    doc.notes([
        "Pairs are the same item under two conditions (clip vs no_clip, clip vs silenced), the same base "
        "question in two formats (within one condition), or the same item answered by two models (within one "
        "condition); only pairs decided on both sides count.",
        "`diff` = accuracy A − accuracy B on those pairs, with a 95 % bootstrap interval resampled by clip; "
        "`McNemar p (clip-clustered)` is an exact two-sided sign-flip test over clips on the discordant pairs "
        "(only A / only B right): each clip's net lean counts once, so many questions from one clip cannot "
        "make a difference look surer than its clips allow (with one pair per clip it is the exact McNemar "
        "test; the smallest p that K leaning clips can give is 2^(1−K)).",
        "p-values are not adjusted for the number of comparisons: read them as screening, not as proof.",
    ])
    needed = {"responder", "model", "level", "kind", "condition", "a", "b", "n_pairs", "both", "only_a", "only_b",
              "neither", "mcnemar_p", "diff", "diff_ci_low", "diff_ci_high", "accuracy_a", "accuracy_b"}
    if not _has(paired, needed):
        doc.empty("The paired_comparisons table is empty or missing.")
        return
    level_rank = lambda s: s.map(lambda lv: (1, "") if lv == "*" else (0, str(lv)))  # noqa: E731
    cond = paired[paired["kind"] == "condition"]
    doc.heading(3, "Conditions: clip vs no_clip, clip vs silenced")
    if len(cond):
        for (responder, model), g in cond.groupby(["responder", "model"], sort=True):
            g = g.assign(_l=level_rank(g["level"])).sort_values(["_l", "b"], kind="stable")
            doc.para(_label(responder, model) + ":")
            doc.table(_pair_rows(g, with_condition=False), text_columns=2)
    else:
        doc.empty("No condition pairs (no item answered under clip and another condition).")
    formats = paired[(paired["kind"] == "format") & (paired["level"] == "*")]
    doc.heading(3, "Format pairs (all levels)")
    if len(formats):
        cond_rank = {c: i for i, c in enumerate(CONDITION_ORDER)}
        for (responder, model), g in formats.groupby(["responder", "model"], sort=True):
            g = g.assign(_c=g["condition"].map(lambda c: cond_rank.get(c, 99))).sort_values(["_c", "a", "b"],
                                                                                             kind="stable")
            doc.para(_label(responder, model) + ":")
            doc.table(_pair_rows(g, with_condition=True), text_columns=2)
    else:
        doc.empty("No format pairs pooled over levels.")
    models = model_pairs(paired, fmt_name=None)
    doc.heading(3, "Models compared (all levels)")
    if len(models):
        for (a, b), g in models.groupby(["a", "b"], sort=False):
            doc.para(f"A = {a}, B = {b}:")
            doc.table(_pair_rows(g, with_condition=True, with_format=True), text_columns=2)
    else:
        doc.empty("No model pairs (no two models answered the same items).")
