"""emu.icount + Machine.count_instructions: exact guest instruction counts, the virtual time of
trace records — at every hit inside a hook, across budgeted slices, and shared by Machines."""
from emu import exits
from emu.icount import InstructionClock
from emu.machine import Machine

from .guest import CODE, STACK_SP, asm, machine_with


def _loop(arch: str, iterations: int) -> str:
    """2 + 3·iterations instructions, then int3: mov ecx, N; xor eax, eax; 1: inc eax; dec ecx;
    jnz 1b; int3."""
    return f"mov ecx, {iterations}; xor eax, eax; l: inc eax; dec ecx; jnz l; int3"


def test_a_machine_counts_nothing_until_asked(arch):
    m = machine_with(arch, _loop(arch, 10))
    m.run(CODE)
    assert m.instructions_retired == 0


def test_the_count_inside_a_hook_is_exact_and_includes_the_int3(arch):
    m = machine_with(arch, _loop(arch, 1000))
    clock = InstructionClock()
    m.count_instructions(clock)
    seen = []

    def on_trap(vector, pc):
        seen.append(m.instructions_retired)
        return False
    m.trap_handler = on_trap
    m.run(CODE)
    assert seen == [2 + 3 * 1000 + 1]
    assert clock.total == 2 + 3 * 1000 + 1 and m.instructions_retired == clock.total


def test_budgeted_slices_add_up_to_the_same_count(arch):
    """A slice charged by budget counts exactly its budget (not budget + 1, which Unicorn's
    counter shows after stopping before the next instruction)."""
    m = machine_with(arch, _loop(arch, 500))
    m.count_instructions(InstructionClock())
    m.trap_handler = lambda vector, pc: False
    exit_, slices = m.run(CODE, count=7), 1
    while exit_.kind == exits.BUDGET:
        assert m.instructions_retired == 7 * slices
        exit_, slices = m.run(m.pc, count=7), slices + 1
    assert exit_.kind == exits.TRAP and m.instructions_retired == 2 + 3 * 500 + 1


def test_code_translated_before_counting_is_counted_after(arch):
    """Translations made without Unicorn's counting hook would run uncounted: enabling
    counting drops them."""
    m = machine_with(arch, _loop(arch, 50))
    m.trap_handler = lambda vector, pc: False
    m.run(CODE)
    m.count_instructions(InstructionClock())
    m.set_reg("esp" if arch == "i386" else "rsp", STACK_SP)
    m.run(CODE)
    assert m.instructions_retired == 2 + 3 * 50 + 1


def test_machines_sharing_a_clock_continue_one_count(arch):
    """A forked child's Machine joins its parent's clock: one order for all processes."""
    clock = InstructionClock()
    parent, child = machine_with(arch, _loop(arch, 10)), machine_with(arch, _loop(arch, 20))
    for m in (parent, child):
        m.count_instructions(clock)
        m.trap_handler = lambda vector, pc: False
    parent.run(CODE)
    seen = []
    child.trap_handler = lambda vector, pc: seen.append(child.instructions_retired) or False
    child.run(CODE)
    assert seen == [(2 + 30 + 1) + (2 + 60 + 1)] and clock.total == seen[0]
    assert parent.instructions_retired == clock.total      # not running: the shared total


def test_a_new_machine_has_no_counter_reading_left_over(arch):
    m = Machine(arch)
    assert m.instructions_retired == 0
    m.mem.map(CODE, 0x1000, 7)
    m.mem.write(CODE, asm("nop; nop; int3", arch))
    m.count_instructions(InstructionClock())
    m.trap_handler = lambda vector, pc: False
    m.run(CODE)
    assert m.instructions_retired == 3
