"""Batches of clip partitions: each a run of consecutive partitions, together exactly the clips asked for."""

from hypothesis import given, strategies as st

from epic_levels_pipeline.defs.partitions import batches, range_tags


@given(st.lists(st.booleans(), max_size=60), st.integers(1, 7))
def test_batches_cover_exactly_the_wanted_clips_in_consecutive_runs(flags, size):
    order = [f"clip{i}" for i in range(len(flags))]
    wanted = {k for k, f in zip(order, flags) if f}
    found = batches(order, wanted, size)
    assert [k for b in found for k in b] == [k for k in order if k in wanted]
    for batch in found:
        assert 1 <= len(batch) <= size
        first = order.index(batch[0])
        assert order[first:first + len(batch)] == batch  # a range covers exactly the batch


def test_one_clip_runs_alone_without_range_tags():
    assert batches(["a", "b", "c"], {"b"}) == [["b"]] and range_tags(["b"]) == {}
    assert range_tags(["a", "b"]) == {"dagster/asset_partition_range_start": "a", "dagster/asset_partition_range_end": "b"}
