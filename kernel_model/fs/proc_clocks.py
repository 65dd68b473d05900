"""The kernel's clocks /proc shows (ProcMount.account_time): the processes' CPU clock for
/proc/PID/stat's utime, the time since boot and the idle time for /proc/uptime; apart so that the lazily made
/proc mount (procfs.py) and the file system that waits for it share it without a cycle."""
from typing import Callable, NamedTuple


class ProcClocks(NamedTuple):
    """The kernel's clocks /proc shows (account_time), in ns."""
    cpu_ns: Callable[[], int]
    boot_ns: Callable[[], int]
    idle_ns: Callable[[], int]
