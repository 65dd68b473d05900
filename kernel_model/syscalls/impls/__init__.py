"""System-call implementations, grouped by subject. Importing this package registers them all."""
from . import fileio, dirents, paths, stat, memory, process, timecalls, signals, kill, procs, futex, pipes, poll, affinity, xattr  # noqa: F401
from . import utsname, statfs, priority, clockset, syslog, fadvise, times, close_range, sched_policy, admin, capabilities  # noqa: F401
from . import personality, sigwait, posix_timers, timerfd, signalfd  # noqa: F401
from . import sockets, sockmsg, sockmmsg, sockopt, socketcall, epoll, eventfd  # noqa: F401
