"""The declared warehouse schemas: every table written through the store is cast to its schema, and a table
that does not fit fails, naming the table and the column."""

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from epic_levels_pipeline import schemas
from epic_levels_pipeline.storage.parquet import read_parquet, write_parquet


def _over_marking(**changes):
    frame = pd.DataFrame({"responder": ["a"], "model": [""], "condition": ["clip"], "n_wrong": [3],
                          "n_wrong_over_marked": [1], "share": [1 / 3]})
    return frame.assign(**changes)


def test_every_declared_column_has_a_doc():
    for name, schema in schemas.SCHEMAS.items():
        docs = schemas.doc(name)
        assert set(docs) == set(schema.names) and all(d and d != "None" for d in docs.values()), name


def test_a_frame_is_written_with_its_declared_schema_and_reads_back(tmp_path):
    path = tmp_path / "over_marking.parquet"
    frame = _over_marking()[["share", "responder", "model", "condition", "n_wrong", "n_wrong_over_marked"]]
    write_parquet(frame, path, "over_marking")
    assert pq.read_schema(path).remove_metadata().equals(schemas.SCHEMAS["over_marking"].remove_metadata())
    back = read_parquet([path])
    assert list(back.columns) == schemas.columns("over_marking") and back["n_wrong"].tolist() == [3]


def test_an_empty_frame_gets_the_declared_types(tmp_path):
    path = tmp_path / "over_marking.parquet"
    write_parquet(_over_marking().iloc[:0].astype(object), path, "over_marking")
    assert pq.read_schema(path).field("n_wrong").type == pa.int64()


@pytest.mark.parametrize("frame, said", [
    (_over_marking(n_wrong=["three"]), "table over_marking, column n_wrong"),
    (_over_marking().drop(columns="share"), "table over_marking: missing column(s) share"),
    (_over_marking(extra=[1]), "undeclared column(s) extra"),
])
def test_a_table_that_does_not_fit_names_table_and_column_and_writes_nothing(tmp_path, frame, said):
    path = tmp_path / "over_marking.parquet"
    with pytest.raises(schemas.SchemaError, match=said.replace("(", r"\(").replace(")", r"\)")):
        write_parquet(frame, path, "over_marking")
    assert not path.exists()


def test_a_not_null_column_refuses_nulls():
    table = pa.table({c: pa.nulls(1, f.type) for c, f in zip(schemas.columns("questions"), schemas.SCHEMAS["questions"])})
    with pytest.raises(schemas.SchemaError, match="column question_id: 1 null"):
        schemas.conform("questions", table)


def test_rows_convert_as_their_columns_do():
    """:func:`schemas.from_rows` (one struct conversion) gives the table :func:`schemas.from_columns` gives for the
    same cells (NaN as null, lists and nulls inside them too); a cell that does not fit is named by its column."""
    names = schemas.columns("over_marking")
    rows = [("a", "", "clip", 3, 1, 1 / 3), ("b", float("nan"), "silenced", 0, 0, float("nan"))]
    columns = {c: [row[i] for row in rows] for i, c in enumerate(names)}
    assert schemas.from_rows("over_marking", rows).equals(schemas.from_columns("over_marking", columns), check_metadata=True)
    assert schemas.from_rows("over_marking", []).equals(schemas.from_columns("over_marking", {c: [] for c in names}))
    with pytest.raises(schemas.SchemaError, match="table over_marking, column n_wrong"):
        schemas.from_rows("over_marking", [("a", "", "clip", "three", 1, 0.5)])
    lists = schemas.SCHEMAS["questions"]
    cells = [None if f.name != "question_id" else "q" for f in lists]
    cells[lists.names.index("option_present")] = [True, None, float("nan")]
    cells[lists.names.index("options")] = ["x", float("nan")]
    table = schemas.from_rows("questions", [tuple(cells)])
    assert table.equals(schemas.from_columns("questions", {c: [v] for c, v in zip(lists.names, cells)}), check_metadata=True)
    assert table.column("option_present").to_pylist() == [[True, None, None]]


def test_an_undeclared_table_is_written_as_inferred(tmp_path):
    path = tmp_path / "t.parquet"
    write_parquet(pd.DataFrame({"x": [1]}), path, "not_a_declared_table")
    assert read_parquet([path])["x"].tolist() == [1]


def test_declared_columns_are_the_columns_the_stages_make():
    """The declared order of the scored tables is the order their builders make (a stored table and one
    computed again compare column for column)."""
    from epic_levels_pipeline import schemas
    from epic_levels_pipeline.responses.runner import RESPONSE_COLUMNS
    from epic_levels_pipeline.scoring.metrics.tables import PAIR_COLUMNS, SCORE_COLUMNS
    from epic_levels_pipeline.scoring.verdicts import VERDICT_COLUMNS

    for name, made in (("scores", SCORE_COLUMNS), ("paired_comparisons", PAIR_COLUMNS),
                       ("responses", RESPONSE_COLUMNS), ("verdicts", VERDICT_COLUMNS)):
        assert schemas.columns(name) == list(made), name
