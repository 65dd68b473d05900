"""Probe specs in bpftrace form:

  uprobe:BIN:FUNC   uprobe:BIN:FUNC+OFF   uprobe:BIN:0xADDR   uretprobe:BIN:FUNC   syscall:NAME

Bad specs give one line saying what was expected.
"""
import re

from instrumenter.tracing.probes import SYSCALL, UPROBE, URETPROBE, ProbeSpec
from kernel_model.syscalls.numbers_i386 import NUMBERS as I386_SYSCALLS
from kernel_model.syscalls.numbers_x86_64 import NUMBERS as X86_64_SYSCALLS

from .errors import UsageError

EXPECTED = ("expected uprobe:BIN:FUNC, uprobe:BIN:FUNC+OFF, uprobe:BIN:0xADDR, "
            "uretprobe:BIN:FUNC or syscall:NAME")
_SYMBOL = re.compile(r"^[A-Za-z_.$][\w.$@]*$")
# A syscall probe fires on a name from either ABI's table (a typo would never fire).
SYSCALL_NAMES = frozenset(I386_SYSCALLS.values()) | frozenset(X86_64_SYSCALLS.values())


def parse_probe_spec(text: str) -> ProbeSpec:
    kind, sep, rest = text.partition(":")
    if not sep:
        raise UsageError(f"bad probe spec {text!r}: {EXPECTED}")
    if kind == SYSCALL:
        if not re.fullmatch(r"[a-z_0-9]+", rest):
            raise UsageError(f"bad probe spec {text!r}: syscall:NAME needs a syscall name")
        if rest not in SYSCALL_NAMES:
            raise UsageError(f"bad probe spec {text!r}: no Linux syscall is named {rest!r} "
                             "(i386 or x86-64 tables)")
        return ProbeSpec(text, SYSCALL, syscall=rest)
    if kind not in (UPROBE, URETPROBE):
        raise UsageError(f"bad probe spec {text!r}: unknown probe type {kind!r}; {EXPECTED}")
    binary, sep, location = rest.rpartition(":")
    if not sep or not binary or not location:
        raise UsageError(f"bad probe spec {text!r}: {EXPECTED}")
    if re.fullmatch(r"0[xX][0-9a-fA-F]+", location):
        if kind == URETPROBE:
            raise UsageError(f"bad probe spec {text!r}: uretprobe needs a function name")
        return ProbeSpec(text, kind, binary=binary, address=int(location, 16))
    function, plus, offset_text = location.partition("+")
    if not _SYMBOL.match(function):
        raise UsageError(f"bad probe spec {text!r}: {function!r} is not a symbol name")
    offset = 0
    if plus:
        try:
            offset = int(offset_text, 0)
        except ValueError:
            raise UsageError(f"bad probe spec {text!r}: bad offset {offset_text!r}") from None
        if kind == URETPROBE:
            raise UsageError(f"bad probe spec {text!r}: uretprobe takes no offset")
    return ProbeSpec(text, kind, binary=binary, function=function, offset=offset)
