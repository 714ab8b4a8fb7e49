"""The bank's result frames, built column by column (:func:`build._records_frame`) from rows given as
tuples in column order, are the frames ``pd.DataFrame(records, columns=...)`` makes from the same rows as
dicts: same dtypes, same values, same index and column labels."""

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from epic_levels_pipeline.bank.build import _records_frame

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
