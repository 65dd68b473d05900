"""emu.branch_counter: taken branches counted from translation-block entries — a loop's
backward jumps are counted, a conditional branch not taken is not, and the countdown stops
the run at a block boundary, deterministically."""
from emu import exits

from .guest import CODE, machine_with
from emu.branch_counter import BranchCounter


def _loop(iterations: int) -> str:
    """N-1 taken `jnz` back to l, the last one falls through; then a call/ret pair: 2 more."""
    return (f"mov ecx, {iterations}; l: dec ecx; jnz l; call f; int3; f: ret")


def test_taken_branches_are_counted_and_fallthrough_is_not(arch):
    m = machine_with(arch, _loop(100))
    counter = BranchCounter(m)
    counter.begin_run(0)
    m.run(CODE)
    assert counter.taken == 99 + 2 and not counter.fired


def test_the_countdown_stops_the_run_and_the_rest_continues(arch):
    m = machine_with(arch, _loop(100))
    counter = BranchCounter(m)
    counter.begin_run(10)
    first = m.run(CODE)
    assert first.kind == exits.STOPPED and counter.fired and counter.taken == 10
    stopped_at = m.pc
    counter.begin_run(0)
    m.run(stopped_at)
    assert counter.taken == 101          # the resumed run's first block is no branch

    again = machine_with(arch, _loop(100))
    other = BranchCounter(again)
    other.begin_run(10)
    again.run(CODE)
    assert again.pc == stopped_at        # the same block boundary every time
