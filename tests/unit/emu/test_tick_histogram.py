"""emu.tick_capture's histogram (issue 31, --mode pc's cost): in PC mode the C handler
counts the ticks per PC instead of a record each; a drain gives one tally per distinct PC, in
the order of their first ticks, with the first one's instruction count. PCs whose index slots
collide, a table that grows, and a table at its limit whose new PCs get records (none lost)."""
import pytest

from emu import exits
from emu.block_clock import clock_of
from emu.tick_capture import Captured, Tally, TickCapture

from .guest import CODE, STACK_SP, machine_with
from .test_tick_capture import PROGRAM, _capture, _program, _registers

GOLDEN = 0x9E3779B97F4A7C15
FIRST_SLOTS = 1024                  # native/tick_capture.c: 256 tallies at first, 1024 index slots


def _slot(pc: int, slots: int) -> int:
    """native/tick_capture.c slot_of."""
    return ((pc * GOLDEN) % (1 << 64) >> 20) & (slots - 1)


def _histogram(arch, **kw):
    m = machine_with(arch, PROGRAM.format(n=100))
    return m, TickCapture(m, _registers(arch), (), stack=False, histogram=True, **kw)


def _take_all(m, capture, ticks) -> list[int]:
    """Each (pc, executed) of `ticks` taken where the run stands (take_stopped: the same C
    handler the block clock calls); its answers."""
    return [capture.take_stopped(m, pc, executed) for pc, executed in ticks]


def _colliding(count: int, slots: int = FIRST_SLOTS) -> list[int]:
    """`count` PCs whose first slot in the index is the same."""
    target, found, pc = _slot(0x401000, slots), [], 0x401000
    while len(found) < count:
        if _slot(pc, slots) == target:
            found.append(pc)
        pc += 1
    return found


def test_a_run_counts_its_ticks_at_the_pc_they_fell_on(arch):
    m, _, loop_top = _program(arch)
    capture = TickCapture(m, _registers(arch), (), stack=False, histogram=True)
    clock = clock_of(m)
    clock.attach_capture(capture, 10)
    clock.begin_run(10)
    assert m.run(CODE).kind == exits.TRAP and not clock.fired     # the whole program ran
    clock.end_run()
    # ticks due at 10, 20, ... 200: all where the loop's block begins, the first at 10
    assert capture.drain() == []
    assert capture.drain_tallies() == [(loop_top, 20, 10)]
    assert capture.drain_tallies() == []


def test_colliding_pcs_keep_their_own_counts(arch):
    m, capture = _histogram(arch)
    a, b, c = _colliding(3)
    ticks = [(a, 1), (b, 2), (a, 3), (c, 4), (b, 5), (b, 6)]
    assert _take_all(m, capture, ticks) == [1] * 6
    assert capture.drain_tallies() == [Tally(a, 2, 1), Tally(b, 3, 2), Tally(c, 1, 4)]
    assert capture.drain() == []


def test_the_table_grows_past_its_first_size(arch):
    m, capture = _histogram(arch)
    pcs = [0x400000 + 3 * i for i in range(1000)] + _colliding(40)
    ticks = [(pc, i) for i, pc in enumerate(pcs)] + [(pc, 5000 + i) for i, pc in enumerate(reversed(pcs))]
    assert _take_all(m, capture, ticks) == [1] * len(ticks)
    assert capture.drain_tallies() == [Tally(pc, 2, i) for i, pc in enumerate(pcs)]


def test_a_drain_empties_the_histogram(arch):
    m, capture = _histogram(arch)
    a, b = _colliding(2)
    _take_all(m, capture, [(a, 1), (b, 2)])
    assert capture.drain_tallies() == [Tally(a, 1, 1), Tally(b, 1, 2)]
    _take_all(m, capture, [(b, 7), (b, 8)])
    assert capture.drain_tallies() == [Tally(b, 2, 7)]      # a new first tick, a new count


@pytest.mark.parametrize("limit", [0, 1, 3])
def test_a_full_table_gives_new_pcs_records_and_loses_no_tick(arch, limit):
    m, capture = _histogram(arch, tally_limit=limit)
    pcs = _colliding(3) + [0x500000, 0x500010]
    ticks = [(pc, 10 * i + k) for k in range(2) for i, pc in enumerate(pcs)]   # each PC twice
    assert _take_all(m, capture, ticks) == [1] * len(ticks)
    tallies, records = capture.drain_tallies(), capture.drain()
    counted = pcs[:limit]
    assert tallies == [Tally(pc, 2, 10 * i) for i, pc in enumerate(counted)]
    # the others: a record a tick, in tick order, with the SP as it is (the machine's)
    assert records == [Captured(executed, STACK_SP, (pc,)) for pc, executed in ticks if pc not in counted]
    assert sum(t.count for t in tallies) + len(records) == len(ticks)


def test_a_full_table_and_a_full_buffer_decline_the_tick(arch):
    m, capture = _histogram(arch, tally_limit=1, capacity=4)     # one tally, one record
    assert _take_all(m, capture, [(0x500000, 1), (0x500010, 2), (0x500000, 3)]) == [1, 1, 1]
    assert _take_all(m, capture, [(0x500020, 4)]) == [0] and capture.declined == "buffer full"
    assert capture.drain_tallies() == [Tally(0x500000, 2, 1)]
    assert [r.frames for r in capture.drain()] == [(0x500010,)]


def test_stop_after_counts_the_tallied_ticks(arch):
    m, capture = _histogram(arch)
    capture.stop_after(3)
    assert _take_all(m, capture, [(0x500000, 1), (0x500000, 2), (0x500010, 3)]) == [1, 1, 2]
    capture.drain_tallies()
    capture.drain()
    assert _take_all(m, capture, [(0x500000, 4)]) == [1]       # counted again from the drain


def test_a_histogram_is_for_pc_mode_only(arch):
    m = machine_with(arch, PROGRAM.format(n=1))
    with pytest.raises(ValueError):
        TickCapture(m, _registers(arch), (), stack=True, histogram=True)
