"""System-call implementations, grouped by subject. Importing this package registers them all."""
from . import fileio, dirents, paths, stat, memory, process, timecalls, signals, kill, procs, futex, pipes, poll, affinity, xattr  # noqa: F401
from . import utsname, statfs, priority, clockset, syslog, fadvise, times, close_range, sched_policy, admin, capabilities  # noqa: F401
from . import personality, fallocate, credentials  # noqa: F401
from . import sockets, sockmsg, sockmmsg, sockopt, socketcall, epoll, eventfd  # noqa: F401
from . import sysv_msg, sysv_sem, sysv_shm, sysv_ipc  # noqa: F401
from . import flock, vectored_at, residency, rusage, vmsplice, memfd  # noqa: F401
from . import pidfd  # noqa: F401
