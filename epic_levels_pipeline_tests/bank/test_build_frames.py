"""The bank's result frames, built column by column (:func:`build._records_frame`), are the frames
``pd.DataFrame(records, columns=...)`` makes: same dtypes, same values, same index and column labels."""

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


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["str", "bool", "int", "list", "mixed"]), min_size=4, max_size=4),
       st.integers(0, 6), st.data())
def test_records_frame_is_pandas_frame(kinds, n, data):
    records = [{c: data.draw(_column(k)) for c, k in zip(COLUMNS, kinds)} for _ in range(n)]
    pd.testing.assert_frame_equal(_records_frame(records, COLUMNS), pd.DataFrame(records, columns=COLUMNS),
                                  check_exact=True)


def test_equal_length_lists_stay_cells():
    records = [{"a": [1, 2], "b": "x"}, {"a": [3, 4], "b": "y"}]
    frame = _records_frame(records, ["a", "b"])
    pd.testing.assert_frame_equal(frame, pd.DataFrame(records, columns=["a", "b"]))
    assert frame["a"].tolist() == [[1, 2], [3, 4]]
