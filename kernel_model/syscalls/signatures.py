"""Argument names and kinds of the syscalls a strace user commonly sees, and their return kinds.

The kinds tell the strace formatter (trapline/strace/syscall_line.py) how to print each raw register
value: as a number, a descriptor, a string read from guest memory, a flag set, a decoded
structure... Names follow the Linux man pages (section 2). A syscall without an entry here is
printed with all six arguments in hex, as strace prints syscalls it cannot decode.

Buffers: BUF_IN is data the guest hands to the kernel; its length is the next argument.
BUF_OUT is data the kernel fills in; it is shown on exit, its length being the return value.
Structure kinds whose layout depends on the ABI (STAT, TIMESPEC, ...) are decoded per ABI.
"""
import enum


class Kind(enum.Enum):
    # numbers
    INT = "int"                  # C int: signed 32-bit
    UINT = "unsigned int"
    LONG = "long"                # signed, ABI word size (off_t on x86-64, ssize_t...)
    ULONG = "unsigned long"      # size_t
    HEX = "hex"
    OCTAL = "octal"              # umask values: 022
    MODE = "mode"                # permission bits in octal: 0644
    MODE_IF_CREAT = "mode if O_CREAT"   # open's third argument exists only with O_CREAT/O_TMPFILE
    FD = "fd"
    DIRFD = "dirfd"              # an fd or AT_FDCWD
    PID = "pid"
    PTR = "pointer"              # hex or NULL
    # memory
    PATH = "path"                # NUL-terminated string in guest memory
    BUF_IN = "buffer in"
    BUF_OUT = "buffer out"
    STR_OUT = "string out"       # NUL-terminated string filled in by the kernel (getcwd)
    IOVEC_IN = "iovec in"        # struct iovec[], count is the next argument
    IOVEC_OUT = "iovec out"
    ARGV = "argv"                # NULL-terminated array of string pointers
    ENVP = "envp"                # shown as an address and a variable count, like strace
    # named constants and flag sets
    OPEN_FLAGS = "open flags"
    PIPE_FLAGS = "pipe flags"    # O_CLOEXEC/O_NONBLOCK/O_DIRECT, 0 when none
    PROT = "prot"
    MAP_FLAGS = "map flags"
    MMAP_OFFSET = "mmap offset"  # byte offset, hex
    MMAP_PGOFF = "mmap2 offset"  # mmap2 passes the offset in 4096-byte units; strace shows bytes
    MREMAP_FLAGS = "mremap flags"
    MADVISE = "madvise advice"
    SIGNAL = "signal"
    SIGMASK_HOW = "sigprocmask how"
    WHENCE = "whence"
    CLOCK = "clock"
    TIMER_FLAGS = "clock_nanosleep flags"
    IOCTL_REQ = "ioctl request"
    FCNTL_CMD = "fcntl command"
    AT_FLAGS = "at flags"
    ACCESS_MODE = "access mode"
    ACCESS_AT_FLAGS = "faccessat flags"
    WAIT_OPTIONS = "wait options"
    WAITID_TYPE = "waitid idtype"
    RLIMIT_RESOURCE = "rlimit resource"
    ARCH_PRCTL_CODE = "arch_prctl code"
    FUTEX_OP = "futex op"
    # structures
    STRUCT = "struct"            # shown as its address
    STAT = "struct stat"         # the ABI's struct stat (old 32-bit layout on i386)
    STAT64 = "struct stat64"     # i386 stat64/fstat64/lstat64/fstatat64
    TIMESPEC_IN = "struct timespec in"       # ABI-sized fields
    TIMESPEC_OUT = "struct timespec out"
    TIMESPEC64_IN = "struct __kernel_timespec in"   # 64-bit fields on both ABIs
    TIMESPEC64_OUT = "struct __kernel_timespec out"
    TIMEVAL_OUT = "struct timeval out"
    SIGSET_IN = "sigset in"      # size is in the sigsetsize argument, which comes later
    SIGSET_OUT = "sigset out"
    SIGACTION_IN = "struct sigaction in"
    SIGACTION_OUT = "struct sigaction out"
    RLIMIT_OUT = "struct rlimit out"         # ABI-sized fields
    RLIMIT64_IN = "struct rlimit64 in"
    RLIMIT64_OUT = "struct rlimit64 out"
    UTSNAME_OUT = "struct utsname out"
    PIPEFD_OUT = "int[2] out"
    WSTATUS_OUT = "wait status out"
    INT_OUT = "int out"          # int*, shown as [value] on success
    LOFF_OUT = "loff_t out"      # _llseek's result: [value]


class Ret(enum.Enum):
    INT = "int"                  # decimal
    HEX = "hex"                  # addresses: mmap, brk
    OCTAL = "octal"              # umask
    NONE = "none"                # never returns: `= ?`


K = Kind
_FD, _PATH, _DIRFD = ("fd", K.FD), ("pathname", K.PATH), ("dirfd", K.DIRFD)

SIGNATURES: dict[str, tuple[tuple[str, Kind], ...]] = {
    # file I/O
    "read": (_FD, ("buf", K.BUF_OUT), ("count", K.ULONG)),
    "write": (_FD, ("buf", K.BUF_IN), ("count", K.ULONG)),
    "readv": (_FD, ("iov", K.IOVEC_OUT), ("iovcnt", K.INT)),
    "writev": (_FD, ("iov", K.IOVEC_IN), ("iovcnt", K.INT)),
    "pread64": (_FD, ("buf", K.BUF_OUT), ("count", K.ULONG), ("offset", K.LONG)),
    "pwrite64": (_FD, ("buf", K.BUF_IN), ("count", K.ULONG), ("offset", K.LONG)),
    "open": (_PATH, ("flags", K.OPEN_FLAGS), ("mode", K.MODE_IF_CREAT)),
    "openat": (_DIRFD, _PATH, ("flags", K.OPEN_FLAGS), ("mode", K.MODE_IF_CREAT)),
    "close": (_FD,),
    "close_range": (("first", K.UINT), ("last", K.UINT), ("flags", K.HEX)),
    "lseek": (_FD, ("offset", K.LONG), ("whence", K.WHENCE)),
    # _llseek(fd, offset_high, offset_low, result, whence): printed by a special case in strace.py
    "_llseek": (_FD, ("offset_high", K.ULONG), ("offset_low", K.ULONG),
                ("result", K.LOFF_OUT), ("whence", K.WHENCE)),
    "sendfile": (("out_fd", K.FD), ("in_fd", K.FD), ("offset", K.INT_OUT), ("count", K.ULONG)),
    "sendfile64": (("out_fd", K.FD), ("in_fd", K.FD), ("offset", K.INT_OUT),
                   ("count", K.ULONG)),
    "ftruncate": (_FD, ("length", K.LONG)),
    "ftruncate64": (_FD, ("length_low", K.ULONG), ("length_high", K.ULONG)),
    "truncate": (_PATH, ("length", K.LONG)),
    "fsync": (_FD,),
    "fdatasync": (_FD,),
    # metadata
    "stat": (_PATH, ("statbuf", K.STAT)),
    "lstat": (_PATH, ("statbuf", K.STAT)),
    "fstat": (_FD, ("statbuf", K.STAT)),
    "stat64": (_PATH, ("statbuf", K.STAT64)),
    "lstat64": (_PATH, ("statbuf", K.STAT64)),
    "fstat64": (_FD, ("statbuf", K.STAT64)),
    "newfstatat": (_DIRFD, _PATH, ("statbuf", K.STAT), ("flags", K.AT_FLAGS)),
    "fstatat64": (_DIRFD, _PATH, ("statbuf", K.STAT64), ("flags", K.AT_FLAGS)),
    "statx": (_DIRFD, _PATH, ("flags", K.AT_FLAGS), ("mask", K.HEX), ("statxbuf", K.STRUCT)),
    "statfs": (_PATH, ("buf", K.STRUCT)),
    "fstatfs": (_FD, ("buf", K.STRUCT)),
    "statfs64": (_PATH, ("sz", K.ULONG), ("buf", K.STRUCT)),
    "fstatfs64": (_FD, ("sz", K.ULONG), ("buf", K.STRUCT)),
    # fadvise64's arguments differ per ABI (i386 splits the offset): printed raw
    "fadvise64_64": (_FD, ("offset_low", K.ULONG), ("offset_high", K.ULONG),
                     ("len_low", K.ULONG), ("len_high", K.ULONG), ("advice", K.INT)),
    "access": (_PATH, ("mode", K.ACCESS_MODE)),
    "faccessat": (_DIRFD, _PATH, ("mode", K.ACCESS_MODE)),
    "faccessat2": (_DIRFD, _PATH, ("mode", K.ACCESS_MODE), ("flags", K.ACCESS_AT_FLAGS)),
    "getdents": (_FD, ("dirp", K.STRUCT), ("count", K.UINT)),
    "getdents64": (_FD, ("dirp", K.STRUCT), ("count", K.UINT)),
    "readlink": (_PATH, ("buf", K.BUF_OUT), ("bufsiz", K.ULONG)),
    "readlinkat": (_DIRFD, _PATH, ("buf", K.BUF_OUT), ("bufsiz", K.ULONG)),
    "getcwd": (("buf", K.STR_OUT), ("size", K.ULONG)),
    "chdir": (_PATH,),
    "fchdir": (_FD,),
    "umask": (("mask", K.OCTAL),),
    "chmod": (_PATH, ("mode", K.MODE)),
    "fchmod": (_FD, ("mode", K.MODE)),
    "fchmodat": (_DIRFD, _PATH, ("mode", K.MODE)),
    "chown": (_PATH, ("owner", K.INT), ("group", K.INT)),
    "lchown": (_PATH, ("owner", K.INT), ("group", K.INT)),
    "fchown": (_FD, ("owner", K.INT), ("group", K.INT)),
    "fchownat": (_DIRFD, _PATH, ("owner", K.INT), ("group", K.INT), ("flags", K.AT_FLAGS)),
    "utimensat": (_DIRFD, _PATH, ("times", K.STRUCT), ("flags", K.AT_FLAGS)),
    "utimensat_time64": (_DIRFD, _PATH, ("times", K.STRUCT), ("flags", K.AT_FLAGS)),
    # names in the tree
    "unlink": (_PATH,),
    "unlinkat": (_DIRFD, _PATH, ("flags", K.AT_FLAGS)),
    "mkdir": (_PATH, ("mode", K.MODE)),
    "mkdirat": (_DIRFD, _PATH, ("mode", K.MODE)),
    "rmdir": (_PATH,),
    "rename": (("oldpath", K.PATH), ("newpath", K.PATH)),
    "renameat": (("olddirfd", K.DIRFD), ("oldpath", K.PATH), ("newdirfd", K.DIRFD),
                 ("newpath", K.PATH)),
    "renameat2": (("olddirfd", K.DIRFD), ("oldpath", K.PATH), ("newdirfd", K.DIRFD),
                  ("newpath", K.PATH), ("flags", K.HEX)),
    "symlink": (("target", K.PATH), ("linkpath", K.PATH)),
    "symlinkat": (("target", K.PATH), ("newdirfd", K.DIRFD), ("linkpath", K.PATH)),
    "link": (("oldpath", K.PATH), ("newpath", K.PATH)),
    "linkat": (("olddirfd", K.DIRFD), ("oldpath", K.PATH), ("newdirfd", K.DIRFD),
               ("newpath", K.PATH), ("flags", K.AT_FLAGS)),
    # descriptors
    "fcntl": (_FD, ("cmd", K.FCNTL_CMD), ("arg", K.HEX)),
    "fcntl64": (_FD, ("cmd", K.FCNTL_CMD), ("arg", K.HEX)),
    "dup": (("oldfd", K.FD),),
    "dup2": (("oldfd", K.FD), ("newfd", K.FD)),
    "dup3": (("oldfd", K.FD), ("newfd", K.FD), ("flags", K.PIPE_FLAGS)),
    "ioctl": (_FD, ("request", K.IOCTL_REQ), ("arg", K.HEX)),
    "pipe": (("pipefd", K.PIPEFD_OUT),),
    "pipe2": (("pipefd", K.PIPEFD_OUT), ("flags", K.PIPE_FLAGS)),
    "poll": (("fds", K.STRUCT), ("nfds", K.UINT), ("timeout", K.INT)),
    "ppoll": (("fds", K.STRUCT), ("nfds", K.UINT), ("tmo_p", K.STRUCT),
              ("sigmask", K.STRUCT), ("sigsetsize", K.ULONG)),
    "select": (("nfds", K.INT), ("readfds", K.STRUCT), ("writefds", K.STRUCT),
               ("exceptfds", K.STRUCT), ("timeout", K.STRUCT)),
    "_newselect": (("nfds", K.INT), ("readfds", K.STRUCT), ("writefds", K.STRUCT),
                   ("exceptfds", K.STRUCT), ("timeout", K.STRUCT)),
    "pselect6": (("nfds", K.INT), ("readfds", K.STRUCT), ("writefds", K.STRUCT),
                 ("exceptfds", K.STRUCT), ("timeout", K.STRUCT), ("sigmask", K.STRUCT)),
    "socket": (("domain", K.INT), ("type", K.INT), ("protocol", K.INT)),
    "connect": (("sockfd", K.FD), ("addr", K.STRUCT), ("addrlen", K.UINT)),
    # memory
    "mmap": (("addr", K.PTR), ("length", K.ULONG), ("prot", K.PROT), ("flags", K.MAP_FLAGS),
             _FD, ("offset", K.MMAP_OFFSET)),
    "mmap2": (("addr", K.PTR), ("length", K.ULONG), ("prot", K.PROT), ("flags", K.MAP_FLAGS),
              _FD, ("pgoffset", K.MMAP_PGOFF)),
    "munmap": (("addr", K.PTR), ("length", K.ULONG)),
    "mprotect": (("addr", K.PTR), ("length", K.ULONG), ("prot", K.PROT)),
    "mremap": (("old_address", K.PTR), ("old_size", K.ULONG), ("new_size", K.ULONG),
               ("flags", K.MREMAP_FLAGS), ("new_address", K.PTR)),
    "brk": (("addr", K.PTR),),
    "madvise": (("addr", K.PTR), ("length", K.ULONG), ("advice", K.MADVISE)),
    # thread and process setup
    "arch_prctl": (("code", K.ARCH_PRCTL_CODE), ("addr", K.HEX)),
    "set_thread_area": (("u_info", K.STRUCT),),
    "set_tid_address": (("tidptr", K.PTR),),
    "set_robust_list": (("head", K.PTR), ("len", K.ULONG)),
    "rseq": (("rseq", K.PTR), ("rseq_len", K.HEX), ("flags", K.INT), ("sig", K.HEX)),
    "prlimit64": (("pid", K.PID), ("resource", K.RLIMIT_RESOURCE),
                  ("new_limit", K.RLIMIT64_IN), ("old_limit", K.RLIMIT64_OUT)),
    "getrlimit": (("resource", K.RLIMIT_RESOURCE), ("rlim", K.RLIMIT_OUT)),
    "ugetrlimit": (("resource", K.RLIMIT_RESOURCE), ("rlim", K.RLIMIT_OUT)),
    "uname": (("buf", K.UTSNAME_OUT),),
    "sethostname": (("name", K.BUF_IN), ("len", K.INT)),
    "setdomainname": (("name", K.BUF_IN), ("len", K.INT)),
    "getpriority": (("which", K.INT), ("who", K.INT)),
    "setpriority": (("which", K.INT), ("who", K.INT), ("prio", K.INT)),
    "ioprio_get": (("which", K.INT), ("who", K.INT)),
    "ioprio_set": (("which", K.INT), ("who", K.INT), ("ioprio", K.HEX)),
    "syslog": (("type", K.INT), ("bufp", K.PTR), ("len", K.INT)),
    "sched_getscheduler": (("pid", K.PID),),
    "sched_setscheduler": (("pid", K.PID), ("policy", K.INT), ("param", K.PTR)),
    "sched_getparam": (("pid", K.PID), ("param", K.PTR)),
    "sched_setparam": (("pid", K.PID), ("param", K.PTR)),
    "sched_get_priority_max": (("policy", K.INT),),
    "sched_get_priority_min": (("policy", K.INT),),
    "times": (("buf", K.PTR),),
    "capget": (("hdrp", K.PTR), ("datap", K.PTR)),
    "unshare": (("flags", K.HEX),),
    "mount": (("source", K.PATH), ("target", K.PATH), ("filesystemtype", K.PATH),
              ("mountflags", K.HEX), ("data", K.PTR)),
    "umount2": (("target", K.PATH), ("flags", K.HEX)),
    "sysinfo": (("info", K.STRUCT),),
    "sigaltstack": (("ss", K.STRUCT), ("old_ss", K.STRUCT)),
    # identity
    **{name: () for name in (
        "getpid", "getppid", "gettid", "getuid", "getgid", "geteuid", "getegid", "getuid32",
        "getgid32", "geteuid32", "getegid32", "getpgrp", "setsid", "sched_yield", "fork",
        "vfork", "rt_sigreturn", "sigreturn")},
    "getpgid": (("pid", K.PID),),
    "setpgid": (("pid", K.PID), ("pgid", K.PID)),
    "getsid": (("pid", K.PID),),
    # time
    "clock_gettime": (("clockid", K.CLOCK), ("tp", K.TIMESPEC_OUT)),
    "clock_gettime64": (("clockid", K.CLOCK), ("tp", K.TIMESPEC64_OUT)),
    "gettimeofday": (("tv", K.TIMEVAL_OUT), ("tz", K.PTR)),
    "time": (("tloc", K.PTR),),
    "clock_settime": (("clockid", K.CLOCK), ("tp", K.TIMESPEC_IN)),
    "clock_settime64": (("clockid", K.CLOCK), ("tp", K.TIMESPEC64_IN)),
    "clock_adjtime": (("clockid", K.CLOCK), ("buf", K.STRUCT)),
    "clock_adjtime64": (("clockid", K.CLOCK), ("buf", K.STRUCT)),
    "adjtimex": (("buf", K.STRUCT),),
    "settimeofday": (("tv", K.STRUCT), ("tz", K.PTR)),
    "nanosleep": (("req", K.TIMESPEC_IN), ("rem", K.PTR)),
    "clock_nanosleep": (("clockid", K.CLOCK), ("flags", K.TIMER_FLAGS),
                        ("request", K.TIMESPEC_IN), ("remain", K.PTR)),
    "clock_nanosleep_time64": (("clockid", K.CLOCK), ("flags", K.TIMER_FLAGS),
                               ("request", K.TIMESPEC64_IN), ("remain", K.PTR)),
    "alarm": (("seconds", K.UINT),),
    "setitimer": (("which", K.INT), ("new_value", K.STRUCT), ("old_value", K.STRUCT)),
    "getitimer": (("which", K.INT), ("curr_value", K.STRUCT)),
    "getrandom": (("buf", K.BUF_OUT), ("buflen", K.ULONG), ("flags", K.HEX)),
    # process lifetime and signals
    "exit": (("status", K.INT),),
    "exit_group": (("status", K.INT),),
    "execve": (_PATH, ("argv", K.ARGV), ("envp", K.ENVP)),
    "clone": (("flags", K.HEX), ("stack", K.PTR), ("parent_tid", K.PTR), ("tid_or_tls", K.PTR),
              ("tls_or_tid", K.PTR)),
    "clone3": (("cl_args", K.STRUCT), ("size", K.ULONG)),
    "wait4": (("pid", K.PID), ("wstatus", K.WSTATUS_OUT), ("options", K.WAIT_OPTIONS),
              ("rusage", K.STRUCT)),
    "waitid": (("idtype", K.WAITID_TYPE), ("id", K.PID), ("infop", K.STRUCT),
               ("options", K.WAIT_OPTIONS), ("rusage", K.STRUCT)),
    "kill": (("pid", K.PID), ("sig", K.SIGNAL)),
    "tkill": (("tid", K.PID), ("sig", K.SIGNAL)),
    "tgkill": (("tgid", K.PID), ("tid", K.PID), ("sig", K.SIGNAL)),
    "rt_sigaction": (("signum", K.SIGNAL), ("act", K.SIGACTION_IN),
                     ("oldact", K.SIGACTION_OUT), ("sigsetsize", K.ULONG)),
    "rt_sigprocmask": (("how", K.SIGMASK_HOW), ("set", K.SIGSET_IN), ("oldset", K.SIGSET_OUT),
                       ("sigsetsize", K.ULONG)),
    "futex": (("uaddr", K.PTR), ("futex_op", K.FUTEX_OP), ("val", K.INT),
              ("timeout", K.TIMESPEC_IN), ("uaddr2", K.PTR), ("val3", K.HEX)),
    "sched_getaffinity": (("pid", K.PID), ("cpusetsize", K.ULONG), ("mask", K.STRUCT)),
    "sched_setaffinity": (("pid", K.PID), ("cpusetsize", K.ULONG), ("mask", K.PTR)),
    "mknod": (_PATH, ("mode", K.MODE), ("dev", K.HEX)),
    "mknodat": (_DIRFD, _PATH, ("mode", K.MODE), ("dev", K.HEX)),
    "chroot": (_PATH,),
}

# Return kinds that are not plain decimal numbers.
RETURNS: dict[str, Ret] = {
    "mmap": Ret.HEX, "mmap2": Ret.HEX, "mremap": Ret.HEX, "brk": Ret.HEX,
    "umask": Ret.OCTAL,
    "exit": Ret.NONE, "exit_group": Ret.NONE,
}


def signature(name: str) -> tuple[tuple[str, Kind], ...] | None:
    """The argument list of `name`, or None when the formatter must fall back to raw hex."""
    return SIGNATURES.get(name)


def return_kind(name: str) -> Ret:
    return RETURNS.get(name, Ret.INT)
