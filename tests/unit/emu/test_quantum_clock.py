"""emu.quantum_clock: Machine.run(count=N, at_block=True), a scheduler's quantum that ends at
the first block boundary at or after N instructions on the block clock, without Unicorn's
per-instruction counting hook, and charges the instructions the run began."""
from emu import exits
from emu.icount import InstructionClock

from .guest import CODE, asm, machine_with


def _loop(iterations: int) -> str:
    """Blocks: [mov; dec; jnz] 3, then [dec; jnz] 2 each, [call] 1, [ret] 1, [int3] 1."""
    return f"mov ecx, {iterations}; l: dec ecx; jnz l; call f; int3; f: ret"


def test_the_quantum_ends_at_the_block_boundary_after_it_without_the_count_hook(arch):
    m = machine_with(arch, _loop(100))
    loop_top = CODE + len(asm("mov ecx, 100", arch))
    exit_ = m.run(CODE, count=50, at_block=True)       # blocks end at 3, 5, ..., 49, 51
    assert exit_.kind == exits.BUDGET and m.pc == loop_top
    assert m.last_run_insns == 51 and not m._count_hook
    rest = m.run(m.pc, count=1000, at_block=True)
    assert rest.kind == exits.TRAP and m.last_run_insns == 2 * 100 + 4 - 51


def test_an_exact_count_still_stops_inside_the_block(arch):
    m = machine_with(arch, _loop(100))
    assert m.run(CODE, count=50).kind == exits.BUDGET
    assert m.last_run_insns == 50 and m._count_hook


def test_a_counting_machine_keeps_its_exact_clock_under_a_quantum(arch):
    """The charge is the block clock's, the tool's clock stays Unicorn's exact count."""
    m = machine_with(arch, _loop(100))
    clock = InstructionClock()
    m.count_instructions(clock)
    assert m.run(CODE, count=50, at_block=True).kind == exits.BUDGET
    assert m.last_run_insns == clock.total == 51
    assert m.run(m.pc, count=1000, at_block=True).kind == exits.TRAP
    assert clock.total == 2 * 100 + 4


def test_the_same_quantum_ends_at_the_same_place(arch):
    ends = []
    for _ in range(2):
        m = machine_with(arch, _loop(300))
        m.run(CODE, count=97, at_block=True)
        ends.append((m.pc, m.last_run_insns))
    assert ends[0] == ends[1] and ends[0][1] >= 97
