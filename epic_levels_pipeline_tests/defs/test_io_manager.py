"""The table IO manager reads each stored file once per run while it is unchanged, and hands out copies."""

import dagster as dg
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from epic_levels_pipeline.defs import resources
from epic_levels_pipeline.defs.partitions import BY_CLIP, clip_partitions
from epic_levels_pipeline.storage.frames import to_frames
from epic_levels_pipeline.storage.parquet import read_parquet, write_parquet
from epic_levels_pipeline.storage.table_store import TableStore

CLIPS = ["epic_sounds__P01_01__0-30", "epic_sounds__P01_01__30-60"]


def _counting_reads(monkeypatch) -> list:
    reads = []
    real, real_partitions = resources.read_parquet, resources.read_partitions

    def counted(paths):
        reads.append([p.name for p in paths])
        return real(paths)

    def counted_partitions(paths, consolidated):
        reads.append([p.name for p in paths])
        return real_partitions(paths, consolidated)

    monkeypatch.setattr(resources, "read_parquet", counted)
    monkeypatch.setattr(resources, "read_partitions", counted_partitions)
    return reads


def test_a_table_is_read_once_and_a_changed_copy_stays_private(tmp_path, monkeypatch):
    reads = _counting_reads(monkeypatch)
    manager = resources.TableIOManager(root=str(tmp_path))
    store = TableStore(tmp_path / "data" / "assets")
    write_parquet(pd.DataFrame({"x": [1, 2]}), store.path("sounds"))
    context = dg.build_input_context(asset_key=dg.AssetKey("sounds"))
    first = manager.load_input(context)
    first["x"] = [9, 9]
    first["extra"] = 1
    second = manager.load_input(context)
    assert second["x"].tolist() == [1, 2] and "extra" not in second.columns
    assert len(reads) == 1
    write_parquet(pd.DataFrame({"x": [3, 4, 5]}), store.path("sounds"))  # a changed file is read again
    assert manager.load_input(context)["x"].tolist() == [3, 4, 5]
    assert len(reads) == 2
    manager.teardown_after_execution(None)
    assert not manager._loaded


def test_clip_files_are_read_once_per_run(tmp_path, monkeypatch):
    reads = _counting_reads(monkeypatch)
    manager = resources.TableIOManager(root=str(tmp_path))
    store = TableStore(tmp_path / "data" / "assets")
    for i, key in enumerate(CLIPS):
        write_parquet(pd.DataFrame({"clip": [key], "i": [i]}), store.path("sample_table", key))
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(clip_partitions.name, CLIPS)

    def context(by_clip: bool):
        return dg.build_input_context(asset_key=dg.AssetKey("sample_table"), partition_key=None,
                                      asset_partitions_def=clip_partitions, instance=instance,
                                      asset_partition_key_range=dg.PartitionKeyRange(CLIPS[0], CLIPS[-1]),
                                      definition_metadata={BY_CLIP: True} if by_clip else {})

    by_clip = [manager.load_input(context(True)) for _ in range(2)][-1]
    assert {k: f["i"].tolist() for k, f in by_clip.items()} == {CLIPS[0]: [0], CLIPS[1]: [1]}
    assert len(reads) == len(CLIPS)  # the second load read nothing
    together = [manager.load_input(context(False)) for _ in range(2)][-1]
    assert sorted(together["i"].tolist()) == [0, 1]
    assert len(reads) == len(CLIPS) + 1


def test_a_table_written_in_the_run_is_not_read_back_and_loads_as_its_file(tmp_path, monkeypatch):
    reads = _counting_reads(monkeypatch)
    manager = resources.TableIOManager(root=str(tmp_path))
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(clip_partitions.name, CLIPS)
    frames = {key: pd.DataFrame({"clip": [key, key], "i": [i, None], "options": [["a", "b"], []],
                                 "ok": pd.array([True, None], dtype="boolean"), "x": [0.5, float("nan")]})
              for i, key in enumerate(CLIPS)}
    out = dg.build_output_context(asset_key=dg.AssetKey("sample_table"), partition_key=None,
                                  asset_partitions_def=clip_partitions, instance=instance,
                                  asset_partition_key_range=dg.PartitionKeyRange(CLIPS[0], CLIPS[-1]))
    manager.handle_output(out, frames)
    context = dg.build_input_context(asset_key=dg.AssetKey("sample_table"), partition_key=None,
                                     asset_partitions_def=clip_partitions, instance=instance,
                                     asset_partition_key_range=dg.PartitionKeyRange(CLIPS[0], CLIPS[-1]),
                                     definition_metadata={BY_CLIP: True})
    loaded = manager.load_input(context)
    assert not reads
    for key, path in ((k, TableStore(tmp_path / "data" / "assets").path("sample_table", k)) for k in CLIPS):
        pd.testing.assert_frame_equal(loaded[key], pq.read_table(path).to_pandas(), check_exact=True)
    loaded[CLIPS[0]]["i"] = 7  # a step's change stays private
    assert manager.load_input(context)[CLIPS[0]]["i"].iloc[0] == 0
    write_parquet(pd.DataFrame({"clip": ["other"]}), TableStore(tmp_path / "data" / "assets").path("sample_table", CLIPS[1]))
    assert manager.load_input(context)[CLIPS[1]]["clip"].tolist() == ["other"]  # changed since: read again
    assert len(reads) == 1


def test_many_files_read_as_one_frame_equal_the_concatenated_frames(tmp_path):
    def concatenated(paths):  # what reading file by file gives
        frames = [f for f in (pq.read_table(p).to_pandas() for p in paths) if len(f.columns)]
        return pd.concat(frames, ignore_index=True)

    same = []
    for i in range(3):
        same.append(tmp_path / f"same{i}.parquet")
        write_parquet(pd.DataFrame({"k": [f"c{i}"] * (i + 1), "n": range(i + 1), "opts": [["a"]] * (i + 1),
                                    "b": pd.array([True] * (i + 1), dtype="boolean")}), same[-1])
    pd.testing.assert_frame_equal(resources.read_parquet(same), concatenated(same), check_exact=True)
    mixed = [*same, tmp_path / "other.parquet", tmp_path / "empty.parquet", tmp_path / "missing.parquet"]
    write_parquet(pd.DataFrame({"k": [None], "n": [1.5]}), mixed[3])  # other types: frames reconciled by pandas
    write_parquet(pd.DataFrame(), mixed[4])  # no columns: left out
    pd.testing.assert_frame_equal(resources.read_parquet(mixed), concatenated(mixed[:5]), check_exact=True)


def test_files_without_rows_add_no_rows_and_leave_the_types_alone(tmp_path):
    paths = [tmp_path / f"{i}.parquet" for i in range(4)]
    write_parquet(pd.DataFrame({"k": ["a"], "n": [1], "ok": [True]}), paths[0])
    write_parquet(pd.DataFrame({"k": [], "n": [], "ok": [], "only_empty": []}, dtype=object), paths[1])  # an empty clip
    write_parquet(pd.DataFrame({"k": ["b", "c"], "n": [2, 3], "ok": [False, True]}), paths[2])
    write_parquet(pd.DataFrame({"k": ["d"], "n": [4], "ok": [True]}), paths[3])
    frame = resources.read_parquet(paths)
    assert frame["k"].tolist() == ["a", "b", "c", "d"] and frame["n"].tolist() == [1, 2, 3, 4]
    assert str(frame["n"].dtype) == "int64" and str(frame["ok"].dtype) == "bool"  # not object
    assert list(frame.columns) == ["k", "n", "ok", "only_empty"] and frame["only_empty"].isna().all()
    only_empty = resources.read_parquet([paths[1]])
    assert list(only_empty.columns) == ["k", "n", "ok", "only_empty"] and not len(only_empty)


def test_small_and_large_files_read_back_the_same_in_pandas_and_duckdb(tmp_path):
    """Clip-sized files are written without statistics or dictionary pages: pandas and DuckDB read the same
    values and types as from a large file; a frame's index (as after a filter) is not written."""
    import duckdb

    from epic_levels_pipeline.storage.parquet import SMALL_FILE_ROWS

    def frame(n):
        return pd.DataFrame({"k": [f"c{i % 7}" for i in range(n)], "n": range(n), "x": [i / 3 for i in range(n)],
                             "ok": [i % 2 == 0 for i in range(n)], "opts": [["a", "b"]] * n,
                             "maybe": [None if i % 3 else "s" for i in range(n)]})

    big, small = frame(SMALL_FILE_ROWS + 1), frame(SMALL_FILE_ROWS + 1).iloc[::-600]
    write_parquet(big, tmp_path / "big.parquet")
    write_parquet(small, tmp_path / "small.parquet")
    back_big, back_small = read_parquet([tmp_path / "big.parquet"]), read_parquet([tmp_path / "small.parquet"])
    assert list(back_small.index) == list(range(len(small))) and list(back_small.dtypes) == list(back_big.dtypes)
    expected = back_big.iloc[::-600].reset_index(drop=True)
    pd.testing.assert_frame_equal(back_small.drop(columns="opts"), expected.drop(columns="opts"))
    assert [list(v) for v in back_small["opts"]] == [list(v) for v in expected["opts"]]
    con = duckdb.connect()
    rows = lambda name: con.execute(f"select k, n, x, ok, opts, maybe from '{tmp_path / name}'").fetchall()  # noqa: E731
    types = lambda name: [d[1] for d in con.execute(f"select * from '{tmp_path / name}'").description]  # noqa: E731
    assert rows("small.parquet") == [r for r in rows("big.parquet")][::-600] and types("small.parquet") == types("big.parquet")


def _assert_same_frames(got: list[pd.DataFrame], tables) -> None:
    """Each frame is what converting its table alone gives: values, column and index types, and the NumPy
    types of list values (a list column's values convert as one array)."""
    assert len(got) == len(tables)
    for frame, table in zip(got, tables):
        alone = table.to_pandas()
        pd.testing.assert_frame_equal(frame, alone, check_exact=True, check_index_type=True, check_column_type=True)
        assert list(frame.dtypes.astype(str)) == list(alone.dtypes.astype(str))
        for column in alone.columns:
            for a, b in zip(frame[column], alone[column]):
                assert type(a) is type(b) and getattr(a, "dtype", None) == getattr(b, "dtype", None)


_maybe_int = st.one_of(st.none(), st.integers(-3, 3))
_maybe_bool = st.one_of(st.none(), st.booleans())
_maybe_text = st.one_of(st.none(), st.sampled_from(["a", "b", "tap running", ""]))
_clip_row = st.fixed_dictionaries({
    "n": _maybe_int, "ok": _maybe_bool, "k": _maybe_text, "x": st.one_of(st.none(), st.floats(-2, 2)),
    "opts": st.lists(_maybe_text, max_size=3), "ids": st.lists(_maybe_int, max_size=3),
})


@settings(deadline=None)
@given(st.lists(st.lists(_clip_row, max_size=4), min_size=1, max_size=6), st.booleans())
def test_tables_converted_together_give_each_the_frame_it_gives_alone(clips, typed):
    """``to_frames`` (the IO manager's conversion of a run's written clip tables) equals converting each table
    alone, whatever nulls (in ints, booleans, list values), empty clips or column types the clips have."""
    frames = []
    for rows in clips:
        frame = pd.DataFrame(rows, columns=["n", "ok", "k", "x", "opts", "ids"])
        if typed:  # the bank's nullable columns
            frame["n"] = frame["n"].astype("Int64")
            frame["ok"] = frame["ok"].astype("boolean")
        frames.append(frame)
    tables = [pa.Table.from_pandas(f, preserve_index=False) for f in frames]
    _assert_same_frames(to_frames(tables), tables)


def test_clips_of_a_batch_written_then_loaded_by_clip_convert_as_their_files(tmp_path):
    """A batch's clip tables handed over in one conversion are, clip by clip, the frames their files give."""
    manager = resources.TableIOManager(root=str(tmp_path))
    keys = [f"epic_sounds__P01_01__{30 * i}-{30 * i + 30}" for i in range(5)]
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(clip_partitions.name, keys)
    frames = {key: pd.DataFrame({"clip": [key] * (i % 3), "n": [i if i != 3 else None] * (i % 3),
                                 "opts": [["a", "b"]] * (i % 3)}) for i, key in enumerate(keys)}
    ranges = {"asset_partitions_def": clip_partitions, "instance": instance, "partition_key": None,
              "asset_partition_key_range": dg.PartitionKeyRange(keys[0], keys[-1])}
    manager.handle_output(dg.build_output_context(asset_key=dg.AssetKey("sample_table"), **ranges), frames)
    loaded = manager.load_input(dg.build_input_context(asset_key=dg.AssetKey("sample_table"),
                                                       definition_metadata={BY_CLIP: True}, **ranges))
    store = TableStore(tmp_path / "data" / "assets")
    _assert_same_frames([loaded[k] for k in keys], [pq.read_table(store.path("sample_table", k)) for k in keys])


def test_files_written_together_are_the_files_written_one_by_one_and_a_failure_stops_the_rest(tmp_path):
    """``write_parquets`` (a batch's clip files, encoded by a worker thread) writes byte for byte the files
    ``write_parquet`` writes; a failed write raises once every write has ended, and the files after it keep
    their last good contents, as when written one after the other."""
    from epic_levels_pipeline.storage.parquet import write_parquets

    frames = [pd.DataFrame({"k": [f"c{i}"] * i, "n": range(i), "opts": [["a"]] * i}) for i in range(4)]
    one_by_one = [tmp_path / "one" / f"{i}.parquet" for i in range(4)]
    together = [tmp_path / "together" / f"{i}.parquet" for i in range(4)]
    tables = [write_parquet(f, p) for f, p in zip(frames, one_by_one)]
    written = write_parquets(list(zip(frames, together)))
    assert [a.read_bytes() for a in one_by_one] == [b.read_bytes() for b in together]
    assert all(a.equals(b, check_metadata=True) for a, b in zip(tables, written))

    blocked = tmp_path / "together" / "blocked.parquet"
    blocked.mkdir()  # a directory where the file should go: replacing it fails
    before = together[3].read_bytes()
    try:
        write_parquets([(frames[2], together[0]), (frames[1], blocked), (frames[2], together[3])])
    except OSError:
        pass
    else:
        raise AssertionError("a failed write must raise")
    assert together[0].read_bytes() == one_by_one[2].read_bytes() and together[3].read_bytes() == before
    assert not [p for p in (tmp_path / "together").iterdir() if p.suffix == ".tmp"]


def test_the_catalogue_is_stored_as_json_and_loads_back(tmp_path, bundled):
    """The entity catalogue goes to ``entity_catalogue.json`` (nothing is pickled) and loads back equal; an
    output that is neither a table nor the catalogue fails, and a catalogue stored only as an old pickle asks
    for a new materialization instead of unpickling it."""
    from epic_levels_pipeline.annotations.catalogue import Catalogue, build_catalogue

    cat = build_catalogue(bundled[0])
    manager = resources.TableIOManager(root=str(tmp_path))
    store = TableStore(tmp_path / "data" / "assets")
    manager.handle_output(dg.build_output_context(asset_key=dg.AssetKey("entity_catalogue")), cat)
    assert store.document_path("entity_catalogue").is_file()
    assert not list(store.root.glob("*.pickle"))
    loaded = manager.load_input(dg.build_input_context(asset_key=dg.AssetKey("entity_catalogue")))
    assert isinstance(loaded, Catalogue) and loaded == cat
    with pytest.raises(dg.Failure, match="tables and the entity catalogue only"):
        manager.handle_output(dg.build_output_context(asset_key=dg.AssetKey("other")), {"a": 1})
    store.document_path("entity_catalogue").rename(store.root / "entity_catalogue.pickle")
    with pytest.raises(dg.Failure, match="materialize entity_catalogue again"):
        resources.TableIOManager(root=str(tmp_path)).load_input(
            dg.build_input_context(asset_key=dg.AssetKey("entity_catalogue")))
