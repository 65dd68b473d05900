"""/proc/sys: the sysctl values programs read (kernel/sysctl.c and the tables of each subsystem).

Each entry is a file whose text is its value and a newline, as proc_dointvec and
proc_dostring print them. The fixed ones are the modeled kernel's defaults and read-only
(0444: a write is EACCES, even for root: proc_sys_permission). An entry whose value the model
uses is writable by root (0644) where Linux's is, with the checks of Linux's handler
(sysctl_write.py): the UTS names (kernel.py), fs.pipe-max-size (F_SETPIPE_SZ's limit for an
unprivileged caller, `Tunables`), fs.nr_open, fs.lease-break-time (how long a lease breaker
waits, leases.py), the inotify limits, the IPC ids' next_id and the IPC limits (ipc/limits.py).
A value the model would keep without using stays read-only rather than be kept and ignored.
"""
from dataclasses import dataclass
from typing import Callable

from .. import errno as E
from ..errno import GuestErrno
from .pipe_size import PIPE_MAX_SIZE, PIPE_USER_PAGES_SOFT, round_pipe_size
from .sysctl_write import int_in, int_writer

NR_OPEN, NR_OPEN_MIN, NR_OPEN_MAX = 1024 * 1024, 64, ((1 << 31) - 1) & -64
PID_MAX = 32768          # kernel/pid.c: PID_MAX_DEFAULT on a machine of few CPUs

FIXED: dict[bytes, bytes] = {
    b"kernel/pid_max": b"%d" % PID_MAX,
    b"kernel/ostype": b"Linux",
    b"kernel/ngroups_max": b"65536",      # NGROUPS_MAX (sysconf(_SC_NGROUPS_MAX): id, groups)
    b"kernel/tainted": b"0",              # kernel/panic.c: no taint flag (LTP's taint_check)
    b"kernel/core_pattern": b"core",      # fs/coredump.c core_pattern's default
    # drivers/char/random.c random_table: the pool is ready and stays so (fs/random_device.py)
    b"kernel/random/entropy_avail": b"256",
    b"kernel/random/poolsize": b"256",
    b"kernel/random/write_wakeup_threshold": b"256",
    b"kernel/random/urandom_min_reseed_secs": b"60",
    b"fs/pipe-user-pages-soft": b"%d" % PIPE_USER_PAGES_SOFT,
    b"fs/pipe-user-pages-hard": b"0",
    # fs/notify/inotify/inotify_user.c's default (as a 1 GiB machine's), which no watch counts
    b"fs/inotify/max_user_watches": b"29127",
}


@dataclass
class Sysctl:
    """One /proc/sys entry: its value's text (no newline), and for a writable one the writer
    (position, bytes) -> bytes taken (sysctl_write.py). `mode`: what stat shows when it is
    not 0644 (writable) or 0444: a table's own mode that a permissions hook widens for root,
    as ipc_permissions does for the IPC next_id values."""
    text: Callable[[], bytes]
    write: Callable[[int, bytes], int] | None = None
    mode: int | None = None

    @property
    def perm(self) -> int:
        if self.mode is not None:
            return self.mode
        return 0o644 if self.write else 0o444


@dataclass
class Tunables:
    """The /proc/sys values of the file system's own that root may change."""
    pipe_max_size: int = PIPE_MAX_SIZE
    nr_open: int = NR_OPEN                 # fs/file.c sysctl_nr_open: the most fds a table holds
    # fs/notify/inotify/inotify_user.c inotify_table: instances at once (EMFILE past it), and a
    # new instance's queue (then IN_Q_OVERFLOW); proc_dointvec_minmax from 0 (no top)
    inotify_max_user_instances: int = 128
    inotify_max_queued_events: int = 16384
    lease_break_time: int = 45             # fs/locks.c: how long a lease breaker waits, s

    def sysctls(self) -> dict[bytes, Sysctl]:
        table = {b"fs/pipe-max-size": Sysctl(lambda: b"%d" % self.pipe_max_size,
                                             int_writer(self._set_pipe_max_size, _pipe_max_size)),
                 b"fs/nr_open": Sysctl(lambda: b"%d" % self.nr_open,
                                       int_writer(self._set_nr_open, _nr_open)),
                 # proc_dointvec: any int (a negative one waits no time: leases.py)
                 b"fs/lease-break-time": Sysctl(lambda: b"%d" % self.lease_break_time,
                                                int_writer(self._set_lease_break_time, _int))}
        for name in ("max_user_instances", "max_queued_events"):
            table[b"fs/inotify/" + name.encode()] = self._int_sysctl("inotify_" + name)
        return table

    def _int_sysctl(self, attribute: str) -> Sysctl:
        """An int from 0 to INT_MAX kept as `attribute`."""
        def put(value: int) -> None:
            setattr(self, attribute, value)
        return Sysctl(lambda: b"%d" % getattr(self, attribute),
                      int_writer(put, int_in(0, (1 << 31) - 1)))

    def _set_lease_break_time(self, value: int) -> None:
        self.lease_break_time = value

    def _set_nr_open(self, value: int) -> None:
        self.nr_open = value

    def _set_pipe_max_size(self, value: int) -> None:
        self.pipe_max_size = value


def _int(value: int) -> int:
    """proc_dointvec's range: an int (EINVAL past it)."""
    if not -(1 << 31) <= value < 1 << 31:
        raise GuestErrno(E.EINVAL)
    return value


def _nr_open(value: int) -> int:
    """fs_stat_sysctls' nr_open: proc_dointvec_minmax from sysctl_nr_open_min (BITS_PER_LONG)
    to sysctl_nr_open_max (INT_MAX rounded down to a multiple of BITS_PER_LONG), else EINVAL."""
    if not NR_OPEN_MIN <= value <= NR_OPEN_MAX:
        raise GuestErrno(E.EINVAL)
    return value


def _pipe_max_size(value: int) -> int:
    """do_proc_dopipe_max_size_conv(): an unsigned int (proc_douintvec), rounded as a pipe's
    size is (round_pipe_size: 0, above 2**31, is EINVAL)."""
    if value < 0 or value > 0xFFFFFFFF:
        raise GuestErrno(E.EINVAL)
    size = round_pipe_size(value)
    if size == 0:
        raise GuestErrno(E.EINVAL)
    return size


def sysctl_table(dynamic: dict[bytes, Sysctl]) -> dict[bytes, Sysctl]:
    """Path under /proc/sys -> its entry, the fixed values and the kernel's."""
    table = {path: Sysctl(lambda value=value: value) for path, value in FIXED.items()}
    table.update(dynamic)
    return table

