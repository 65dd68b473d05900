"""/proc/sys: the sysctl values programs read (kernel/sysctl.c and the tables of each subsystem).

Each entry is a file whose text is its value and a newline, as proc_dointvec and
proc_dostring print them. The fixed ones are the modeled kernel's defaults; the kernel adds
the ones that follow its state (the UTS names, kernel.py). Read-only (mode 0444: opening one
for writing is EACCES, as proc_sys_permission answers a table entry without write bits) except
the tunables the kernel registers with a store (mode 0644, root writes them): a write of the
value's text sets it, through the store, which refuses what proc_dointvec_minmax would (EINVAL).
"""
from typing import Callable

from .. import errno as E
from ..errno import GuestErrno
from .node import BytesHandle, wants_write
from .pipe_size import PIPE_MAX_SIZE, PIPE_USER_PAGES_SOFT
from .synthetic import GeneratedFile

PID_MAX = 32768          # kernel/pid.c: PID_MAX_DEFAULT on a machine of few CPUs

FIXED: dict[bytes, bytes] = {
    b"kernel/pid_max": b"%d" % PID_MAX,
    b"kernel/ostype": b"Linux",
    b"kernel/ngroups_max": b"65536",      # NGROUPS_MAX (sysconf(_SC_NGROUPS_MAX): id, groups)
    b"kernel/tainted": b"0",              # kernel/panic.c: no taint flag (LTP's taint_check)
    b"kernel/core_pattern": b"core",      # fs/coredump.c core_pattern's default
    b"fs/pipe-max-size": b"%d" % PIPE_MAX_SIZE,
    b"fs/pipe-user-pages-soft": b"%d" % PIPE_USER_PAGES_SOFT,
    b"fs/pipe-user-pages-hard": b"0",
    b"fs/lease-break-time": b"45",
    b"fs/nr_open": b"1048576",
    # fs/notify/inotify/inotify_user.c: the defaults (max_user_watches as a 1 GiB machine's)
    b"fs/inotify/max_queued_events": b"16384",
    b"fs/inotify/max_user_instances": b"128",
    b"fs/inotify/max_user_watches": b"29127",
}


def sysctl_table(dynamic: dict[bytes, Callable[[], bytes]]) -> dict[bytes, Callable[[], bytes]]:
    """Path under /proc/sys -> its text, the fixed values and the kernel's."""
    table = {path: (lambda value=value: value + b"\n") for path, value in FIXED.items()}
    table.update({path: (lambda get=get: get() + b"\n") for path, get in dynamic.items()})
    return table


def integer_value(data: bytes, low: int = 0, high: int = (1 << 31) - 1) -> int:
    """kernel/sysctl.c proc_dointvec_minmax's parse of a write: one decimal integer, blanks
    around it, within [low, high]; anything else is EINVAL."""
    try:
        value = int(data.strip(b" \t\n\0"))
    except ValueError:
        raise GuestErrno(E.EINVAL) from None
    if not low <= value <= high:
        raise GuestErrno(E.EINVAL)
    return value


class TunableFile(GeneratedFile):
    """A sysctl root may write (mode 0644): read, its text; written, `store(bytes)` sets it."""

    def __init__(self, mount: str, meta, text: Callable[[], bytes], store: Callable[[bytes], None]):
        super().__init__(mount, meta, text)
        self._store = store

    def open_handle(self, flags: int) -> BytesHandle:
        if wants_write(flags):
            return _StoreHandle(self._store, self.stat())
        return super().open_handle(flags)


class _StoreHandle(BytesHandle):
    """An open for writing: each write(2) is one value, as proc_sys_call_handler hands the
    buffer of each write to the table's handler; O_TRUNC changes nothing."""

    def __init__(self, store: Callable[[bytes], None], stat):
        super().__init__(b"", stat)
        self._store = store

    def write_at(self, offset: int, data: bytes) -> int:
        self._store(data)
        return len(data)

    def truncate(self, length: int) -> None:
        pass
