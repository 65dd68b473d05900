"""Guards: an integer predicate compiled in front of a native action (native.py), so a hit the
predicate rejects costs a few compare-and-jump instructions in the guest and never leaves the
emulator (issue 34: a rejecting predicate's rate is bench/lang_rate.py's).

A guard is a small tree over the probe's argument words and integer constants:
  Compare(op, left, right)   op one of == != < <= > >=, each side an Arg(i) or a Const(c)
  And(left, right), Or(left, right), Not(operand), Known(value)
Its meaning is Python's on the words as the tool reads them (instrumenter/probes/context.py
argument_words: unsigned, 64-bit on x86-64, 32-bit on i386) and the constants as written
(any sign or size): `accepts` is that meaning, and the emitted code computes the same, which
the tests check on random words. An argument word w lies in [0, 2^bits), so a comparison with
a constant outside that range has the same outcome for every w as it has for w = 0: it is
decided here, not in the guest; inside the range the comparison is unsigned (SDM Vol. 1,
3.4.3.1 and Vol. 2 Jcc: JB/JBE/JA/JAE after CMP). && and || short-circuit into jumps, as a
compiler lays out a condition (no value is ever materialised).

Where the code runs: after native.py's part has moved the stack below the red zone and saved
the status flags and (e/r)ax (SAVE_FLAGS), so the guard may clobber both; x86-64 reads the
arguments in their registers (System V AMD64 psABI 3.2.3), i386 from the caller's frame above
the return address (System V i386 psABI 2.2), [esp + 128 + 8 + 4 + 4i] there.
"""
import operator
import struct
from dataclasses import dataclass

from ..errors import InstrumenterError
from ..insn.emit import RED_ZONE, REG_NUMBERS, Emitter
from ..probes.context import X86_64_ARGUMENT_REGISTERS

MAX_GUARD_ARGS = 6                 # the registers x86-64 passes arguments in
SAVED_DEPTH = RED_ZONE + 8         # a saving part moved esp by the red zone, pushed eax and the flags


@dataclass(frozen=True)
class Arg:
    index: int


@dataclass(frozen=True)
class Const:
    value: int


@dataclass(frozen=True)
class Compare:
    op: str
    left: Arg | Const
    right: Arg | Const


@dataclass(frozen=True)
class And:
    left: object
    right: object


@dataclass(frozen=True)
class Or:
    left: object
    right: object


@dataclass(frozen=True)
class Not:
    operand: object


@dataclass(frozen=True)
class Known:
    value: bool


COMPARE = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
           ">": operator.gt, ">=": operator.ge}
_NEGATED = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", "<=": ">", ">": "<="}
_MIRRORED = {"==": "==", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}
# jcc condition codes, unsigned (SDM Vol. 2A, Jcc): the second opcode byte is 0x80 | cc
_UNSIGNED_CC = {"==": 0x4, "!=": 0x5, "<": 0x2, "<=": 0x6, ">": 0x7, ">=": 0x3}


# ---- meaning -----------------------------------------------------------------------------
def accepts(guard, args) -> bool:
    """The guard on argument words `args` (what the emitted code decides)."""
    if isinstance(guard, Compare):
        return COMPARE[guard.op](_value(guard.left, args), _value(guard.right, args))
    if isinstance(guard, And):
        return accepts(guard.left, args) and accepts(guard.right, args)
    if isinstance(guard, Or):
        return accepts(guard.left, args) or accepts(guard.right, args)
    if isinstance(guard, Not):
        return not accepts(guard.operand, args)
    return guard.value


def _value(operand, args) -> int:
    return args[operand.index] if isinstance(operand, Arg) else operand.value


def words(guard) -> int:
    """How many argument words the guard reads (the highest index + 1)."""
    if isinstance(guard, Compare):
        return max((o.index + 1 for o in (guard.left, guard.right) if isinstance(o, Arg)), default=0)
    if isinstance(guard, (And, Or)):
        return max(words(guard.left), words(guard.right))
    if isinstance(guard, Not):
        return words(guard.operand)
    return 0


def any_of(guards: list):
    """The guard accepting what any of `guards` accepts (Known(True) absorbs the others)."""
    result = None
    for guard in guards:
        if guard == Known(True):
            return guard
        result = guard if result is None else Or(result, guard)
    return Known(False) if result is None else result


# ---- code --------------------------------------------------------------------------------
class _Labels:
    """rel32 jumps to labels bound later (every jump is 5 or 6 bytes, so sizes never change)."""

    def __init__(self, e: Emitter):
        self.e, self.bound, self.uses, self.depth = e, {}, [], SAVED_DEPTH

    def new(self) -> list:
        return []                       # a label is a fresh object; identity is its name

    def bind(self, label: list) -> None:
        self.bound[id(label)] = len(self.e.code)

    def jcc(self, cc: int, label: list) -> None:
        self.e.raw(bytes((0x0F, 0x80 | cc)) + b"\0\0\0\0")
        self.uses.append((len(self.e.code), label))

    def jmp(self, label: list) -> None:
        self.e.raw(b"\xe9\0\0\0\0")
        self.uses.append((len(self.e.code), label))

    def resolve(self) -> None:
        for end, label in self.uses:
            self.e.code[end - 4:end] = struct.pack("<i", self.bound[id(label)] - end)


def emit_guard(e: Emitter, guard, arch: str, depth: int = SAVED_DEPTH):
    """Code at e.here that falls through when `guard` accepts the hit and jumps away when it
    does not; `depth`: how far the stack pointer is below its value at the function's entry
    (i386 reads the arguments from the caller's frame). Returns `land`: called where a
    rejected hit goes on (after the action), it binds that place and fills in the jumps."""
    if words(guard) > MAX_GUARD_ARGS:
        raise InstrumenterError(f"a native guard reads at most {MAX_GUARD_ARGS} argument words")
    labels = _Labels(e)
    labels.depth = depth
    rejected = labels.new()
    _jump_if(labels, guard, False, rejected, arch)

    def land() -> None:
        labels.bind(rejected)
        labels.resolve()
    return land


def needs_scratch(guard, arch: str) -> bool:
    """Whether the guard's code uses (e/r)ax: x86-64 for a constant that no sign-extended
    imm32 holds, i386 to compare two arguments (both in memory)."""
    if isinstance(guard, (And, Or)):
        return needs_scratch(guard.left, arch) or needs_scratch(guard.right, arch)
    if isinstance(guard, Not):
        return needs_scratch(guard.operand, arch)
    if not isinstance(guard, Compare):
        return False
    left, right = guard.left, guard.right
    if arch == "i386":
        return isinstance(left, Arg) and isinstance(right, Arg)
    constant = right if isinstance(right, Const) else left if isinstance(left, Const) else None
    other = left if constant is right else right
    return constant is not None and isinstance(other, Arg) and (1 << 31) <= constant.value < (1 << 64)


def _jump_if(labels: _Labels, guard, sense: bool, target: list, arch: str) -> None:
    """Jump to `target` when the guard's outcome is `sense`; fall through otherwise."""
    if isinstance(guard, Not):
        _jump_if(labels, guard.operand, not sense, target, arch)
    elif isinstance(guard, (And, Or)):
        # And jumping on False (Or on True): either side decides alone. The other way both
        # must agree: the first side's opposite outcome skips the second.
        alone = isinstance(guard, And) != sense
        if alone:
            _jump_if(labels, guard.left, sense, target, arch)
            _jump_if(labels, guard.right, sense, target, arch)
        else:
            skip = labels.new()
            _jump_if(labels, guard.left, not sense, skip, arch)
            _jump_if(labels, guard.right, sense, target, arch)
            labels.bind(skip)
    elif isinstance(guard, Compare):
        _compare(labels, guard, sense, target, arch)
    elif guard.value == sense:
        labels.jmp(target)


def _compare(labels: _Labels, guard: Compare, sense: bool, target: list, arch: str) -> None:
    op, left, right = guard.op, guard.left, guard.right
    if isinstance(left, Const):
        op, left, right = _MIRRORED[op], right, left
    if isinstance(left, Const):                              # two constants
        _jump_if(labels, Known(COMPARE[op](left.value, right.value)), sense, target, arch)
        return
    bits = 64 if arch == "x86_64" else 32
    if isinstance(right, Const) and not 0 <= right.value < 1 << bits:
        # Every word compares with it as 0 does (the words are in [0, 2^bits)).
        _jump_if(labels, Known(COMPARE[op](0, right.value)), sense, target, arch)
        return
    if arch == "x86_64":
        _cmp_x86_64(labels.e, left, right)
    else:
        _cmp_i386(labels.e, left, right, labels.depth)
    labels.jcc(_UNSIGNED_CC[op if sense else _NEGATED[op]], target)


def _cmp_x86_64(e: Emitter, left: Arg, right) -> None:
    """cmp <left's register>, <right> (flags as for left - right)."""
    a = REG_NUMBERS[X86_64_ARGUMENT_REGISTERS[left.index]]
    if isinstance(right, Const) and right.value < 1 << 31:
        # cmp r/m64, imm32: the immediate is sign-extended, so only below 2^31 (SDM Vol. 2A, CMP)
        e.raw(bytes((0x48 | (a >> 3), 0x81, 0xF8 | (a & 7))) + struct.pack("<I", right.value))
        return
    if isinstance(right, Const):
        e.raw(b"\x48\xb8" + struct.pack("<Q", right.value))          # mov rax, imm64
        b = REG_NUMBERS["rax"]
    else:
        b = REG_NUMBERS[X86_64_ARGUMENT_REGISTERS[right.index]]
    # cmp r/m64, r64 (REX.W 39 /r): r/m is left, reg is right
    e.raw(bytes((0x48 | ((b >> 3) << 2) | (a >> 3), 0x39, 0xC0 | ((b & 7) << 3) | (a & 7))))


def _stack_argument(index: int, depth: int) -> int:
    """esp-relative offset of i386 argument `index` with esp `depth` bytes below its value at
    the function's entry, where [esp] is the return address."""
    return depth + 4 + 4 * index


def _cmp_i386(e: Emitter, left: Arg, right, depth: int) -> None:
    where = struct.pack("<I", _stack_argument(left.index, depth))
    if isinstance(right, Const):
        e.raw(b"\x81\xbc\x24" + where + struct.pack("<I", right.value))   # cmp dword [esp+d], imm32
        return
    e.raw(b"\x8b\x84\x24" + struct.pack("<I", _stack_argument(right.index, depth)))  # mov eax, [esp+d]
    e.raw(b"\x39\x84\x24" + where)                                    # cmp [esp+d], eax

