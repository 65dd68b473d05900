"""Attach points: the text before a probe's block, as bpftrace writes them, parsed into what
trapline places (probes.py).

  BEGIN  END
  uprobe:BIN:FUNC  uprobe:BIN:FUNC+OFF  uprobe:BIN:0xADDR  uretprobe:BIN:FUNC   (u:, ur:)
      FUNC may have shell wildcards (uprobe:libc.so.6:str*), matched against each object
      named BIN the run maps, when it is mapped
  tracepoint:syscalls:sys_enter_NAME  tracepoint:syscalls:sys_exit_NAME           (t:)
      NAME may have wildcards (sys_enter_*)
  tracepoint:raw_syscalls:sys_enter  tracepoint:raw_syscalls:sys_exit   every call (args.id)
  syscall:NAME  proc:fork|vfork|exec|exit  signal:NAME                 trapline's own kinds
  interval:UNIT:N  (i:)  profile:hz:N  (p:)  on the virtual clock: s, ms, us, ns, hz
"""
import fnmatch
import re
from dataclasses import dataclass

from ..probespec import SYSCALL_NAMES

ALIASES = {"u": "uprobe", "ur": "uretprobe", "t": "tracepoint", "i": "interval", "p": "profile"}
TIME_UNITS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
WILDCARD = re.compile(r"[*?\[]")


class AttachError(ValueError):
    """What is wrong with an attach point (the checks put the caret under it)."""


@dataclass(frozen=True)
class Attach:
    text: str                    # as written, provider alias expanded (the `probe` builtin)
    kind: str                    # BEGIN END uprobe uretprobe tracepoint syscall proc signal interval profile
    binary: str = ""
    function: str = ""           # a name or a wildcard pattern
    offset: int = 0
    address: int | None = None
    syscall: str = ""            # tracepoints: the call's name or a pattern
    entry: bool = True           # sys_enter_ (True) or sys_exit_
    period_ns: int = 0           # interval/profile
    raw: bool = False            # tracepoint:raw_syscalls:sys_enter/sys_exit (args.id, args.ret)

    @property
    def wildcard(self) -> bool:
        return bool(WILDCARD.search(self.function or self.syscall))

    def matches_syscall(self, name: str) -> bool:
        return fnmatch.fnmatchcase(name, self.syscall)


def parse_attach(text: str) -> Attach:
    if text in ("BEGIN", "END"):
        return Attach(text, text)
    provider, _, rest = text.partition(":")
    provider = ALIASES.get(provider, provider)
    text = f"{provider}:{rest}"
    if provider in ("uprobe", "uretprobe"):
        return _uprobe(text, provider, rest)
    if provider == "tracepoint":
        return _tracepoint(text, rest)
    if provider in ("interval", "profile"):
        return _timed(text, provider, rest)
    if provider in ("syscall", "proc", "signal"):
        from ..probespec import parse_probe_spec
        try:
            parse_probe_spec(text)
        except Exception as bad:       # noqa: BLE001 -- the spec parser's own one-line reason
            raise AttachError(str(bad).split(": ", 1)[-1]) from None
        return Attach(text, provider)
    if provider in ("kprobe", "kretprobe", "kfunc", "kretfunc", "fentry", "fexit", "rawtracepoint",
                    "hardware", "software", "watchpoint", "usdt"):
        raise AttachError(f"{provider} probes are not available: the sandbox models no kernel "
                          "functions, USDT notes or hardware counters (uprobe, uretprobe, "
                          "tracepoint:syscalls, interval, profile are)")
    raise AttachError(f"unknown probe type {provider!r}")


def _uprobe(text: str, kind: str, rest: str) -> Attach:
    binary, sep, location = rest.rpartition(":")
    if not sep or not binary or not location:
        raise AttachError(f"{kind} needs {kind}:BIN:FUNC")
    if re.fullmatch(r"0[xX][0-9a-fA-F]+", location):
        if kind == "uretprobe":
            raise AttachError("uretprobe needs a function name")
        return Attach(text, kind, binary=binary, address=int(location, 16))
    function, plus, offset = location.partition("+")
    if plus:
        if kind == "uretprobe":
            raise AttachError("uretprobe takes no offset")
        try:
            return Attach(text, kind, binary=binary, function=function, offset=int(offset, 0))
        except ValueError:
            raise AttachError(f"bad offset {offset!r}") from None
    return Attach(text, kind, binary=binary, function=function)


def _tracepoint(text: str, rest: str) -> Attach:
    category, _, event = rest.partition(":")
    if category == "raw_syscalls" and event in ("sys_enter", "sys_exit"):
        return Attach(text, "tracepoint", syscall="*", entry=event == "sys_enter", raw=True)
    if category != "syscalls":
        raise AttachError(f"tracepoint category {category!r} is not modeled (tracepoint:syscalls "
                          "is: sys_enter_NAME, sys_exit_NAME; and tracepoint:raw_syscalls)")
    match = re.fullmatch(r"sys_(enter|exit)_(.+)", event)
    if match is None:
        raise AttachError(f"tracepoint:syscalls:{event}: expected sys_enter_NAME or sys_exit_NAME")
    name = match.group(2)
    if not WILDCARD.search(name) and name not in SYSCALL_NAMES:
        raise AttachError(f"no system call is named {name!r}")
    if WILDCARD.search(name) and not any(fnmatch.fnmatchcase(n, name) for n in SYSCALL_NAMES):
        raise AttachError(f"no system call matches {name!r}")
    return Attach(text, "tracepoint", syscall=name, entry=match.group(1) == "enter")


def _timed(text: str, kind: str, rest: str) -> Attach:
    unit, _, count = rest.partition(":")
    if not count.isdigit() or int(count) <= 0:
        raise AttachError(f"{kind} needs {kind}:UNIT:N with N a positive number")
    if unit == "hz":
        return Attach(text, kind, period_ns=max(1, 10**9 // int(count)))
    if unit not in TIME_UNITS:
        raise AttachError(f"{kind}: unit {unit!r}: expected s, ms, us, ns or hz")
    return Attach(text, kind, period_ns=TIME_UNITS[unit] * int(count))
