"""Native guards (instrumenter/strategies/native_guard.py): the compiled predicate in front of a
native count or args append decides as `accepts` does on every argument word, and a part with
a guard leaves registers, flags and the red zone as they were, accepted or not.
"""
import struct
from types import SimpleNamespace

from hypothesis import assume, given, settings, strategies as st
import pytest

from emu.exits import TRAP
from instrumenter.insn.decode import decode
from instrumenter.strategies.native import PART_LIMIT, NativeSlot, NativeSpec, emit_part, fits
from instrumenter.strategies.native_guard import And, Arg, Compare, Const, Known, Not, Or, accepts
from tests.unit.emu.guest import ARCHES, CODE, DATA, STACK_SP, machine_with

AFTER = CODE + 0x800
ARG_REGS = ("rdi", "rsi", "rdx", "rcx", "r8", "r9")
OPS = ("==", "!=", "<", "<=", ">", ">=")
BITS = {"i386": 32, "x86_64": 64}


class GuestGuard:
    """A machine running a guarded count part: `decide(args)` is the guest's decision."""

    def __init__(self, arch: str, guard, kind: str = "count", flags_live: bool = True):
        self.arch, self.flags_live = arch, flags_live
        spec = NativeSpec(kind, 2 if kind == "args" else 0, capacity=64, guard=guard)
        self.slot = NativeSlot(SimpleNamespace(native=spec), CODE, counter=DATA, dropped=DATA + 8,
                               array=DATA + 16)
        self.m = machine_with(arch)
        self.m.mem.write(CODE, emit_part(self.slot, CODE, AFTER, arch, flags_live=flags_live))
        self.m.mem.write(AFTER, b"\xcc")
        self.m.mem.write(STACK_SP - 128, bytes(range(128)) + bytes(range(128, 256)))

    def set_args(self, args) -> None:
        if self.arch == "x86_64":
            for reg, value in zip(ARG_REGS, args):
                self.m.set_reg(reg, value)
        else:
            self.m.mem.write(STACK_SP, struct.pack("<7I", 0xDEAD, *args))

    def state(self):
        regs = self.m.registers()
        # dead status flags (flags_live=False) may change; nothing else may
        flags = regs.flags & 0x8D5 if self.flags_live else None
        return regs.gpr, flags, self.m.mem.read(STACK_SP - 128, 256)

    def count(self) -> int:
        word = "<Q" if self.slot.spec.kind == "count" or self.arch == "x86_64" else "<I"
        return struct.unpack(word, self.m.mem.read(DATA, struct.calcsize(word)))[0]

    def decide(self, args) -> bool:
        self.set_args(args)
        before_count, before = self.count(), self.state()
        exit_ = self.m.run(CODE)
        assert exit_.kind == TRAP and exit_.pc == AFTER + 1, exit_
        assert self.state() == before            # registers, status flags, red zone, caller frame
        return self.count() == before_count + 1


def words(arch: str):
    top = (1 << BITS[arch]) - 1
    # the boundaries matter most: 0, 1, the sign bits, the top
    edges = st.sampled_from([0, 1, 2, top, top - 1, 1 << (BITS[arch] - 1), (1 << 31) - 1, 1 << 31])
    return st.one_of(edges, st.integers(min_value=0, max_value=top), st.integers(0, 8))


CONSTANTS = st.one_of(st.integers(-3, 8), st.sampled_from([-(1 << 63), (1 << 63) - 1, (1 << 64) - 1,
                                                             1 << 64, (1 << 32) - 1, 1 << 32, 1 << 31,
                                                             (1 << 31) - 1, -1]),
                      st.integers(-(1 << 70), 1 << 70))
OPERANDS = st.one_of(st.builds(Arg, st.integers(0, 5)), st.builds(Const, CONSTANTS))
COMPARES = st.builds(Compare, st.sampled_from(OPS), OPERANDS, OPERANDS)
GUARDS = st.recursive(st.one_of(COMPARES, st.builds(Known, st.booleans())),
                      lambda inner: st.one_of(st.builds(And, inner, inner), st.builds(Or, inner, inner),
                                              st.builds(Not, inner)), max_leaves=5)


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("flags_live", [True, False])
@settings(max_examples=150, deadline=None)
@given(data=st.data(), guard=GUARDS)
def test_the_guest_decides_as_accepts_on_random_words(arch, flags_live, data, guard):
    assume(fits(NativeSpec("count", guard=guard)))   # a longer one is never placed
    guest = GuestGuard(arch, guard, flags_live=flags_live)
    # words equal to the guard's constants (and one off) are where < and <= part
    near = sorted({v + d for v in constants(guard) for d in (-1, 0, 1) if 0 <= v + d < 1 << BITS[arch]})
    word = st.one_of(words(arch), st.sampled_from(near)) if near else words(arch)
    args = data.draw(st.lists(word, min_size=6, max_size=6))
    assert guest.decide(args) == accepts(guard, args)


def constants(guard) -> set:
    if isinstance(guard, Compare):
        return {o.value for o in (guard.left, guard.right) if isinstance(o, Const)}
    if isinstance(guard, (And, Or)):
        return constants(guard.left) | constants(guard.right)
    return constants(guard.operand) if isinstance(guard, Not) else set()


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("flags_live", [True, False])
@pytest.mark.parametrize("op", OPS)
def test_each_comparison_against_its_boundaries_both_ways(arch, flags_live, op):
    """Unsigned comparisons at the values where signed ones would differ, in both orders,
    and with constants outside the word's range (decided at compile time)."""
    top = (1 << BITS[arch]) - 1
    values = [0, 1, 5, (1 << 31) - 1, 1 << 31, top - 1, top]
    constants = values + [-1, -(1 << 63), 1 << BITS[arch], 1 << 70]
    decided = {True: 0, False: 0}
    for constant in constants:
        for guard in (Compare(op, Arg(1), Const(constant)), Compare(op, Const(constant), Arg(1)),
                      Compare(op, Arg(1), Arg(4))):
            guest = GuestGuard(arch, guard, flags_live=flags_live)
            for value in values:
                args = [7, value, 0, 0, constant if 0 <= constant <= top else 5, 0]
                expected = accepts(guard, args)
                assert guest.decide(args) == expected, (guard, args)
                decided[expected] += 1
    assert decided[True] and decided[False]     # both outcomes were reached


@pytest.mark.parametrize("arch", ARCHES)
def test_a_guarded_args_part_stores_only_accepted_hits(arch):
    guard = Or(Compare(">", Arg(0), Const(100)), Compare("==", Arg(1), Const(3)))
    guest = GuestGuard(arch, guard, kind="args")
    calls = [(5, 3), (500, 1), (6, 2), (101, 9), (100, 4)]
    for a, b in calls:                          # a rejected hit leaves the index alone
        assert guest.decide([a, b, 0, 0, 0, 0]) == accepts(guard, [a, b])
    word = 8 if arch == "x86_64" else 4
    stored = struct.unpack(f"<6{'Q' if word == 8 else 'I'}", guest.m.mem.read(DATA + 16, 6 * word))
    assert guest.count() == 3
    assert [stored[0:2], stored[2:4], stored[4:6]] == [(5, 3), (500, 1), (101, 9)]


@pytest.mark.parametrize("arch", ARCHES)
def test_a_guarded_part_decodes_as_whole_instructions_and_fits_its_slot(arch):
    guard = And(Compare("<", Arg(0), Const(1 << 40)), Not(Compare("==", Arg(2), Arg(5))))
    for kind in ("count", "args"):
        spec = NativeSpec(kind, 6 if kind == "args" else 0, guard=guard)
        slot = NativeSlot(SimpleNamespace(native=spec), CODE, counter=DATA, dropped=DATA + 8, array=DATA + 16)
        code = emit_part(slot, CODE, AFTER, arch)
        offset = 0
        while offset < len(code):
            offset += decode(code[offset:], CODE + offset, arch).length
        assert offset == len(code) and fits(spec)
    long = Compare("==", Arg(0), Const(1 << 40))
    for _ in range(12):
        long = Or(long, Compare("==", Arg(1), Const(1 << 41)))
    assert not fits(NativeSpec("count", guard=long))      # too long: stays on the Python path


@pytest.mark.parametrize("arch", ARCHES)
def test_a_count_with_dead_flags_and_a_plain_guard_saves_nothing(arch):
    """The cheapest rejection: compare, jump (no stack, no flag save) where the flags are dead."""
    guard = Compare(">", Arg(0), Const(1000))
    slot = NativeSlot(SimpleNamespace(native=NativeSpec("count", guard=guard)), CODE, counter=DATA)
    code = emit_part(slot, CODE, AFTER, arch, flags_live=False)
    first = decode(code, CODE, arch)
    assert first.mnemonic == "cmp"
    wide = Compare(">", Arg(0), Const(1 << 40)) if arch == "x86_64" else Compare(">", Arg(0), Arg(1))
    slot = NativeSlot(SimpleNamespace(native=NativeSpec("count", guard=wide)), CODE, counter=DATA)
    assert decode(emit_part(slot, CODE, AFTER, arch, flags_live=False), CODE, arch).mnemonic == "lea"


def test_the_part_limit_is_the_slot_the_strategies_give_a_part():
    from instrumenter.strategies.jump import PART_SLOT
    from instrumenter.strategies.page_layout import slot_size
    assert PART_LIMIT == PART_SLOT == slot_size("x86_64", natives=[None]) - slot_size("x86_64")
