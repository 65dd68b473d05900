"""/proc/sys: the sysctl values programs read (kernel/sysctl.c and the tables of each subsystem).

Each entry is a file whose text is its value and a newline, as proc_dointvec and
proc_dostring print them. The fixed ones are the modeled kernel's defaults; the kernel adds
the ones that follow its state (the UTS names, kernel.py). Read-only: the sandbox models no
tuning, so a write fails (EBADF, the file is not opened for writing) rather than being kept
and ignored.
"""
from typing import Callable

from .pipe_size import PIPE_MAX_SIZE, PIPE_USER_PAGES_SOFT

# include/linux/mm.h DEFAULT_MAX_MAP_COUNT (kernel_model/memory/vm.py enforces it; fs/ does not
# import the page mapper, which brings the emulator)
MAX_MAP_COUNT = 65530
PID_MAX = 32768          # kernel/pid.c: PID_MAX_DEFAULT on a machine of few CPUs

FIXED: dict[bytes, bytes] = {
    b"kernel/pid_max": b"%d" % PID_MAX,
    b"kernel/ostype": b"Linux",
    b"kernel/ngroups_max": b"65536",      # NGROUPS_MAX (sysconf(_SC_NGROUPS_MAX): id, groups)
    b"kernel/tainted": b"0",              # no taint (kernel/panic.c): no oops, no foreign module
    b"fs/pipe-max-size": b"%d" % PIPE_MAX_SIZE,
    b"fs/pipe-user-pages-soft": b"%d" % PIPE_USER_PAGES_SOFT,
    b"fs/pipe-user-pages-hard": b"0",
    b"fs/lease-break-time": b"45",
    b"fs/nr_open": b"1048576",
    b"vm/max_map_count": b"%d" % MAX_MAP_COUNT,     # LTP's munmap04 reads it
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
