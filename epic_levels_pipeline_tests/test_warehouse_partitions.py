"""A per-clip table read through its consolidated copy gives what reading every clip file gives, and reads
only the files written since the copy was made."""

import os

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from epic_levels_pipeline.storage import consolidated as consolidated_copies, parquet
from epic_levels_pipeline.storage.consolidated import read_partitions
from epic_levels_pipeline.storage.parquet import read_parquet, write_parquet
from epic_levels_pipeline.storage.table_store import TableStore

NAME = "score_partials"


SCHEMA = pa.schema([("clip_key", pa.string()), ("n", pa.int64()), ("label", pa.string()), ("rate", pa.float64())])


def _frame(clip: str, rows: int, salt: int) -> pa.Table:
    """A clip's table as the IO manager writes it: its declared Arrow types, and the pandas metadata of the
    frame it came from, which differs between clips (a clip whose labels are all missing, every fourth salt,
    or that has no rows, wrote its string columns as ``object``)."""
    labels = [None if salt % 4 == 0 else f"{clip}-{salt}-{i}" for i in range(rows)]
    frame = pd.DataFrame({"clip_key": [clip] * rows, "n": [salt + i for i in range(rows)], "label": labels,
                          "rate": [0.5 * i for i in range(rows)]})
    return pa.Table.from_pandas(frame, schema=SCHEMA, preserve_index=False)


def _counting(monkeypatch) -> list[str]:
    read = []
    real = parquet.read_file

    def counted(path):
        read.append(path.name)
        return real(path)

    monkeypatch.setattr(parquet, "read_file", counted)
    return read


# an edit: (clip index, rows or None to delete the file, salt)
edits = st.lists(st.tuples(st.integers(0, 7), st.one_of(st.none(), st.integers(0, 4)), st.integers(0, 99)),
                 min_size=1, max_size=12)


@settings(max_examples=40, deadline=None)
@given(first=st.lists(st.integers(0, 4), min_size=1, max_size=8), changes=edits)
def test_reading_through_the_copy_equals_reading_every_file_after_any_edits(tmp_path_factory, first, changes):
    store = TableStore(tmp_path_factory.mktemp("store"))
    clips = [f"epic_sounds__P01_01__{30 * i}-{30 * i + 30}" for i in range(8)]
    for clip, rows in zip(clips, first):
        write_parquet(_frame(clip, rows, 0), store.path(NAME, clip))
    consolidated = store.consolidated_path(NAME)
    for clip_i, rows, salt in changes:
        paths = [store.path(NAME, c) for c in clips]
        pd.testing.assert_frame_equal(read_partitions(paths, consolidated), read_parquet(paths), check_exact=True)
        path = store.path(NAME, clips[clip_i])
        if rows is None:
            path.unlink(missing_ok=True)
        else:
            write_parquet(_frame(clips[clip_i], rows, salt), path)
    paths = [store.path(NAME, c) for c in clips]
    if any(p.exists() for p in paths):
        pd.testing.assert_frame_equal(read_partitions(paths, consolidated), read_parquet(paths), check_exact=True)
        assert consolidated.exists()  # files of one table's types have a copy, whatever their pandas metadata


def test_after_one_clip_changes_only_the_copy_and_that_clip_are_read(tmp_path, monkeypatch):
    store = TableStore(tmp_path)
    clips = [f"hd_epic__P01-20240202-110250__{30 * i}-{30 * i + 30}" for i in range(50)]
    paths = [store.path(NAME, c) for c in clips]
    for i, (clip, path) in enumerate(zip(clips, paths)):
        write_parquet(_frame(clip, 1 + i % 3, i), path)
    consolidated = store.consolidated_path(NAME)
    read = _counting(monkeypatch)
    read_partitions(paths, consolidated)
    assert len(read) == 50 and consolidated.exists()
    assert NAME not in [p.name for p in consolidated.parent.parent.iterdir() if p.suffix == ".parquet"]
    assert set(store.tables()) == {NAME}  # the copy is no table of its own (nor in the warehouse views)
    read.clear()
    again = read_partitions(paths, consolidated)
    assert read == [consolidated.name]
    write_parquet(_frame(clips[7], 4, 1000), paths[7])
    read.clear()
    changed = read_partitions(paths, consolidated)
    assert read == [consolidated.name, paths[7].name]
    assert changed["n"].tolist() != again["n"].tolist()
    pd.testing.assert_frame_equal(changed, read_parquet(paths), check_exact=True)


def test_a_damaged_copy_is_rebuilt_from_the_clip_files(tmp_path):
    store = TableStore(tmp_path)
    paths = [store.path(NAME, f"epic_sounds__P01_01__{s}-{s + 30}") for s in (0, 30, 60)]
    for i, path in enumerate(paths):
        write_parquet(_frame(path.stem, 2, i), path)
    consolidated = store.consolidated_path(NAME)
    expected = read_parquet(paths)
    read_partitions(paths, consolidated)
    consolidated.write_bytes(b"not parquet")
    pd.testing.assert_frame_equal(read_partitions(paths, consolidated), expected, check_exact=True)
    pq.write_table(pa.table({"n": [1, 2]}), consolidated)  # a Parquet file without the index
    pd.testing.assert_frame_equal(read_partitions(paths, consolidated), expected, check_exact=True)
    assert consolidated_copies._read_consolidated(consolidated) is not None  # rebuilt with its index


def test_files_of_two_schemas_are_read_as_every_file_is_and_no_copy_is_made(tmp_path):
    store = TableStore(tmp_path)
    paths = [store.path(NAME, f"epic_sounds__P01_01__{s}-{s + 30}") for s in (0, 30)]
    write_parquet(_frame(paths[0].stem, 2, 0), paths[0])
    write_parquet(_frame(paths[1].stem, 2, 1).append_column("extra", pa.array([True, True])), paths[1])
    consolidated = store.consolidated_path(NAME)
    pd.testing.assert_frame_equal(read_partitions(paths, consolidated), read_parquet(paths), check_exact=True)
    assert not consolidated.exists()


def test_a_file_replaced_by_one_of_the_same_size_and_time_is_still_read_again(tmp_path):
    rows = 3
    store = TableStore(tmp_path)
    path = store.path(NAME, "epic_sounds__P01_01__0-30")
    write_parquet(_frame(path.stem, rows, 1).set_column(2, "label", pa.array(["x", "y", "z"])), path)
    consolidated = store.consolidated_path(NAME)
    read_partitions([path], consolidated)
    stat = path.stat()
    write_parquet(_frame(path.stem, rows, 1).set_column(2, "label", pa.array(["X", "Y", "Z"])), path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same mtime; the rewrite is a new file (inode)
    pd.testing.assert_frame_equal(read_partitions([path], consolidated), read_parquet([path]), check_exact=True)


def test_clips_whose_columns_convert_differently_share_one_copy_and_keep_their_conversion(tmp_path, monkeypatch):
    """A clip with no labels (its file's pandas metadata says ``object``), an empty clip and ordinary clips:
    one copy of all of them, and the frame read through it converts each clip as reading its file does."""
    store = TableStore(tmp_path)
    paths = [store.path(NAME, f"epic_sounds__P01_01__{s}-{s + 30}") for s in (0, 30, 60, 90)]
    for path, (rows, salt) in zip(paths, [(3, 1), (2, 4), (0, 5), (2, 6)]):
        write_parquet(_frame(path.stem, rows, salt), path)
    consolidated = store.consolidated_path(NAME)
    expected = read_parquet(paths)
    pd.testing.assert_frame_equal(read_partitions(paths, consolidated), expected, check_exact=True)
    assert consolidated.exists()
    read = _counting(monkeypatch)
    pd.testing.assert_frame_equal(read_partitions(paths, consolidated), expected, check_exact=True)
    assert read == [consolidated.name]
