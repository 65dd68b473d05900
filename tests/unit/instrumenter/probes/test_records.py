"""instrumenter/probes/records.py: the per-process buffers hand a record to the drain as soon as
it fills its buffer (issue 26), and drop only when nothing drains them."""
from hypothesis import given, strategies as st

from instrumenter.probes.records import Buffers


def _row(n: int, pid: int = 1) -> tuple:
    return (n, pid, pid, "uprobe:x:f", 0x1000)


def test_capacity_one_drains_each_record_as_it_is_put():
    """The CLI streams with capacity 1: a record waited for the next one (issue 26)."""
    drained = []
    buffers = Buffers(capacity=1, drain=lambda records: drained.extend(r.ts for r in records))
    buffers.put(_row(1))
    assert drained == [1]
    buffers.put(_row(2, pid=2))
    assert drained == [1, 2]


def test_a_buffer_drains_when_its_record_fills_it():
    batches = []
    buffers = Buffers(capacity=3, drain=lambda records: batches.append([r.ts for r in records]))
    for n in range(7):
        buffers.put(_row(n))
    assert batches == [[0, 1, 2], [3, 4, 5]]
    buffers.flush()
    assert batches[-1] == [6]


def test_without_a_drain_records_past_the_capacity_are_dropped_and_counted():
    buffers = Buffers(capacity=2)
    for n in range(5):
        buffers.put(_row(n))
    assert [row[0] for row in buffers.by_pid[1].rows] == [0, 1]
    assert buffers.dropped() == {1: 3}


@given(capacity=st.integers(1, 5), pids=st.lists(st.integers(1, 3), min_size=1, max_size=40))
def test_drained_records_are_each_pids_records_in_order_and_none_waits_a_full_buffer(capacity, pids):
    """Whatever the interleaving of processes: the drain sees each process's records in the
    order they were put, none lost; after every put no buffer holds `capacity` records (with
    capacity 1, nothing is ever pending)."""
    drained = []
    buffers = Buffers(capacity=capacity, drain=lambda records: drained.extend(r.ts for r in records))
    for ts, pid in enumerate(pids):
        buffers.put(_row(ts, pid))
        assert all(len(b.rows) < capacity for b in buffers.by_pid.values())
        if capacity == 1:
            assert drained == list(range(ts + 1))
    buffers.flush()
    for pid in set(pids):
        assert [ts for ts in drained if pids[ts] == pid] == [ts for ts, p in enumerate(pids) if p == pid]
    assert sorted(drained) == list(range(len(pids))) and buffers.dropped() == {}
