"""Native actions (instrumenter/strategies/native.py): the in-guest code counts and records arguments,
leaves every register, the flags and the red zone as they were, and counts what does not fit.
"""
import struct
from types import SimpleNamespace

import pytest

from emu.exits import TRAP
from instrumenter.insn.decode import decode
from instrumenter.errors import InstrumenterError
from instrumenter.strategies.native import NativeSlot, NativeSpec, emit_part, parse_native
from tests.unit.emu.guest import ARCHES, CODE, DATA, STACK_SP, machine_with

AFTER = CODE + 0x800            # where each part jumps on to: an int3 ends the run
ARG_REGS = ("rdi", "rsi", "rdx", "rcx", "r8", "r9")


def _slot(spec: NativeSpec) -> NativeSlot:
    hook = SimpleNamespace(native=spec)
    if spec.kind == "count":
        return NativeSlot(hook, CODE, counter=DATA)
    return NativeSlot(hook, CODE, counter=DATA, dropped=DATA + 8, array=DATA + 16)


def _machine(arch: str, slot: NativeSlot):
    m = machine_with(arch)
    m.mem.write(CODE, emit_part(slot, CODE, AFTER, arch))
    m.mem.write(AFTER, b"\xcc")
    # A recognisable red zone (x86-64 psABI 3.2.2) and caller frame around the stack pointer.
    m.mem.write(STACK_SP - 128, bytes(range(128)) + bytes(range(128, 256)))
    return m


def _state(m, arch):
    regs = m.registers()
    return regs.gpr, regs.flags & 0x8D5, m.mem.read(STACK_SP - 128, 256)


def _run(m):
    exit_ = m.run(CODE)
    assert exit_.kind == TRAP and exit_.pc == AFTER + 1, exit_


def test_native_specs_parse_and_bad_ones_are_one_line_errors():
    assert parse_native("count") == NativeSpec("count")
    assert parse_native("args:3") == NativeSpec("args", 3)
    for bad in ("args:0", "args:7", "args", "sum", "args:x"):
        with pytest.raises(InstrumenterError, match="expected count or args:N"):
            parse_native(bad)


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("spec", [NativeSpec("count"), NativeSpec("args", 6, capacity=4)])
def test_the_parts_decode_as_whole_instructions(arch, spec):
    code = emit_part(_slot(spec), CODE, AFTER, arch)
    offset = 0
    while offset < len(code):
        offset += decode(code[offset:], CODE + offset, arch).length
    assert offset == len(code)
    last = decode(code[-5:], CODE + len(code) - 5, arch)
    assert last.mnemonic == "jmp" and last.branch_target == AFTER


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("flags", [0x2, 0x8D7])
def test_count_increments_a_64_bit_counter_and_changes_nothing_else(arch, flags):
    m = _machine(arch, _slot(NativeSpec("count")))
    m.mem.write(DATA, struct.pack("<Q", 0xFFFF_FFFE))        # i386: the carry into the high half
    m.set_reg("eflags" if arch == "i386" else "rflags", flags)
    before = _state(m, arch)
    _run(m)
    _run(m)
    assert struct.unpack("<Q", m.mem.read(DATA, 8))[0] == 0x1_0000_0000
    # Registers, status flags, the red zone and the caller's frame: all as before (the saved
    # flags went below the red zone).
    assert _state(m, arch) == before


@pytest.mark.parametrize("arch", ARCHES)
def test_args_appends_records_and_a_full_buffer_traps_to_be_drained(arch):
    """Two appends fill a 2-record buffer; the third stops at the part's drain trap with the
    index at the capacity and nothing written past it. Drained as the collector does (index
    back to 0, the thread sent to the sequence's start), it stores its record at 0."""
    slot = _slot(NativeSpec("args", 3, capacity=2))
    m = _machine(arch, slot)
    word = 4 if arch == "i386" else 8
    fmt = "<I" if word == 4 else "<Q"
    records = []

    def set_args(call):
        args = [1000 * call + i + 1 for i in range(3)]
        if arch == "x86_64":
            for reg, value in zip(ARG_REGS, args):
                m.set_reg(reg, value | (call << 40))
            records.append(tuple(a | (call << 40) for a in args))
        else:
            # cdecl at entry: [esp] is the return address, the arguments follow it.
            m.mem.write(STACK_SP, struct.pack("<4I", 0xDEAD, *args))
            records.append(tuple(args))

    def stored():
        return struct.unpack(f"<6{fmt[1]}", m.mem.read(DATA + 16, 6 * word))
    for call in range(2):
        set_args(call)
        before = _state(m, arch)
        _run(m)
        assert _state(m, arch) == before                     # registers, flags, red zone, frame
    assert [stored()[0:3], stored()[3:6]] == records[:2]
    set_args(2)
    start, commit, trap = (CODE + offset for offset in slot.sequence)
    exit_ = m.run(CODE)
    assert exit_.kind == TRAP and exit_.pc == trap + 1       # the drain trap, nothing lost
    assert struct.unpack(fmt, m.mem.read(DATA, word))[0] == 2
    assert [stored()[0:3], stored()[3:6]] == records[:2]
    m.mem.write(DATA, bytes(word))                           # drained
    exit_ = m.run(start)
    assert exit_.kind == TRAP and exit_.pc == AFTER + 1
    assert struct.unpack(fmt, m.mem.read(DATA, word))[0] == 1 and stored()[0:3] == records[2]
    assert struct.unpack("<Q", m.mem.read(DATA + 8, 8))[0] == 0  # no drop counted


@pytest.mark.parametrize("arch", ARCHES)
def test_count_where_the_flags_are_dead_is_one_locked_instruction_and_touches_no_stack(arch):
    slot = _slot(NativeSpec("count"))
    code = emit_part(slot, CODE, AFTER, arch, flags_live=False)
    first = decode(code, CODE, arch)
    assert first.mnemonic.startswith("lock")
    m = _machine(arch, slot)
    m.mem.write(CODE, code)
    gpr, _, stack = _state(m, arch)
    _run(m)
    assert struct.unpack("<Q", m.mem.read(DATA, 8))[0] == 1
    after_gpr, _, after_stack = _state(m, arch)
    assert (after_gpr, after_stack) == (gpr, stack)     # only the (dead) status flags may change


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("source,dead", [
    ("push {bp}; mov {bp}, {sp}; sub {sp}, 16", True),         # sub writes all six first
    ("push {bp}; cmp eax, 1; ja out; out: ret", True),
    ("push {bp}; inc eax; cmp eax, 1", True),                 # inc leaves CF, cmp writes it
    ("inc eax; jc out; cmp eax, 1; out: ret", False),         # CF read before written
    ("push {bp}; adc eax, 1", False),                         # adc reads CF
    ("pushf; cmp eax, 1", False),                             # pushf reads them all
    ("push {bp}; call out; out: cmp eax, 1", False),          # leaves the straight line
    ("push {bp}; mov {bp}, {sp}", False),                     # the end: assume live
    ("loop out; add eax, 0; out: ret", False),                # loop may skip the add
    ("shl eax, cl; cmp eax, 1", True),                        # cmp writes them all anyway
    ("shl eax, cl; push {bp}", False),                        # CL may be 0: nothing written
    ("shl eax, 3; push {bp}", True),                          # a count of 3 writes all six
    ("shr eax, 32; push {bp}", False),                        # 32 masks to 0 (5 bits)
    ("rol eax, 1; push {bp}", False),                         # rotates write only CF and OF
    ("shld eax, ebx, cl; push {bp}", False),
])
def test_status_flags_are_dead_only_when_overwritten_before_any_read(arch, source, dead):
    from instrumenter.strategies.native import status_flags_dead
    from tests.unit.emu.guest import asm
    bp, sp = ("ebp", "esp") if arch == "i386" else ("rbp", "rsp")
    code = asm(source.format(bp=bp, sp=sp), arch, CODE)
    insns, offset = [], 0
    while offset < len(code):
        insns.append(decode(code[offset:], CODE + offset, arch))
        offset += insns[-1].length
    assert status_flags_dead(insns) is dead
