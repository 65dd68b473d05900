"""Probe specs in bpftrace form:

  uprobe:BIN:FUNC   uprobe:BIN:FUNC+OFF   uprobe:BIN:0xADDR   uretprobe:BIN:FUNC   syscall:NAME
  proc:fork   proc:vfork   proc:exec   proc:exit   signal:NAME (SIGUSR1 or USR1, or a number)
  profile:EVENT:N[:stack]   a record every N guest instructions (EVENT insn or insns), system
                            calls (syscalls), taken branches (branches) or page faults (faults)

Bad specs give one line saying what was expected.
"""
import re

from instrumenter.probes.definitions import (PROC, PROC_EVENTS, PROFILE, SIGNAL, SYSCALL, UPROBE,
                                         URETPROBE, ProbeSpec)
from kernel_model.signals import SIGNAL_NAMES
from kernel_model.syscalls.numbers_i386 import NUMBERS as I386_SYSCALLS
from kernel_model.syscalls.numbers_x86_64 import NUMBERS as X86_64_SYSCALLS

from .errors import UsageError

EXPECTED = ("expected uprobe:BIN:FUNC, uprobe:BIN:FUNC+OFF, uprobe:BIN:0xADDR, "
            "uretprobe:BIN:FUNC, syscall:NAME, proc:fork|vfork|exec|exit, signal:NAME or "
            "profile:insns|syscalls|branches|faults:N[:stack]")
# profile:EVENT:N -- the profiling timer's events (kernel_model/time/timer.py), `insn` as bpftrace-ish
PROFILE_EVENTS = {"insn": "insns", "insns": "insns", "syscalls": "syscalls", "branches": "branches",
                  "faults": "faults"}
_SYMBOL = re.compile(r"^[A-Za-z_.$][\w.$@]*$")
# A syscall probe fires on a name from either ABI's table (a typo would never fire).
SYSCALL_NAMES = frozenset(I386_SYSCALLS.values()) | frozenset(X86_64_SYSCALLS.values())
# signal:NAME takes strace's names (SIGUSR1, SIGRTMIN, SIGRT_2), without SIG too, or 1..64.
_SIGNALS = {name: number for number, name in SIGNAL_NAMES.items()}


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
    if kind == PROC:
        if rest not in PROC_EVENTS:
            raise UsageError(f"bad probe spec {text!r}: proc: takes one of {', '.join(PROC_EVENTS)}")
        return ProbeSpec(text, PROC, event=rest)
    if kind == SIGNAL:
        return ProbeSpec(text, SIGNAL, signal=_signal_number(text, rest))
    if kind == PROFILE:
        return _profile_spec(text, rest)
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


def _signal_number(text: str, name: str) -> int:
    if name.isdigit():
        number = int(name)
        if number in SIGNAL_NAMES:
            return number
        raise UsageError(f"bad probe spec {text!r}: signals are numbered 1..64")
    upper = name.upper()
    number = _SIGNALS.get(upper) or _SIGNALS.get("SIG" + upper)
    if number is None:
        raise UsageError(f"bad probe spec {text!r}: no signal is named {name!r} "
                         "(SIGUSR1, USR1, SIGRTMIN, SIGRT_2, or 1..64)")
    return number


def _profile_spec(text: str, rest: str) -> ProbeSpec:
    """profile:EVENT:N or profile:EVENT:N:stack."""
    parts = rest.split(":")
    stack = len(parts) == 3 and parts[2] == "stack"
    if len(parts) not in (2, 3) or (len(parts) == 3 and not stack):
        raise UsageError(f"bad probe spec {text!r}: profile:EVENT:N[:stack] expected")
    event = PROFILE_EVENTS.get(parts[0])
    if event is None:
        raise UsageError(f"bad probe spec {text!r}: profile: counts one of "
                         f"{', '.join(PROFILE_EVENTS)}, not {parts[0]!r}")
    if not parts[1].isdigit() or int(parts[1]) <= 0:
        raise UsageError(f"bad probe spec {text!r}: profile:{parts[0]}:N needs a positive count")
    return ProbeSpec(text, PROFILE, event=event, interval=int(parts[1]), stack=stack)
