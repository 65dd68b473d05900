"""The tick capture's histogram loses and invents no tick (issue 31, --mode pc's cost):
whatever PCs the ticks fall on, however many distinct ones against the table's limit, and
wherever the drains come, the tallies and the records of a drain hold exactly its ticks: a
tally per PC that found room, in the order of their first ticks, with the first one's count;
a record a tick for the PCs that did not, in tick order. PCs are drawn from a small pool that
collides in the index and from a wide range; the examples reach collisions, growth past the
first table, and a full table with records beside tallies, on both arches."""
from collections import Counter

from hypothesis import given, settings, strategies as st

from emu.tick_capture import TickCapture
from tests.unit.emu.guest import machine_with
from tests.unit.emu.test_tick_capture import PROGRAM, _registers
from tests.unit.emu.test_tick_histogram import _colliding

COLLIDING = _colliding(6)
FIRST_TALLIES = 256                 # native/tick_capture.c grow_tallies
MIN_EXAMPLES = 60


def _model(ticks, limit):
    """What one drain holds: tallies [(pc, count, first)] and records [(executed, pc)]."""
    tallies: dict[int, list] = {}
    records = []
    for pc, executed in ticks:
        if pc in tallies:
            tallies[pc][1] += 1
        elif len(tallies) < limit:
            tallies[pc] = [pc, 1, executed]
        else:
            records.append((executed, pc))
    return [tuple(t) for t in tallies.values()], records


def test_drains_hold_exactly_their_ticks():
    reached = Counter()
    machines = {arch: machine_with(arch, PROGRAM.format(n=1)) for arch in ("i386", "x86_64")}

    pcs = st.lists(st.one_of(st.sampled_from(COLLIDING), st.integers(0x400000, 0x400000 + 700)),
                   max_size=60)
    # a drain: drawn PCs around a sweep of up to 600 distinct ones (past the first table)
    drain = st.builds(lambda before, k, after: before + [0x500000 + 5 * i for i in range(k)] + after,
                      pcs, st.integers(0, 600), pcs)

    @settings(max_examples=max(settings().max_examples, MIN_EXAMPLES))
    @given(arch=st.sampled_from(["i386", "x86_64"]),
           drains=st.lists(drain, min_size=1, max_size=3),
           limit=st.sampled_from([0, 1, 5, FIRST_TALLIES, 1 << 16]))
    def check(arch, drains, limit):
        m = machines[arch]
        capture = TickCapture(m, _registers(arch), (), stack=False, histogram=True, tally_limit=limit)
        executed = 0
        for drain in drains:
            ticks = []
            for pc in drain:
                executed += 7
                ticks.append((pc, executed))
                assert capture.take_stopped(m, pc, executed) == 1
            tallies, records = _model(ticks, limit)
            assert capture.drain_tallies() == tallies
            assert [(r.executed, r.frames[0]) for r in capture.drain()] == records
            distinct = {pc for pc, _ in ticks}
            reached[arch] += 1
            reached["collision"] += len(distinct & set(COLLIDING)) >= 2
            reached["grown"] += len(tallies) > FIRST_TALLIES
            reached["mixed"] += bool(tallies) and bool(records)

    check()
    assert reached["i386"] and reached["x86_64"], reached
    assert reached["collision"] and reached["grown"] and reached["mixed"], reached
