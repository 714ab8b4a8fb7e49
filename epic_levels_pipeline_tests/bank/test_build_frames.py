"""The bank's result frames, built column by column (:func:`build._records_frame`) from rows given as
tuples in column order, are the frames ``pd.DataFrame(records, columns=...)`` makes from the same rows as
dicts: same dtypes, same values, same index and column labels."""

import json

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from epic_levels_pipeline.bank.build import _block_layout, _records_frame

CELL = st.one_of(
    st.text(max_size=6), st.booleans(), st.integers(-2**70, 2**70), st.none(), st.floats(allow_nan=True),
    st.lists(st.one_of(st.text(max_size=3), st.integers(0, 9), st.booleans(), st.none()), max_size=4),
)
COLUMNS = ["a", "b", "c", "d"]


def _column(kind):
    """Cells of one column: all of one kind (the bank's case), or mixed."""
    return {"str": st.text(max_size=6), "bool": st.booleans(), "int": st.integers(-2**40, 2**40),
            "list": st.lists(st.text(max_size=3), max_size=3), "mixed": CELL}[kind]


def _pandas_frame(rows, columns):
    return pd.DataFrame([dict(zip(columns, row)) for row in rows], columns=columns)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["str", "bool", "int", "list", "mixed"]), min_size=4, max_size=4),
       st.integers(0, 6), st.data())
def test_records_frame_is_pandas_frame(kinds, n, data):
    rows = [tuple(data.draw(_column(k)) for k in kinds) for _ in range(n)]
    pd.testing.assert_frame_equal(_records_frame(rows, COLUMNS), _pandas_frame(rows, COLUMNS), check_exact=True)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["str", "bool", "int", "list", "mixed"]), min_size=1, max_size=9),
       st.integers(1, 5), st.data())
def test_frame_of_blocks_is_frame_of_arrays(kinds, n, data):
    """The frame built from its blocks here is the frame ``DataFrame._from_arrays`` makes of the same column
    arrays: values, dtypes, labels and layout of blocks (any mix and order of column kinds). (That layout is
    not the public constructor's: there every string column has a dtype object of its own, so their blocks
    are not grouped; the string columns here share one dtype object, as the frames always have.)"""
    from epic_levels_pipeline.bank.build import _columns_frame, _frame_of_arrays, _frame_of_arrays_public

    import epic_levels_pipeline.bank.build as build

    columns = [f"c{i}" for i in range(len(kinds))]
    cells = [[data.draw(_column(k)) for _ in range(n)] for k in kinds]
    arrays = []
    build._frame_of_arrays = lambda a, labels, length: arrays.append((a, labels, length))
    try:
        _columns_frame(cells, columns)
    finally:
        build._frame_of_arrays = _frame_of_arrays
    (a, labels, length), = arrays
    made, public = _frame_of_arrays(a, labels.copy(), length), _frame_of_arrays_public(a, labels.copy(), length)
    pd.testing.assert_frame_equal(made, public, check_exact=True)
    assert _block_layout(made) == _block_layout(public)
    if "mixed" not in kinds:  # (mixed cells may not convert to Arrow at all) the same Parquet file, byte for byte
        assert made.to_parquet() == public.to_parquet()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.booleans(), st.none()), st.integers(-2**64, 2**64), st.integers(-2**63, 2**63 - 1)),
                min_size=1, max_size=6))
def test_bools_with_none_and_ints_of_any_size_are_what_pandas_infers(rows):
    """The typed shortcuts (bools with None kept as objects; ints tried as ``int64``, else inferred) give
    pandas' own inference, ints out of ``int64`` included."""
    columns = ["present", "big", "int64"]
    pd.testing.assert_frame_equal(_records_frame(rows, columns), _pandas_frame(rows, columns), check_exact=True)


def test_frames_are_built_from_blocks():
    """This pandas has what the block path needs (else every frame takes the public path: slower, the same)."""
    from epic_levels_pipeline.bank.build import _frame_of_arrays, _frame_of_blocks

    assert _frame_of_arrays is _frame_of_blocks


def test_equal_length_lists_stay_cells():
    rows = [([1, 2], "x"), ([3, 4], "y")]
    frame = _records_frame(rows, ["a", "b"])
    pd.testing.assert_frame_equal(frame, _pandas_frame(rows, ["a", "b"]))
    assert frame["a"].tolist() == [[1, 2], [3, 4]]


def test_string_columns_sliced_from_one_array_read_as_their_own():
    """Every string column is a slice of one Arrow array: each reads back as its own values, alone too."""
    rows = [("a", "bb", 1), ("", "c", 2), ("ddd", "e", 3)]
    frame = _records_frame(rows, ["x", "y", "z"])
    pd.testing.assert_frame_equal(frame, _pandas_frame(rows, ["x", "y", "z"]), check_exact=True)
    assert frame["y"].tolist() == ["bb", "c", "e"]
    pd.testing.assert_series_equal(frame["y"].reset_index(drop=True), pd.Series(["bb", "c", "e"], name="y"))
    assert frame["y"].str.len().tolist() == [2, 1, 1]


def test_frames_do_not_share_column_labels():
    one, two = _records_frame([("a",)], ["x"]), _records_frame([("b",)], ["x"])
    one.columns.name = "renamed"
    assert two.columns.name is None


def _bundled_banks(bundled):
    from epic_levels_pipeline.annotations.clips import clip_annotations, read_manifest
    from epic_levels_pipeline.bank.build import build_bank
    from epic_levels_pipeline_tests.conftest import ROOT

    ann, cat = bundled
    for clip in read_manifest(ROOT / "data" / "clips.csv"):
        yield clip, build_bank(clip, clip_annotations(ann, clip), cat)


def test_bundled_bank_frames_are_the_frames_pandas_infers(offline_bank):
    """Real banks (every bundled clip, the session's ``offline_bank``): each result frame equals
    ``pd.DataFrame`` of its own records."""
    from epic_levels_pipeline.bank.build import POOL_COLUMNS, QUESTION_COLUMNS

    sizes = set()
    for _, _, bank in offline_bank["banks"].values():
        for frame, columns in ((bank.questions, QUESTION_COLUMNS), (bank.pools, POOL_COLUMNS)):
            sizes.add(bool(len(frame)))
            pd.testing.assert_frame_equal(frame, pd.DataFrame(frame.to_dict("records"), columns=columns),
                                          check_exact=True)
    assert sizes == {True}


def test_known_column_types_are_the_types_made(bundled, monkeypatch):
    """The column types the frames take as known without scanning (question columns by construction, pool
    columns gathered as pools are added) are the types of the values, on every bundled clip's bank."""
    import epic_levels_pipeline.bank.build as build

    checked = []
    columns_frame = build._columns_frame

    def spy(cells, columns, known=None):
        for i, types in (known or {}).items():
            if cells[i]:
                assert set(map(type, cells[i])) == types, columns[i]
        checked.append(bool(known) and bool(cells[0]))
        return columns_frame(cells, columns, known)

    monkeypatch.setattr(build, "_columns_frame", spy)
    for _ in _bundled_banks(bundled):  # built again: the spy must see the frames made
        pass
    assert sum(checked) > 2


def test_read_inside_is_the_rule_it_shortcuts(bundled):
    """``_read_inside`` derives the scope once when no row moved: the same verdict, rows and scope as
    deriving it from the rows before and after reading them inside."""
    import copy

    from epic_levels_pipeline.bank.build import _read_inside
    from epic_levels_pipeline.bank.clip_view import ClipView
    from epic_levels_pipeline.bank.levels import derive_scope
    from epic_levels_pipeline.bank.subtypes import SUBTYPES
    from epic_levels_pipeline.annotations.clips import clip_annotations, read_manifest
    from epic_levels_pipeline_tests.conftest import ROOT

    ann, cat = bundled
    seen = 0
    for clip in read_manifest(ROOT / "data" / "clips.csv"):
        view = ClipView(clip, clip_annotations(ann, clip), cat)
        for subtype in SUBTYPES.values():
            if subtype.dataset != clip.dataset:
                continue
            for draft in subtype.generate(view):
                if isinstance(draft, tuple):
                    continue
                before = copy.copy(draft)
                inside = [e.read_inside() for e in before.provenance]
                derived = derive_scope(inside)
                refused = derive_scope(before.provenance) == subtype.scope != derived
                reason, scope = _read_inside(draft, subtype)
                assert (bool(reason), scope) == (refused, derived)
                assert draft.provenance == (before.provenance if refused else inside)
                seen += 1
    assert seen


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                    max_leaves=12))
def test_sorted_json_is_json_dumps_sorted(value):
    from epic_levels_pipeline.bank.build import _SORTED_JSON, _sorted_json

    assert _sorted_json(value) == _SORTED_JSON.encode(value) == json.dumps(value, sort_keys=True)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=5), max_size=8), st.integers(0, 8), st.integers(0, 8))
def test_string_maker_is_the_public_constructor(values, start, length):
    """The column :func:`build._columns_frame` wraps an Arrow array in (pandas' own constructor for results of
    Arrow operations) is the column the public constructor makes: type, dtype, values, also of a slice."""
    import pyarrow as pa

    from epic_levels_pipeline.bank.build import _arrow_strings, _arrow_strings_checked

    flat = pa.array(values, type=pa.large_string()).slice(start, length)
    made, checked = _arrow_strings(flat), _arrow_strings_checked(flat)
    assert type(made) is type(checked) and made.dtype == checked.dtype
    assert made._pa_array.equals(checked._pa_array)
    pd.testing.assert_series_equal(pd.Series(made), pd.Series(checked), check_exact=True)
    assert made.tolist() == checked.tolist() == values[start:start + length]


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                    max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=4), JSON, max_size=4), JSON)
def test_digest_from_params_json_is_digest_of_the_pair(params, value):
    """A draft's question-id digest, made from its params' JSON (made once per draft), is the sha1 of the
    sorted JSON of ``[params, answer value]``, as :func:`build.question_id` has always made it."""
    import hashlib

    from epic_levels_pipeline.bank.build import _digest, _sorted_json

    whole = hashlib.sha1(json.dumps([params, value], sort_keys=True).encode()).hexdigest()[:8]
    assert _digest(_sorted_json(params), value) == whole
