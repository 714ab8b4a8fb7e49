"""A clip's annotation rows: every row that overlaps its window (``start < end and stop > start``), clip by clip
(:func:`clip_annotations`) or for many clips by one interval join per table (:class:`ClipRowsIndex`), the same
frames either way. A row keeps its unclipped and clipped span; an HD-EPIC clip also gets its recipes' steps
outside the window (``in_window`` False), which L4 questions need."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .clip_keys import DATASETS, Clip, _fmt
from .readers import Annotations


CLIP_ANNOTATION_COLUMNS = [
    "clip_key", "dataset", "video_id", "stream", "row_id", "label", "start_s", "stop_s",
    "start_clipped_s", "stop_clipped_s", "in_window",
    # stream-specific (null where not applicable)
    "description", "sound_class", "class_id", "categorised",
    "narration", "verb", "verb_class", "noun", "noun_class", "all_nouns", "all_noun_classes", "labelled",
    "recipe_id", "recipe_key", "step_id", "step_number",
    "raw_name", "object_name", "association_id",
    "source_file", "source_row",
]


def _video_rows(frame: pd.DataFrame, video_id: str) -> pd.DataFrame:
    """Rows of one video (a plain filter: no index outlives its table)."""
    return frame.loc[frame["video_id"] == video_id]


def _overlap(frame: pd.DataFrame, clip: Clip) -> pd.DataFrame:
    rows = _video_rows(frame, clip.video_id)
    return rows.loc[(rows["start_s"] < clip.end_s) & (rows["stop_s"] > clip.start_s)]


def _finish(rows: pd.DataFrame, clip: Clip, stream: str, row_id: pd.Series, label: pd.Series) -> pd.DataFrame:
    out = rows.copy()
    out["clip_key"] = clip.key
    out["dataset"] = clip.dataset
    out["stream"] = stream
    out["row_id"] = row_id.astype(str).values
    out["label"] = label.values
    out["start_clipped_s"] = out["start_s"].clip(lower=clip.start_s, upper=clip.end_s)
    out["stop_clipped_s"] = out["stop_s"].clip(lower=clip.start_s, upper=clip.end_s)
    if "in_window" not in out.columns:
        out["in_window"] = True
    out["source_row"] = out["source_row"].astype(str)
    return out


def _step_row_ids(steps: pd.DataFrame) -> pd.Series:
    """A recipe step's row id names its span: ``<step_id>@<start>-<stop>``."""
    return pd.Series([f"{sid}@{_fmt(a)}-{_fmt(b)}" for sid, a, b in zip(steps["step_id"], steps["start_s"], steps["stop_s"])],
                     index=steps.index, dtype=object)


def _sound_labels(sounds: pd.DataFrame) -> pd.Series:
    return sounds["sound_class"].fillna("(not categorised) " + sounds["description"])


def _narration_labels(narrations: pd.DataFrame) -> pd.Series:
    return narrations["narration"].fillna("(unlabelled)")


def _empty_rows() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype="object") for c in CLIP_ANNOTATION_COLUMNS})


_INT_COLUMNS = ("class_id", "verb_class", "noun_class", "step_number")
_BOOL_COLUMNS = ("categorised", "labelled")
_LIST_COLUMNS = ("all_nouns", "all_noun_classes")


def _rows_slice(frame: pd.DataFrame, a: int, b: int) -> pd.DataFrame:
    """Rows ``a:b`` of a batch's frame with a fresh range index, as a frame of its own: under pandas'
    Copy-on-Write (its only mode from pandas 3, the version pyproject.toml requires) a derived frame acts as a
    copy, so modifying a clip's rows never changes the batch, and no copy is made up front."""
    part = frame.iloc[a:b]
    part.index = pd.RangeIndex(b - a)
    return part


def _clip_rows(span: tuple[pd.DataFrame, int, int] | None) -> pd.DataFrame:
    """A clip's frame from its span in a batch (:meth:`ClipRowsIndex.spans`); no span, no rows."""
    return _empty_rows() if span is None else _rows_slice(*span)


def _stable_types(out: pd.DataFrame, columns=None) -> None:
    """Parquet-friendly, stable types (in place; only ``columns`` when given)."""
    wanted = set(CLIP_ANNOTATION_COLUMNS if columns is None else columns)
    for column in (c for c in _INT_COLUMNS if c in wanted):
        out[column] = pd.to_numeric(out[column], errors="coerce").astype("Int64")
    for column in (c for c in _BOOL_COLUMNS if c in wanted):
        out[column] = out[column].astype("boolean")
    for column in (c for c in _LIST_COLUMNS if c in wanted):
        out[column] = pd.Series([list(v) if isinstance(v, (list, tuple, np.ndarray)) else [] for v in out[column].tolist()],
                                index=out.index, dtype=object)


def _null_columns(columns, n: int, rows: np.ndarray | None = None) -> dict[str, object]:
    """What :func:`_stable_types` makes of ``columns`` set to None in a frame of ``n`` rows, built directly:
    ``Int64`` and ``boolean`` all null (with the values under the mask that the conversions leave: 1 and
    False), a fresh empty list per row in the list columns, None objects elsewhere. (Converting None
    columns of a whole batch through ``to_numeric`` and ``astype`` cost a sixth of the batch join.)
    Given ``rows`` (positions), only those rows' list cells are lists; the others stay None."""
    out: dict[str, object] = {}
    for column in columns:
        if column in _INT_COLUMNS:
            out[column] = pd.arrays.IntegerArray(np.ones(n, dtype=np.int64), np.ones(n, dtype=bool))
        elif column in _BOOL_COLUMNS:
            out[column] = pd.arrays.BooleanArray(np.zeros(n, dtype=bool), np.ones(n, dtype=bool))
        elif column in _LIST_COLUMNS:
            lists = np.full(n, None, dtype=object)
            for i in (range(n) if rows is None else rows.tolist()):
                lists[i] = []
            out[column] = lists
        else:
            out[column] = np.full(n, None, dtype=object)
    return out


def audio_annotated(dataset: str, streams) -> bool:
    """Is a clip's audio annotated: every ``epic_sounds`` clip (EPIC-SOUNDS annotates the whole audio track of its
    videos), and a clip of another dataset whose rows (``streams``: the ``stream`` of each of its
    ``clip_annotations`` rows, or any iterable of stream names) hold sound rows (HD-EPIC Sounds for ``hd_epic``).
    The one rule for where the audio is evidence: only there is a clip also asked with its audio silenced
    (:func:`epic_levels_pipeline.responses.conditions.conditions_for`)."""
    return dataset == "epic_sounds" or "sound" in set(streams)


def clip_annotations(ann: Annotations, clip: Clip) -> pd.DataFrame:
    """Every annotation row overlapping the clip's window (plus recipe context for hd_epic).

    The reference for one clip; :func:`clips_annotations` gives the same frames for many clips at once."""
    parts: list[pd.DataFrame] = []
    # sounds and narrations: EPIC-SOUNDS with EPIC-KITCHENS-100, and HD-EPIC's own (annotations.hd_epic_streams)
    s = _overlap(ann.sounds, clip)
    parts.append(_finish(s, clip, "sound", s["annotation_id"], _sound_labels(s)))
    n = _overlap(ann.narrations, clip)
    parts.append(_finish(n, clip, "narration", n["narration_id"], _narration_labels(n)))
    if clip.dataset == "hd_epic":
        a = _overlap(ann.activities, clip)
        parts.append(_finish(a, clip, "activity", a["activity_id"], a["label"]))
        t = _overlap(ann.object_tracks, clip)
        parts.append(_finish(t, clip, "object_track", t["track_id"], t["object_name"]))
        steps = ann.recipe_steps
        inside = _overlap(steps, clip)
        recipes = set(inside["recipe_key"])
        video_steps = _video_rows(steps, clip.video_id)
        context = video_steps.loc[video_steps["recipe_key"].isin(recipes)].copy()
        context["in_window"] = (context["start_s"] < clip.end_s) & (context["stop_s"] > clip.start_s)
        context = context.rename(columns={"step_text": "step_label"})
        parts.append(_finish(context, clip, "recipe_step", _step_row_ids(context), context["step_label"]))
    frames = [p for p in parts if len(p)]
    if not frames:
        return _empty_rows()
    out = pd.concat(frames, ignore_index=True)
    for column in CLIP_ANNOTATION_COLUMNS:
        if column not in out.columns:
            out[column] = None
    out = out[CLIP_ANNOTATION_COLUMNS].sort_values(["stream", "start_s", "row_id"], kind="stable").reset_index(drop=True)
    _stable_types(out)
    return out


# --- many clips at once: one interval join per table ----------------------------------------------------

@dataclass
class _IntervalIndex:
    """One table's rows sorted by (video, start): each video's block and its longest span, so the rows
    overlapping a window are found by two binary searches and one comparison of stops."""

    frame: pd.DataFrame
    order: np.ndarray              # table positions sorted by (video, start)
    starts: np.ndarray             # start_s in that order
    stops: np.ndarray
    blocks: dict[str, tuple[int, int, float]]   # video -> (first, end, longest finite span)

    @classmethod
    def of(cls, frame: pd.DataFrame) -> "_IntervalIndex":
        start = pd.to_numeric(frame["start_s"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        stop = pd.to_numeric(frame["stop_s"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        videos = frame["video_id"].astype(object).to_numpy()
        keep = np.flatnonzero(~np.isnan(start) & ~np.isnan(stop) & pd.notna(videos))
        codes, uniques = pd.factorize(videos[keep], sort=False)
        order = keep[np.lexsort((start[keep], codes))]
        bounds = np.searchsorted(np.sort(codes), np.arange(len(uniques) + 1))
        span = stop[order] - start[order]
        blocks = {}
        for i, video in enumerate(uniques):
            a, b = int(bounds[i]), int(bounds[i + 1])
            finite = span[a:b][np.isfinite(span[a:b])]
            longest = float(finite.max()) if len(finite) else 0.0
            if not np.isfinite(span[a:b]).all():
                longest = np.inf
            blocks[str(video)] = (a, b, longest)
        return cls(frame, order, start[order], stop[order], blocks)

    def overlaps(self, clips: list[Clip]) -> tuple[np.ndarray, np.ndarray]:
        """(clip number, table position) of every row overlapping each clip, ordered by clip then position."""
        which, positions = [], []
        for n, clip in enumerate(clips):
            block = self.blocks.get(clip.video_id)
            if block is None:
                continue
            first, end, longest = block
            starts = self.starts[first:end]
            lo = first + (int(np.searchsorted(starts, clip.start_s - longest, "left")) if np.isfinite(longest) else 0)
            hi = first + int(np.searchsorted(starts, clip.end_s, "left"))
            if hi <= lo:
                continue
            hit = np.flatnonzero(self.stops[lo:hi] > clip.start_s) + lo
            if len(hit):
                positions.append(np.sort(self.order[hit]))
                which.append(np.full(len(hit), n))
        if not positions:
            return np.zeros(0, dtype=int), np.zeros(0, dtype=int)
        return np.concatenate(which), np.concatenate(positions)


class ClipRowsIndex:
    """The annotation tables of one :class:`Annotations`, indexed for interval joins. Build it once and
    ask it for the rows of many clips (:meth:`rows`); it holds no reference beyond its own lifetime."""

    def __init__(self, ann: Annotations):
        self.ann = ann
        self._indexes: dict[str, _IntervalIndex] = {}
        self._derived: dict[str, tuple[pd.Series, pd.Series]] = {}

    def _index(self, table: str) -> _IntervalIndex:
        if table not in self._indexes:
            self._indexes[table] = _IntervalIndex.of(self.ann.table(table))
        return self._indexes[table]

    def _ids_and_labels(self, table: str) -> tuple[np.ndarray, np.ndarray]:
        """Row id and label of every row of a table, computed once per table."""
        if table not in self._derived:
            frame = self.ann.table(table)
            if table == "sounds":
                ids, labels = frame["annotation_id"], _sound_labels(frame)
            elif table == "narrations":
                ids, labels = frame["narration_id"], _narration_labels(frame)
            elif table == "activities":
                ids, labels = frame["activity_id"], frame["label"]
            elif table == "object_tracks":
                ids, labels = frame["track_id"], frame["object_name"]
            else:
                ids, labels = _step_row_ids(frame), frame["step_text"]
            self._derived[table] = (ids.astype(str).to_numpy(dtype=object), labels.to_numpy(dtype=object))
        return self._derived[table]

    def _part(self, table: str, stream: str, clips: list[Clip], which: np.ndarray, positions: np.ndarray,
              in_window: np.ndarray | None = None) -> pd.DataFrame:
        frame = self.ann.table(table)
        out = frame.iloc[positions].reset_index(drop=True)
        if table == "recipe_steps":
            out = out.rename(columns={"step_text": "step_label"})
        ids, labels = self._ids_and_labels(table)
        starts = np.array([c.start_s for c in clips], dtype=float)[which]
        ends = np.array([c.end_s for c in clips], dtype=float)[which]
        out["clip_key"] = np.array([c.key for c in clips], dtype=object)[which]
        out["dataset"] = np.array([c.dataset for c in clips], dtype=object)[which]
        out["stream"] = stream
        out["row_id"] = ids[positions]
        out["label"] = labels[positions]
        out["start_clipped_s"] = np.minimum(np.maximum(out["start_s"].to_numpy(dtype=float), starts), ends)
        out["stop_clipped_s"] = np.minimum(np.maximum(out["stop_s"].to_numpy(dtype=float), starts), ends)
        out["in_window"] = True if in_window is None else in_window
        out["source_row"] = out["source_row"].astype(str)
        out["_clip"] = which
        return out

    def _recipe_context(self, clips: list[Clip]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every step of each recipe that has a step inside the clip (same video), with in_window."""
        steps = self.ann.recipe_steps
        which, positions = self._index("recipe_steps").overlaps(clips)
        if not len(positions):
            return which, positions, np.zeros(0, dtype=bool)
        keys = steps["recipe_key"].astype(object).to_numpy()
        videos = steps["video_id"].astype(object).to_numpy()
        wanted = pd.DataFrame({"_clip": which, "video_id": videos[positions], "recipe_key": keys[positions]}).drop_duplicates()
        table = pd.DataFrame({"video_id": videos, "recipe_key": keys, "_pos": np.arange(len(steps))})
        joined = wanted.merge(table, on=["video_id", "recipe_key"]).sort_values(["_clip", "_pos"], kind="stable")
        which, positions = joined["_clip"].to_numpy(), joined["_pos"].to_numpy()
        start = pd.to_numeric(steps["start_s"], errors="coerce").to_numpy(dtype=float)[positions]
        stop = pd.to_numeric(steps["stop_s"], errors="coerce").to_numpy(dtype=float)[positions]
        ends = np.array([c.end_s for c in clips], dtype=float)[which]
        begins = np.array([c.start_s for c in clips], dtype=float)[which]
        return which, positions, (start < ends) & (stop > begins)

    def rows(self, clips: list[Clip]) -> dict[str, pd.DataFrame]:
        """The ``clip_annotations`` frame of each clip (by key), identical to :func:`clip_annotations`."""
        return {key: _clip_rows(span) for key, span in self.spans(clips).items()}

    def spans(self, clips: list[Clip]) -> dict[str, tuple[pd.DataFrame, int, int] | None]:
        """Where each clip's rows lie (by key): a frame of the batch and the clip's first and end row in it
        (:func:`_clip_rows` makes the clip's frame of them), None for a clip without rows. A caller going
        clip by clip makes each clip's frame when it comes to it, so a clip's frame is freed with the clip."""
        out: dict[str, tuple[pd.DataFrame, int, int] | None] = {}
        for dataset in DATASETS:
            group = [c for c in clips if c.dataset == dataset]
            if group:
                out.update(self._spans_of(dataset, group))
        return {c.key: out[c.key] for c in clips}

    _STREAMS = {"epic_sounds": (("sounds", "sound"), ("narrations", "narration")),
                "hd_epic": (("activities", "activity"), ("object_tracks", "object_track"), ("sounds", "sound"),
                            ("narrations", "narration"))}

    def _spans_of(self, dataset: str, clips: list[Clip]) -> dict[str, tuple[pd.DataFrame, int, int] | None]:
        parts: dict[str, pd.DataFrame] = {}
        for table, stream in self._STREAMS[dataset]:
            which, positions = self._index(table).overlaps(clips)
            parts[stream] = self._part(table, stream, clips, which, positions)
        if dataset == "hd_epic":
            which, positions, inside = self._recipe_context(clips)
            parts["recipe_step"] = self._part("recipe_steps", "recipe_step", clips, which, positions, inside)
        # a clip without rows of a stream lacks that stream's own columns (null, as clip by clip)
        provided = {stream: set(part.columns) for stream, part in parts.items()}
        frames = [p for p in parts.values() if len(p)]
        result = {c.key: None for c in clips}
        if frames:
            big = pd.concat(frames, ignore_index=True)
            for column in CLIP_ANNOTATION_COLUMNS:
                if column not in big.columns:
                    big[column] = None
            big = big[[*CLIP_ANNOTATION_COLUMNS, "_clip"]].sort_values(["_clip", "stream", "start_s", "row_id"],
                                                                       kind="stable").reset_index(drop=True)
            _stable_types(big)
            numbers = big["_clip"].to_numpy()
            streams = big["stream"].to_numpy(dtype=object)
            bounds = np.searchsorted(numbers, np.arange(len(clips) + 1))
            big = big.drop(columns="_clip")
            # Clips lacking a stream have that stream's own columns null and typed as clip by clip: one
            # variant of the batch per set of absent columns, sliced per clip. A variant's list cells are
            # fresh empty lists only in the rows of its own clips (the only rows sliced from it).
            spans: dict[tuple[str, ...], list[tuple[Clip, int, int]]] = {}
            for n, clip in enumerate(clips):
                a, b = int(bounds[n]), int(bounds[n + 1])
                if a == b:
                    continue
                present = set().union(*(provided[s] for s in set(streams[a:b])))
                absent = tuple(c for c in CLIP_ANNOTATION_COLUMNS if c not in present)
                spans.setdefault(absent, []).append((clip, a, b))
            for absent, members in spans.items():
                where = np.concatenate([np.arange(a, b) for _, a, b in members])
                variant = big.assign(**_null_columns(absent, len(big), where)) if absent else big
                for clip, a, b in members:
                    result[clip.key] = (variant, a, b)
        return result


def clips_annotations(ann: Annotations, clips: list[Clip]) -> dict[str, pd.DataFrame]:
    """The ``clip_annotations`` frame of every clip (by key), from one interval join per table: the same
    frames as :func:`clip_annotations` clip by clip."""
    return ClipRowsIndex(ann).rows(clips)


def iter_clips_annotations(ann: Annotations, clips: list[Clip], batch: int = 1024, index: ClipRowsIndex | None = None):
    """``(clip, rows)`` for every clip in order, joined ``batch`` clips at a time (bounded memory: a batch of
    1,024 windows is a few MiB; a join costs a fixed few dozen pandas calls per batch whatever its size, so
    1,024 instead of 256 took a twelfth off the join of all staged windows, by instruction count). Pass an
    ``index`` of the same tables to reuse its interval indexes across calls (built once, e.g. before forking)."""
    if index is None:
        index = ClipRowsIndex(ann)
    elif index.ann is not ann:
        raise ValueError("iter_clips_annotations: the index was built for other annotation tables")
    for i in range(0, len(clips), batch):
        chunk = clips[i:i + batch]
        spans = index.spans(chunk)
        for clip in chunk:  # (each clip's frame made as it comes: a frame lives only as long as its clip's use)
            yield clip, _clip_rows(spans.pop(clip.key))
