"""Time namespaces (kernel/time/namespace.c): offsets to CLOCK_MONOTONIC and CLOCK_BOOTTIME.

unshare(CLONE_NEWTIME) makes a namespace for the caller's children to come (its own clocks do
not change: time_for_children); until a task enters it (fork, setns) its offsets may be set
through /proc/PID/timens_offsets, afterwards that is EACCES (frozen_offsets). The initial
namespace's offsets are 0 and frozen. A clock read in a namespace adds its offset to the
monotonic and boot-time clocks (timens_add_monotonic, timens_add_boottime), and an absolute
time given for them is taken back to the host's (timens_ktime_to_host): the model's clocks read
through clock_ns (syscalls/impls/timecalls.py), which every absolute deadline is converted by.

The file shows `"%-10s %10lld %9ld\\n"` per clock (show_offset) and takes up to two lines of
"CLOCK SECONDS NANOSECONDS", the clock named or numbered (1 monotonic, 7 boottime): EINVAL for
anything else or nanoseconds past a second, ERANGE for seconds past KTIME_SEC_MAX, EPERM without
CAP_SYS_TIME; the sum with the clock's current value is not range-checked in the model.

Namespaces other than the initial one are numbered from 0xF0000000, proc_alloc_inum's first
dynamic number, in the order the run makes them.
"""
from itertools import count

from . import errno as E
from .errno import GuestErrno

CLOCK_MONOTONIC, CLOCK_BOOTTIME = 1, 7
MONOTONIC_CLOCKS = (1, 4, 6)          # MONOTONIC, _RAW, _COARSE
BOOTTIME_CLOCKS = (7, 9)              # BOOTTIME, BOOTTIME_ALARM
NAMES = {b"monotonic": CLOCK_MONOTONIC, b"1": CLOCK_MONOTONIC, b"boottime": CLOCK_BOOTTIME,
         b"7": CLOCK_BOOTTIME}
INITIAL_INUM, FIRST_DYNAMIC_INUM = 0xEFFFFFFA, 0xF0000000
KTIME_SEC_MAX = (2**63 - 1) // 10**9
NS = 10**9
CAP_SYS_TIME = 25


class TimeNamespace:
    def __init__(self, inum: int, *, frozen: bool = False):
        self.inum = inum
        self.offsets = {CLOCK_MONOTONIC: 0, CLOCK_BOOTTIME: 0}       # ns
        self.frozen = frozen

    def offset(self, clock_id: int) -> int:
        if clock_id in MONOTONIC_CLOCKS:
            return self.offsets[CLOCK_MONOTONIC]
        if clock_id in BOOTTIME_CLOCKS:
            return self.offsets[CLOCK_BOOTTIME]
        return 0

    def show(self) -> bytes:
        lines = []
        for name, clock in ((b"monotonic", CLOCK_MONOTONIC), (b"boottime", CLOCK_BOOTTIME)):
            sec, nsec = divmod(self.offsets[clock], NS)
            lines.append(b"%-10s %10d %9d\n" % (name, sec, nsec))
        return b"".join(lines)

    def write(self, data: bytes, may_set_time: bool) -> int:
        """timens_offsets_write() and proc_timens_set_offset()."""
        offsets = [_parse(line) for line in data.split(b"\n")[:2] if line.strip()]
        if not offsets:
            raise GuestErrno(E.EINVAL)
        if not may_set_time:
            raise GuestErrno(E.EPERM)
        if any(abs(sec) > KTIME_SEC_MAX for _, sec, _ in offsets):
            raise GuestErrno(E.ERANGE)
        if self.frozen:
            raise GuestErrno(E.EACCES)
        for clock, sec, nsec in offsets:
            self.offsets[clock] = sec * NS + nsec
        return len(data)


def _parse(line: bytes) -> tuple[int, int, int]:
    """sscanf("%9s %lld %lu")."""
    words = line.split()
    if len(words) < 3 or words[0] not in NAMES:
        raise GuestErrno(E.EINVAL)
    try:
        sec, nsec = int(words[1], 10), int(words[2], 10)
    except ValueError:
        raise GuestErrno(E.EINVAL) from None
    if not 0 <= nsec < NS:
        raise GuestErrno(E.EINVAL)
    return NAMES[words[0]], sec, nsec


INITIAL = TimeNamespace(INITIAL_INUM, frozen=True)


class TimeNamespaces:
    """The run's time namespaces: the numbers new ones get."""

    def __init__(self, inums=None):
        self._inums = count(FIRST_DYNAMIC_INUM) if inums is None else inums

    def new(self) -> TimeNamespace:
        return TimeNamespace(self.inum())

    def inum(self) -> int:
        """proc_alloc_inum: the next number of any kind's new namespace (the mount, UTS and
        IPC ones too: process/namespaces.py)."""
        return next(self._inums)


def for_child(parent) -> dict:
    """copy_namespaces and timens_on_fork: a child lives in its parent's namespace for
    children, whose offsets are then frozen."""
    ns = parent.time_ns_for_children
    ns.frozen = True
    return {"time_ns": ns, "time_ns_for_children": ns}


def enter(proc, ns: TimeNamespace) -> None:
    """timens_install + timens_commit (setns): the caller and its children to come."""
    ns.frozen = True
    proc.time_ns = proc.time_ns_for_children = ns
