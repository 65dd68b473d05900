"""Signal numbers (Linux asm/signal.h) and their default actions (signal(7))."""
SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE = 1, 2, 3, 4, 5, 6, 7, 8
SIGKILL, SIGUSR1, SIGSEGV, SIGUSR2, SIGPIPE, SIGALRM, SIGTERM, SIGSTKFLT = 9, 10, 11, 12, 13, 14, 15, 16
SIGCHLD, SIGCONT, SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU, SIGURG, SIGXCPU = 17, 18, 19, 20, 21, 22, 23, 24
SIGXFSZ, SIGVTALRM, SIGPROF, SIGWINCH, SIGIO, SIGPWR, SIGSYS = 25, 26, 27, 28, 29, 30, 31
NSIG = 64

# Default actions (signal(7)): terminate, core (terminate + dump), ignore, stop, continue.
IGNORED_BY_DEFAULT = frozenset({SIGCHLD, SIGURG, SIGWINCH, SIGCONT})
STOP_BY_DEFAULT = frozenset({SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU})
CORE_BY_DEFAULT = frozenset({SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV,
                             SIGXCPU, SIGXFSZ, SIGSYS})

# Names: kernel_model/signals_names.py, the one table (strace's spelling: SIGRTMIN, SIGRT_2).
