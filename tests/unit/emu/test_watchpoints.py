"""emu.watchpoints: a watched access ends the run before the accessing instruction, and after
undo() nothing of that instruction remains, so that running on executes it exactly once —
for a plain store, a read-modify-write, a push (store before the stack pointer moves) and a
store the instruction makes after another one (a `call`'s return address, then its jump)."""
import pytest

from emu import exits
from emu.watchpoints import ACCESS, READ, WRITE, MemoryWatch

from .guest import CODE, DATA, STACK_SP, asm, machine_with


def watched(m, address, length, kind, stop=True):
    seen = []

    def on_access(pc, at, size, is_write):
        seen.append((pc, at, size, is_write))
        return stop
    watch = MemoryWatch(m, on_access)
    watch.add(address, length, kind)
    return watch, seen


def word(m, address, arch):
    size = 4 if arch == "i386" else 8
    return int.from_bytes(m.mem.read(address, size), "little")


CASES = {
    "store": ("nop; mov dword ptr [{data}], 7; nop", lambda a: DATA, 7),
    "read-modify-write": ("nop; add dword ptr [{data}], 1; nop", lambda a: DATA, 6),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_store_is_undone_then_done_once(arch, case):
    source, where, expected = CASES[case]
    source = source.format(data=hex(DATA))
    m = machine_with(arch, source)
    m.mem.write(DATA, (5).to_bytes(4, "little"))
    watch, seen = watched(m, where(arch), 4, WRITE)
    exit_ = m.run(CODE, count=100)
    second = CODE + len(asm("nop", arch))
    assert exit_ == exits.Exit(exits.STOPPED, second) and m.pc == second
    assert seen[0][:2] == (second, DATA) and seen[0][3]
    watch.undo()
    assert int.from_bytes(m.mem.read(DATA, 4), "little") == 5       # as before the instruction
    watch.clear()
    m.run(m.pc, count=1)
    assert int.from_bytes(m.mem.read(DATA, 4), "little") == expected


def test_a_push_stops_before_the_stack_pointer_moves(arch):
    m = machine_with(arch, "nop; push 0x55; nop")
    size = 4 if arch == "i386" else 8
    watch, seen = watched(m, STACK_SP - size, size, ACCESS)
    m.run(CODE, count=100)
    assert m.sp == STACK_SP
    watch.undo()
    assert word(m, STACK_SP - size, arch) == 0
    watch.clear()
    m.run(m.pc, count=1)
    assert m.sp == STACK_SP - size and word(m, STACK_SP - size, arch) == 0x55


def test_a_call_stops_with_nothing_of_it_done(arch):
    m = machine_with(arch, "nop; call 0x10100; nop")
    size = 4 if arch == "i386" else 8
    watch, _ = watched(m, STACK_SP - size, size, WRITE)
    m.run(CODE, count=100)
    watch.undo()
    assert m.pc == CODE + 1 and m.sp == STACK_SP and word(m, STACK_SP - size, arch) == 0


def test_a_read_stops_before_it_and_a_passed_access_does_not_stop(arch):
    m = machine_with(arch, f"nop; mov eax, dword ptr [{hex(DATA)}]; mov dword ptr [{hex(DATA)}], eax; nop")
    watch, seen = watched(m, DATA, 4, READ)
    assert m.run(CODE, count=100).kind == exits.STOPPED and not seen[0][3]
    watch.undo()
    watch.clear()
    passing, seen = watched(m, DATA, 4, WRITE, stop=False)
    exit_ = m.run(m.pc, count=3)
    assert exit_.kind != exits.STOPPED and len(seen) == 1           # seen, not stopped
