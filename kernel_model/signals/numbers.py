"""Linux signal numbers on x86, their names as strace prints them, and their default actions
(signal(7)): the one table of signals, for the kernel and, through kernel_model/debug/abi.py,
for tools.

Numbers are arch/x86/include/uapi/asm/signal.h (the same on i386 and x86-64). Real-time signals
run from the kernel's SIGRTMIN, 32, to SIGRTMAX, 64. C libraries reserve 32..33 (glibc) or 32..34
(musl) for themselves and define the user-visible SIGRTMIN as 34 or 35, but the kernel and strace
count from 32: strace prints 32 as SIGRTMIN and 32+n as SIGRT_n, so 34 is SIGRT_2.
"""

SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE = 1, 2, 3, 4, 5, 6, 7, 8
SIGKILL, SIGUSR1, SIGSEGV, SIGUSR2, SIGPIPE, SIGALRM, SIGTERM = 9, 10, 11, 12, 13, 14, 15
SIGSTKFLT, SIGCHLD, SIGCONT, SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU = 16, 17, 18, 19, 20, 21, 22
SIGURG, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGWINCH = 23, 24, 25, 26, 27, 28
SIGIO, SIGPWR, SIGSYS = 29, 30, 31
SIGIOT, SIGPOLL = SIGABRT, SIGIO
SIGRTMIN = 32                # the kernel's; see the module docstring
SIGRTMAX = 64
NSIG = 64

STANDARD_SIGNALS: dict[int, str] = {
    SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGILL: "SIGILL",
    SIGTRAP: "SIGTRAP", SIGABRT: "SIGABRT", SIGBUS: "SIGBUS", SIGFPE: "SIGFPE",
    SIGKILL: "SIGKILL", SIGUSR1: "SIGUSR1", SIGSEGV: "SIGSEGV", SIGUSR2: "SIGUSR2",
    SIGPIPE: "SIGPIPE", SIGALRM: "SIGALRM", SIGTERM: "SIGTERM", SIGSTKFLT: "SIGSTKFLT",
    SIGCHLD: "SIGCHLD", SIGCONT: "SIGCONT", SIGSTOP: "SIGSTOP", SIGTSTP: "SIGTSTP",
    SIGTTIN: "SIGTTIN", SIGTTOU: "SIGTTOU", SIGURG: "SIGURG", SIGXCPU: "SIGXCPU",
    SIGXFSZ: "SIGXFSZ", SIGVTALRM: "SIGVTALRM", SIGPROF: "SIGPROF", SIGWINCH: "SIGWINCH",
    SIGIO: "SIGIO", SIGPWR: "SIGPWR", SIGSYS: "SIGSYS",
}

# Every valid signal 1..64 with its strace name, in signal-number order.
SIGNAL_NAMES: dict[int, str] = {
    **STANDARD_SIGNALS,
    SIGRTMIN: "SIGRTMIN",
    **{number: f"SIGRT_{number - SIGRTMIN}" for number in range(SIGRTMIN + 1, SIGRTMAX + 1)},
}

BY_NAME: dict[str, int] = {name: number for number, name in SIGNAL_NAMES.items()}

# Default actions (signal(7)): terminate, core (terminate + dump), ignore, stop, continue.
IGNORED_BY_DEFAULT = frozenset({SIGCHLD, SIGURG, SIGWINCH, SIGCONT})
STOP_BY_DEFAULT = frozenset({SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU})
CORE_BY_DEFAULT = frozenset({SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV,
                             SIGXCPU, SIGXFSZ, SIGSYS})


def signal_name(number: int) -> str:
    """`SIGSEGV`, `SIGRT_2`; a number that is no signal prints as the number, like strace."""
    return SIGNAL_NAMES.get(number, str(number))


def short_signal_name(number: int) -> str:
    """The name without `SIG`, as strace writes the members of a signal set: [INT CHLD RT_2]."""
    name = SIGNAL_NAMES.get(number)
    return name[3:] if name is not None else str(number)
