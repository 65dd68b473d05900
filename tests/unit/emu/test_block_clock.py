"""emu.block_clock: guest instructions counted block by block in C (the profiling timer's
clock, issue 18) — the same total as Unicorn's exact count, a deadline that stops the run at
the first block boundary at or after it (before that block runs), and counts decoded again
once code is patched."""
from emu import exits
from emu.block_clock import BlockClock, clock_of
from emu.icount import InstructionClock

from .guest import CODE, asm, machine_with


def _loop(iterations: int) -> str:
    """Blocks: [mov; dec; jnz] 3, then [dec; jnz] 2 each, [call] 1, [ret] 1, [int3] 1."""
    return f"mov ecx, {iterations}; l: dec ecx; jnz l; call f; int3; f: ret"


def test_the_clock_counts_what_unicorn_counts(arch):
    counted = machine_with(arch, _loop(100))
    exact = InstructionClock()
    counted.count_instructions(exact)
    assert counted.run(CODE).kind == exits.TRAP

    m = machine_with(arch, _loop(100))
    clock = BlockClock(m)
    clock.begin_run(None)
    assert m.run(CODE).kind == exits.TRAP
    clock.end_run()
    assert clock.executed == exact.total == 2 * 100 + 4 and not clock.fired


def test_the_deadline_stops_before_the_block_that_reaches_it(arch):
    m = machine_with(arch, _loop(100))
    loop_top = CODE + len(asm("mov ecx, 100", arch))
    clock = clock_of(m)
    clock.begin_run(50)            # blocks end at 3, 5, ..., 49, 51: the stop is at 51
    first = m.run(CODE)
    assert first.kind == exits.STOPPED and clock.fired
    assert clock.executed == 51 and m.pc == loop_top
    clock.begin_run(None)
    assert m.run(m.pc).kind == exits.TRAP
    assert clock.executed == 2 * 100 + 4          # the stopped block ran once, counted once

    again = machine_with(arch, _loop(100))
    clock_of(again).begin_run(50)
    again.run(CODE)
    assert again.pc == loop_top and clock_of(again).executed == 51     # deterministic


def test_a_clock_without_a_deadline_never_stops_the_run(arch):
    m = machine_with(arch, _loop(10))
    clock = clock_of(m)
    clock.begin_run(5)
    m.run(CODE)
    clock.end_run()
    assert m.run(m.pc).kind == exits.TRAP and clock_of(m) is clock


def test_patched_code_is_counted_again(arch):
    """Same block start and length, other instructions: the count follows the new code."""
    m = machine_with(arch, "mov eax, 1; int3")             # 6 bytes, 2 instructions
    clock = clock_of(m)
    clock.begin_run(None)
    m.run(CODE)
    assert clock.executed == 2
    m.mem.write(CODE, asm("nop; nop; nop; nop; nop; int3", arch))     # 6 bytes, 6
    clock.begin_run(None)
    m.run(CODE)
    assert clock.executed == 2 + 6


def test_the_block_begun_last_is_the_one_that_trapped(arch):
    """last_block(): the int3's own block ([int3] 1, after `call f; ... f: ret`), through the
    one pointer the hook stores per block; before any block, nothing."""
    m = machine_with(arch, _loop(100))
    clock = clock_of(m)
    assert clock.last_block() == (0, 0, 0)
    clock.begin_run(None)
    assert m.run(CODE).kind == exits.TRAP
    clock.end_run()
    int3 = CODE + len(asm(_loop(100), arch)) - 2          # int3, then ret: a byte each
    assert clock.last_block() == (int3, 1, 1)
    clock.begin_run(50)              # a run stopped by its deadline: the last block counted
    m.run(CODE)
    clock.end_run()
    start, size, insns = clock.last_block()
    assert start == CODE + len(asm("mov ecx, 100", arch)) and insns == 2 and clock.fired
