"""strace's `-e` expressions: `-e trace=SET`, `-e signal=SET`, `-e status=SET` (strace(1) 6.x).

A SET is a comma-separated list; `!` before it negates it, `all` and `none` are what they say,
`?NAME` is NAME without the error when it does not exist, `/REGEX` the calls whose names it
matches. Syscall classes are data: %file, %desc,
%memory are derived from the kernel's declarations of each call's arguments (a path argument, a
descriptor argument), the others are the lists strace's syscall tables mark (TP, TN, TS, TM flags
in linux/x86_64/syscallent.h), for the calls of both x86 ABIs.
"""
import re

from kernel_model.debug.abi import (I386_NUMBERS, SIGNAL_NAMES, X86_64_NUMBERS, Kind,
                                    signature)

from .options import QUIET_KINDS, STATUSES, StraceOptions

ALL_SYSCALLS = frozenset(I386_NUMBERS.values()) | frozenset(X86_64_NUMBERS.values())

_PROCESS = ("fork", "vfork", "clone", "clone3", "execve", "execveat", "exit", "exit_group",
            "wait4", "waitpid", "waitid", "kill", "tkill", "tgkill", "rt_sigqueueinfo",
            "rt_tgsigqueueinfo", "pidfd_open", "pidfd_send_signal", "unshare")
_NETWORK = ("socket", "socketpair", "bind", "listen", "accept", "accept4", "connect",
            "getsockname", "getpeername", "sendto", "recvfrom", "sendmsg", "recvmsg",
            "sendmmsg", "recvmmsg", "shutdown", "setsockopt", "getsockopt", "socketcall",
            "sendfile", "sendfile64")
_SIGNAL = ("signal", "sigaction", "rt_sigaction", "sigprocmask", "rt_sigprocmask",
           "sigpending", "rt_sigpending", "sigsuspend", "rt_sigsuspend", "sigreturn",
           "rt_sigreturn", "rt_sigtimedwait", "rt_sigtimedwait_time64", "rt_sigqueueinfo",
           "rt_tgsigqueueinfo", "kill", "tkill", "tgkill", "pause", "sigaltstack", "alarm",
           "signalfd", "signalfd4", "sgetmask", "ssetmask", "pidfd_send_signal")
_MEMORY = ("brk", "mmap", "mmap2", "munmap", "mremap", "mprotect", "pkey_mprotect",
           "madvise", "mlock", "mlock2", "munlock", "mlockall", "munlockall", "mincore",
           "msync", "remap_file_pages", "mbind", "get_mempolicy", "set_mempolicy",
           "migrate_pages", "move_pages", "process_madvise", "map_shadow_stack",
           "shmat", "shmdt")
_CREDS = ("getuid", "getuid32", "geteuid", "geteuid32", "getgid", "getgid32", "getegid",
          "getegid32", "setuid", "setuid32", "setgid", "setgid32", "getresuid", "getresuid32",
          "getresgid", "getresgid32", "setresuid", "setresuid32", "setresgid", "setresgid32",
          "setreuid", "setreuid32", "setregid", "setregid32", "getgroups", "getgroups32",
          "setgroups", "setgroups32", "setfsuid", "setfsuid32", "setfsgid", "setfsgid32",
          "capget", "capset", "prctl")
_CLOCK = ("clock_gettime", "clock_gettime64", "clock_settime", "clock_settime64",
          "clock_getres", "clock_getres_time64", "clock_adjtime", "clock_adjtime64",
          "gettimeofday", "settimeofday", "time", "adjtimex", "stime")
FD_RETURNING = frozenset(("open", "openat", "openat2", "creat", "pipe", "pipe2", "dup", "dup2", "dup3",
                 "socket", "socketpair", "accept", "accept4", "eventfd", "eventfd2",
                 "signalfd", "signalfd4", "timerfd_create", "epoll_create", "epoll_create1",
                 "memfd_create", "inotify_init", "inotify_init1", "fanotify_init",
                 "perf_event_open", "userfaultfd", "pidfd_open", "open_by_handle_at",
                 "fcntl", "fcntl64"))


def _declared_with(kinds: frozenset) -> frozenset[str]:
    names = set()
    for name in ALL_SYSCALLS:
        for abi in ("i386", "x86_64"):
            params = signature(name, abi)
            if params and any(kind in kinds for _, kind in params):
                names.add(name)
    return frozenset(names)


def _classes() -> dict[str, frozenset[str]]:
    file_calls = _declared_with(frozenset({Kind.PATH})) | {"execve", "execveat", "open",
                                                            "creat", "statx"}
    desc = (_declared_with(frozenset({Kind.FD, Kind.DIRFD})) | FD_RETURNING
            | {"read", "write", "close", "ioctl", "fcntl", "fcntl64"})
    return {
        "file": frozenset(file_calls), "desc": desc, "process": frozenset(_PROCESS),
        "network": frozenset(_NETWORK), "net": frozenset(_NETWORK),
        "signal": frozenset(_SIGNAL), "memory": frozenset(_MEMORY),
        "ipc": frozenset({"ipc", "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop",
                          "semtimedop", "semtimedop_time64", "semctl", "shmget", "shmat", "shmdt",
                          "shmctl"}),
        "creds": frozenset(_CREDS), "clock": frozenset(_CLOCK),
        "stat": frozenset({"stat", "stat64", "oldstat"}),
        "lstat": frozenset({"lstat", "lstat64", "oldlstat"}),
        "fstat": frozenset({"fstat", "fstat64", "oldfstat", "newfstatat", "fstatat64"}),
        "statfs": frozenset({"statfs", "statfs64"}),
        "fstatfs": frozenset({"fstatfs", "fstatfs64"}),
        "%stat": frozenset({"stat", "stat64", "oldstat", "lstat", "lstat64", "oldlstat",
                            "fstat", "fstat64", "oldfstat", "newfstatat", "fstatat64", "statx"}),
        # strace's PU flag (linux/x86_64/syscallent.h, linux/i386/syscallent.h): the calls
        # that take no argument and cannot fail; arch_prctl has arguments and fails
        "pure": frozenset({"getpid", "getppid", "gettid", "getuid", "getuid32", "geteuid",
                           "geteuid32", "getgid", "getgid32", "getegid", "getegid32",
                           "getpgrp"}),
    }


_CLASS_CACHE: dict[str, frozenset[str]] = {}


def syscall_class(name: str) -> frozenset[str] | None:
    if not _CLASS_CACHE:
        _CLASS_CACHE.update(_classes())
    return _CLASS_CACHE.get(name)


# Classes strace still accepts without the '%' (strace(1): "deprecated").
_LEGACY_CLASSES = frozenset({"file", "process", "network", "signal", "ipc", "desc", "memory"})


class ExpressionError(ValueError):
    """A bad -e expression; its text is strace's complaint."""


def _split_set(text: str) -> tuple[bool, list[str]]:
    negated = text.startswith("!")
    return negated, [item for item in (text[1:] if negated else text).split(",") if item]


def _syscall_items(items: list[str]) -> set[str]:
    chosen: set[str] = set()
    for item in items:
        optional = item.startswith("?")
        name = item[1:] if optional else item
        if name == "all":
            chosen |= ALL_SYSCALLS
        elif name.startswith("/"):
            chosen |= _matching(name[1:])
        elif name == "none":
            continue
        elif name.startswith("%") or name in _LEGACY_CLASSES:
            members = syscall_class(name[1:] if name.startswith("%") else name)
            if members is None and not optional:
                raise ExpressionError(f"invalid system call '{name}'")
            chosen |= members or set()
        elif name in ALL_SYSCALLS:
            chosen.add(name)
        elif not optional:
            raise ExpressionError(f"invalid system call '{name}'")
    return chosen


def _matching(pattern: str) -> set[str]:
    """`/REGEX`: the calls whose names the regular expression matches anywhere (strace's
    qualify_syscall_regex: regexec, not anchored; an expression that does not compile is
    strace's `regcomp: REGEX: ...` error)."""
    try:
        compiled = re.compile(pattern)
    except re.error as error:
        raise ExpressionError(f"regcomp: {pattern}: {error.msg}") from None
    return {name for name in ALL_SYSCALLS if compiled.search(name)}


def parse_trace_set(text: str) -> frozenset[str] | None:
    negated, items = _split_set(text)
    chosen = _syscall_items(items)
    result = ALL_SYSCALLS - chosen if negated else frozenset(chosen)
    return None if result == ALL_SYSCALLS else result


def _signal_number(name: str) -> int | None:
    if name.isdigit():
        return int(name)
    wanted = name.upper()
    wanted = wanted if wanted.startswith("SIG") else "SIG" + wanted
    for number, known in SIGNAL_NAMES.items():
        if known == wanted:
            return number
    return None


def parse_signal_set(text: str) -> frozenset[int] | None:
    negated, items = _split_set(text)
    everything = frozenset(SIGNAL_NAMES)
    chosen: set[int] = set()
    for item in items:
        if item == "all":
            chosen |= everything
        elif item != "none":
            number = _signal_number(item)
            if number is None:
                raise ExpressionError(f"invalid signal '{item}'")
            chosen.add(number)
    result = everything - chosen if negated else frozenset(chosen)
    return None if result == everything else result


def parse_status_set(text: str) -> frozenset[str]:
    return _named_set(text, STATUSES, "status")


def _named_set(text: str, known: tuple[str, ...], what: str) -> frozenset[str]:
    negated, items = _split_set(text)
    chosen: set[str] = set()
    for item in items:
        if item == "all":
            chosen |= set(known)
        elif item in known:
            chosen.add(item)
        elif item != "none":
            raise ExpressionError(f"invalid {what} '{item}'")
    return frozenset(set(known) - chosen if negated else chosen)


_QUALIFIERS = {"trace": "trace", "t": "trace", "signal": "signal", "signals": "signal",
               "s": "signal", "status": "status", "abbrev": "abbrev", "a": "abbrev",
               "raw": "raw", "x": "raw", "quiet": "quiet", "q": "quiet", "silent": "quiet",
               "silence": "quiet", "read": "read", "reads": "read", "r": "read",
               "write": "write", "writes": "write", "w": "write"}
# strace's qualifiers the sandbox does not take, and why (said in the error)
_NOT_MODELED = {
    "verbose": "structures are always dereferenced here (-e verbose=all)",
    "v": "structures are always dereferenced here (-e verbose=all)",
    "inject": "no fault injection", "fault": "no fault injection",
    "kvm": "no KVM in the sandbox", "decode-fds": "use -y or -yy",
    "decode-pids": "no pid namespaces' translation of pids", "trace-fds": "use -e trace=%desc",
}


def apply_expression(options: StraceOptions, expression: str) -> None:
    """One `-e` argument into `options`; a bare SET is `trace=SET`, as in strace."""
    qualifier, sep, value = expression.partition("=")
    if not sep:
        qualifier, value = "trace", expression
    kind = _QUALIFIERS.get(qualifier)
    if kind is None:
        why = _NOT_MODELED.get(qualifier)
        raise ExpressionError(f"-e {qualifier}= is not modeled: {why}" if why else
                              f"invalid -e qualifier '{qualifier}' (this sandbox knows trace=, "
                              "signal=, status=, abbrev=, raw=, quiet=, read= and write=)")
    if kind == "abbrev":
        options.abbreviated = parse_trace_set(value)
    elif kind == "raw":
        options.raw = parse_trace_set(value)
        options.raw = ALL_SYSCALLS if options.raw is None else options.raw
    elif kind in ("read", "write"):
        from .io_dumps import FdSet, parse_fd_set
        try:
            fds = parse_fd_set(value)
        except ValueError as error:
            raise ExpressionError(str(error)) from None
        setattr(options, f"dumped_{kind}s", fds)
        other = f"dumped_{'writes' if kind == 'read' else 'reads'}"
        if getattr(options, other) is None:
            setattr(options, other, FdSet())
    elif kind == "quiet":
        options.quiet = _named_set(value, QUIET_KINDS, "quiet")
    elif kind == "trace":
        options.traced = parse_trace_set(value)
    elif kind == "signal":
        options.signals = parse_signal_set(value)
    else:
        options.statuses = parse_status_set(value)
