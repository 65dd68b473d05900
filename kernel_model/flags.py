"""Linux flag and constant values used by syscalls on x86, and their names for decoding.

The kernel implementation imports the numeric constants from here; the strace formatter uses the
name tables. Values are the x86 ones (include/uapi/asm-generic/fcntl.h, mman-common.h,
arch/x86/include/uapi/asm/mman.h, asm-generic/ioctls.h ...), identical for i386 and x86-64
unless noted.

Each table lists (bits, name) in the order strace 6.x prints them (strace's xlat order, checked
against strace's output), which is mostly ascending value with a few exceptions noted inline.
"""
from collections.abc import Mapping, Sequence

from emu.memory import PROT_EXEC, PROT_READ, PROT_WRITE  # noqa: F401  (the one definition)

# --- open(2) flags (asm-generic/fcntl.h: x86 uses the generic values) ---------------------------
O_ACCMODE = 0o3
O_RDONLY = 0o0
O_WRONLY = 0o1
O_RDWR = 0o2
O_CREAT = 0o100
O_EXCL = 0o200
O_NOCTTY = 0o400
O_TRUNC = 0o1000
O_APPEND = 0o2000
O_NONBLOCK = 0o4000
O_DSYNC = 0o10000
FASYNC = 0o20000
O_DIRECT = 0o40000
# O_LARGEFILE: i386 callers pass it; on x86-64 the kernel forces it (force_o_largefile()), but the
# bit has the same value and strace names it on both.
O_LARGEFILE = 0o100000
O_DIRECTORY = 0o200000
O_NOFOLLOW = 0o400000
O_NOATIME = 0o1000000
O_CLOEXEC = 0o2000000
O_SYNC = 0o4010000           # __O_SYNC | O_DSYNC
O_PATH = 0o10000000
O_TMPFILE = 0o20200000       # __O_TMPFILE | O_DIRECTORY
O_PATH_FLAGS = O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC   # what O_PATH keeps (fs/open.c)

OPEN_ACCESS_MODES = {O_RDONLY: "O_RDONLY", O_WRONLY: "O_WRONLY", O_RDWR: "O_RDWR",
                     O_ACCMODE: "O_ACCMODE"}
# strace lists O_SYNC before O_DSYNC and O_TMPFILE before O_DIRECTORY (both contain the smaller
# bit), and FASYNC last.
OPEN_FLAGS = (
    (O_CREAT, "O_CREAT"), (O_EXCL, "O_EXCL"), (O_NOCTTY, "O_NOCTTY"), (O_TRUNC, "O_TRUNC"),
    (O_APPEND, "O_APPEND"), (O_NONBLOCK, "O_NONBLOCK"), (O_SYNC, "O_SYNC"), (O_DSYNC, "O_DSYNC"),
    (O_DIRECT, "O_DIRECT"), (O_LARGEFILE, "O_LARGEFILE"), (O_NOFOLLOW, "O_NOFOLLOW"),
    (O_NOATIME, "O_NOATIME"), (O_CLOEXEC, "O_CLOEXEC"), (O_PATH, "O_PATH"),
    (O_TMPFILE, "O_TMPFILE"), (O_DIRECTORY, "O_DIRECTORY"), (FASYNC, "FASYNC"),
)

# --- mmap/mprotect (mman-common.h, x86 mman.h) ---------------------------------------------------
PROT_NONE = 0x0
# PROT_READ, PROT_WRITE, PROT_EXEC: emu/perm_map.py's, the one definition (imported at the top)
PROT_SEM = 0x8
PROT_GROWSDOWN = 0x01000000
PROT_GROWSUP = 0x02000000
PROT_FLAGS = ((PROT_READ, "PROT_READ"), (PROT_WRITE, "PROT_WRITE"), (PROT_EXEC, "PROT_EXEC"),
              (PROT_SEM, "PROT_SEM"), (PROT_GROWSDOWN, "PROT_GROWSDOWN"),
              (PROT_GROWSUP, "PROT_GROWSUP"))

MAP_TYPE = 0x0f
MAP_FILE = 0x00
MAP_SHARED = 0x01
MAP_PRIVATE = 0x02
MAP_SHARED_VALIDATE = 0x03
MAP_FIXED = 0x10
MAP_ANONYMOUS = 0x20
MAP_32BIT = 0x40             # x86-64 only in practice: place the mapping below 2 GiB
MAP_GROWSDOWN = 0x100
MAP_DENYWRITE = 0x800
MAP_EXECUTABLE = 0x1000
MAP_LOCKED = 0x2000
MAP_NORESERVE = 0x4000
MAP_POPULATE = 0x8000
MAP_NONBLOCK = 0x10000
MAP_STACK = 0x20000
MAP_HUGETLB = 0x40000
MAP_SYNC = 0x80000
MAP_FIXED_NOREPLACE = 0x100000
# Bits 26..31 carry log2 of the huge page size when MAP_HUGETLB is set (MAP_HUGE_SHIFT).
MAP_HUGE_SHIFT = 26
MAP_HUGE_MASK = 0x3f
MAP_TYPES = {MAP_FILE: "MAP_FILE", MAP_SHARED: "MAP_SHARED", MAP_PRIVATE: "MAP_PRIVATE",
             MAP_SHARED_VALIDATE: "MAP_SHARED_VALIDATE"}
# strace's mmap_flags order (not by value: NORESERVE/POPULATE/NONBLOCK come before GROWSDOWN).
MAP_FLAGS = (
    (MAP_FIXED, "MAP_FIXED"), (MAP_ANONYMOUS, "MAP_ANONYMOUS"), (MAP_32BIT, "MAP_32BIT"),
    (MAP_NORESERVE, "MAP_NORESERVE"), (MAP_POPULATE, "MAP_POPULATE"),
    (MAP_NONBLOCK, "MAP_NONBLOCK"), (MAP_GROWSDOWN, "MAP_GROWSDOWN"),
    (MAP_DENYWRITE, "MAP_DENYWRITE"), (MAP_EXECUTABLE, "MAP_EXECUTABLE"),
    (MAP_LOCKED, "MAP_LOCKED"), (MAP_STACK, "MAP_STACK"), (MAP_HUGETLB, "MAP_HUGETLB"),
    (MAP_SYNC, "MAP_SYNC"), (MAP_FIXED_NOREPLACE, "MAP_FIXED_NOREPLACE"),
)

MREMAP_MAYMOVE = 1
MREMAP_FIXED = 2
MREMAP_DONTUNMAP = 4
MREMAP_FLAGS = ((MREMAP_MAYMOVE, "MREMAP_MAYMOVE"), (MREMAP_FIXED, "MREMAP_FIXED"),
                (MREMAP_DONTUNMAP, "MREMAP_DONTUNMAP"))

MADV_ADVICE = {0: "MADV_NORMAL", 1: "MADV_RANDOM", 2: "MADV_SEQUENTIAL", 3: "MADV_WILLNEED",
               4: "MADV_DONTNEED", 8: "MADV_FREE", 9: "MADV_REMOVE", 10: "MADV_DONTFORK",
               11: "MADV_DOFORK", 12: "MADV_MERGEABLE", 13: "MADV_UNMERGEABLE",
               14: "MADV_HUGEPAGE", 15: "MADV_NOHUGEPAGE", 16: "MADV_DONTDUMP",
               17: "MADV_DODUMP", 18: "MADV_WIPEONFORK", 19: "MADV_KEEPONFORK",
               20: "MADV_COLD", 21: "MADV_PAGEOUT", 22: "MADV_POPULATE_READ",
               23: "MADV_POPULATE_WRITE", 100: "MADV_HWPOISON"}

# --- *at() flags (uapi/linux/fcntl.h) -----------------------------------------------------------
AT_FDCWD = -100
AT_SYMLINK_NOFOLLOW = 0x100
AT_EACCESS = 0x200           # faccessat; the same bit is AT_REMOVEDIR for unlinkat
AT_REMOVEDIR = 0x200
AT_SYMLINK_FOLLOW = 0x400
AT_NO_AUTOMOUNT = 0x800
AT_EMPTY_PATH = 0x1000
AT_STATX_FORCE_SYNC = 0x2000
AT_STATX_DONT_SYNC = 0x4000
AT_RECURSIVE = 0x8000
AT_FLAGS = ((AT_SYMLINK_NOFOLLOW, "AT_SYMLINK_NOFOLLOW"), (AT_REMOVEDIR, "AT_REMOVEDIR"),
            (AT_SYMLINK_FOLLOW, "AT_SYMLINK_FOLLOW"), (AT_NO_AUTOMOUNT, "AT_NO_AUTOMOUNT"),
            (AT_EMPTY_PATH, "AT_EMPTY_PATH"), (AT_STATX_FORCE_SYNC, "AT_STATX_FORCE_SYNC"),
            (AT_STATX_DONT_SYNC, "AT_STATX_DONT_SYNC"), (AT_RECURSIVE, "AT_RECURSIVE"))
# faccessat2 names 0x200 AT_EACCESS rather than AT_REMOVEDIR.
AT_ACCESS_FLAGS = ((AT_SYMLINK_NOFOLLOW, "AT_SYMLINK_NOFOLLOW"), (AT_EACCESS, "AT_EACCESS"),
                   (AT_EMPTY_PATH, "AT_EMPTY_PATH"))

F_OK, X_OK, W_OK, R_OK = 0, 1, 2, 4
ACCESS_MODES = ((R_OK, "R_OK"), (W_OK, "W_OK"), (X_OK, "X_OK"))

# --- fcntl (asm-generic/fcntl.h; F_GETLK64.. are i386-only aliases of 12..14) -------------------
F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_SETFL = 0, 1, 2, 3, 4
F_GETLK, F_SETLK, F_SETLKW = 5, 6, 7
F_SETOWN, F_GETOWN, F_SETSIG, F_GETSIG = 8, 9, 10, 11
F_GETLK64, F_SETLK64, F_SETLKW64 = 12, 13, 14
F_SETOWN_EX, F_GETOWN_EX, F_GETOWNER_UIDS = 15, 16, 17
F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW = 36, 37, 38
F_SETLEASE, F_GETLEASE, F_NOTIFY = 1024, 1025, 1026
F_DUPFD_CLOEXEC = 1030
F_SETPIPE_SZ, F_GETPIPE_SZ = 1031, 1032
F_ADD_SEALS, F_GET_SEALS = 1033, 1034
FD_CLOEXEC = 1
FCNTL_COMMANDS = {
    F_DUPFD: "F_DUPFD", F_GETFD: "F_GETFD", F_SETFD: "F_SETFD", F_GETFL: "F_GETFL",
    F_SETFL: "F_SETFL", F_GETLK: "F_GETLK", F_SETLK: "F_SETLK", F_SETLKW: "F_SETLKW",
    F_SETOWN: "F_SETOWN", F_GETOWN: "F_GETOWN", F_SETSIG: "F_SETSIG", F_GETSIG: "F_GETSIG",
    F_GETLK64: "F_GETLK64", F_SETLK64: "F_SETLK64", F_SETLKW64: "F_SETLKW64",
    F_SETOWN_EX: "F_SETOWN_EX", F_GETOWN_EX: "F_GETOWN_EX",
    F_GETOWNER_UIDS: "F_GETOWNER_UIDS", F_OFD_GETLK: "F_OFD_GETLK",
    F_OFD_SETLK: "F_OFD_SETLK", F_OFD_SETLKW: "F_OFD_SETLKW", F_SETLEASE: "F_SETLEASE",
    F_GETLEASE: "F_GETLEASE", F_NOTIFY: "F_NOTIFY", F_DUPFD_CLOEXEC: "F_DUPFD_CLOEXEC",
    F_SETPIPE_SZ: "F_SETPIPE_SZ", F_GETPIPE_SZ: "F_GETPIPE_SZ", F_ADD_SEALS: "F_ADD_SEALS",
    F_GET_SEALS: "F_GET_SEALS",
}
FD_FLAGS = ((FD_CLOEXEC, "FD_CLOEXEC"),)

# --- ioctl requests (asm-generic/ioctls.h, which x86 uses) --------------------------------------
TCGETS, TCSETS, TCSETSW, TCSETSF = 0x5401, 0x5402, 0x5403, 0x5404
TIOCSCTTY = 0x540E
TIOCGPGRP, TIOCSPGRP = 0x540F, 0x5410
TIOCOUTQ = 0x5411
TIOCGWINSZ, TIOCSWINSZ = 0x5413, 0x5414
FIONREAD = 0x541B
FIONBIO = 0x5421
TIOCNOTTY = 0x5422
TIOCGPTN = 0x80045430
TIOCSPTLCK = 0x40045431
FIONCLEX, FIOCLEX = 0x5450, 0x5451
FIOASYNC = 0x5452
IOCTL_REQUESTS = {
    TCGETS: "TCGETS", TCSETS: "TCSETS", TCSETSW: "TCSETSW", TCSETSF: "TCSETSF",
    TIOCSCTTY: "TIOCSCTTY", TIOCGPGRP: "TIOCGPGRP", TIOCSPGRP: "TIOCSPGRP",
    TIOCOUTQ: "TIOCOUTQ", TIOCGWINSZ: "TIOCGWINSZ", TIOCSWINSZ: "TIOCSWINSZ",
    FIONREAD: "FIONREAD", FIONBIO: "FIONBIO", TIOCNOTTY: "TIOCNOTTY", TIOCGPTN: "TIOCGPTN",
    TIOCSPTLCK: "TIOCSPTLCK", FIONCLEX: "FIONCLEX", FIOCLEX: "FIOCLEX", FIOASYNC: "FIOASYNC",
}
# _IOC encoding (asm-generic/ioctl.h): nr 0-7, type 8-15, size 16-29, direction 30-31.
IOC_DIRECTIONS = {0: "_IOC_NONE", 1: "_IOC_WRITE", 2: "_IOC_READ", 3: "_IOC_READ|_IOC_WRITE"}

# --- clocks (uapi/linux/time.h) -----------------------------------------------------------------
CLOCK_REALTIME, CLOCK_MONOTONIC = 0, 1
CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID = 2, 3
CLOCK_MONOTONIC_RAW, CLOCK_REALTIME_COARSE, CLOCK_MONOTONIC_COARSE = 4, 5, 6
CLOCK_BOOTTIME, CLOCK_REALTIME_ALARM, CLOCK_BOOTTIME_ALARM = 7, 8, 9
CLOCK_TAI = 11
CLOCKS = {CLOCK_REALTIME: "CLOCK_REALTIME", CLOCK_MONOTONIC: "CLOCK_MONOTONIC",
          CLOCK_PROCESS_CPUTIME_ID: "CLOCK_PROCESS_CPUTIME_ID",
          CLOCK_THREAD_CPUTIME_ID: "CLOCK_THREAD_CPUTIME_ID",
          CLOCK_MONOTONIC_RAW: "CLOCK_MONOTONIC_RAW",
          CLOCK_REALTIME_COARSE: "CLOCK_REALTIME_COARSE",
          CLOCK_MONOTONIC_COARSE: "CLOCK_MONOTONIC_COARSE", CLOCK_BOOTTIME: "CLOCK_BOOTTIME",
          CLOCK_REALTIME_ALARM: "CLOCK_REALTIME_ALARM",
          CLOCK_BOOTTIME_ALARM: "CLOCK_BOOTTIME_ALARM", CLOCK_TAI: "CLOCK_TAI"}
TIMER_ABSTIME = 1
CLOCK_NANOSLEEP_FLAGS = ((TIMER_ABSTIME, "TIMER_ABSTIME"),)
XATTR_FLAGS = ((1, "XATTR_CREATE"), (2, "XATTR_REPLACE"))      # setxattr's (linux/xattr.h)

# --- lseek whence, sigprocmask how, arch_prctl codes ------------------------------------------
SEEK_SET, SEEK_CUR, SEEK_END, SEEK_DATA, SEEK_HOLE = 0, 1, 2, 3, 4
SEEK_MAX = SEEK_HOLE                    # include/uapi/linux/fs.h: lseek checks whence against it
WHENCE = {SEEK_SET: "SEEK_SET", SEEK_CUR: "SEEK_CUR", SEEK_END: "SEEK_END",
          SEEK_DATA: "SEEK_DATA", SEEK_HOLE: "SEEK_HOLE"}
SIG_BLOCK, SIG_UNBLOCK, SIG_SETMASK = 0, 1, 2
SIGMASK_HOW = {SIG_BLOCK: "SIG_BLOCK", SIG_UNBLOCK: "SIG_UNBLOCK", SIG_SETMASK: "SIG_SETMASK"}
ARCH_SET_GS, ARCH_SET_FS, ARCH_GET_FS, ARCH_GET_GS = 0x1001, 0x1002, 0x1003, 0x1004
ARCH_GET_CPUID, ARCH_SET_CPUID = 0x1011, 0x1012
ARCH_PRCTL_CODES = {ARCH_SET_GS: "ARCH_SET_GS", ARCH_SET_FS: "ARCH_SET_FS",
                    ARCH_GET_FS: "ARCH_GET_FS", ARCH_GET_GS: "ARCH_GET_GS",
                    ARCH_GET_CPUID: "ARCH_GET_CPUID", ARCH_SET_CPUID: "ARCH_SET_CPUID"}

# --- wait options (uapi/linux/wait.h), rlimit resources (asm-generic/resource.h) ---------------
WNOHANG, WUNTRACED, WEXITED, WCONTINUED, WNOWAIT = 1, 2, 4, 8, 0x01000000
__WNOTHREAD, __WALL, __WCLONE = 0x20000000, 0x40000000, 0x80000000
# (strace names 2 WSTOPPED, waitid's name, in wait4's options too: xlat/wait4_options.in)
WAIT_OPTIONS = ((WNOHANG, "WNOHANG"), (WUNTRACED, "WSTOPPED"), (WEXITED, "WEXITED"),
                (WCONTINUED, "WCONTINUED"), (WNOWAIT, "WNOWAIT"), (__WNOTHREAD, "__WNOTHREAD"),
                (__WALL, "__WALL"), (__WCLONE, "__WCLONE"))
P_ALL, P_PID, P_PGID, P_PIDFD = 0, 1, 2, 3
WAITID_TYPES = {P_ALL: "P_ALL", P_PID: "P_PID", P_PGID: "P_PGID", P_PIDFD: "P_PIDFD"}
RLIMIT_RESOURCES = {0: "RLIMIT_CPU", 1: "RLIMIT_FSIZE", 2: "RLIMIT_DATA", 3: "RLIMIT_STACK",
                    4: "RLIMIT_CORE", 5: "RLIMIT_RSS", 6: "RLIMIT_NPROC", 7: "RLIMIT_NOFILE",
                    8: "RLIMIT_MEMLOCK", 9: "RLIMIT_AS", 10: "RLIMIT_LOCKS",
                    11: "RLIMIT_SIGPENDING", 12: "RLIMIT_MSGQUEUE", 13: "RLIMIT_NICE",
                    14: "RLIMIT_RTPRIO", 15: "RLIMIT_RTTIME"}

# --- futex (uapi/linux/futex.h) ----------------------------------------------------------------
FUTEX_WAIT, FUTEX_WAKE, FUTEX_REQUEUE, FUTEX_CMP_REQUEUE = 0, 1, 3, 4
FUTEX_WAIT_BITSET, FUTEX_WAKE_BITSET = 9, 10
FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME = 128, 256
FUTEX_CMD_MASK = ~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME)
FUTEX_COMMANDS = {0: "FUTEX_WAIT", 1: "FUTEX_WAKE", 2: "FUTEX_FD", 3: "FUTEX_REQUEUE",
                  4: "FUTEX_CMP_REQUEUE", 5: "FUTEX_WAKE_OP", 6: "FUTEX_LOCK_PI",
                  7: "FUTEX_UNLOCK_PI", 8: "FUTEX_TRYLOCK_PI", 9: "FUTEX_WAIT_BITSET",
                  10: "FUTEX_WAKE_BITSET", 11: "FUTEX_WAIT_REQUEUE_PI",
                  12: "FUTEX_CMP_REQUEUE_PI", 13: "FUTEX_LOCK_PI2"}
FUTEX_BITSET_MATCH_ANY = 0xffffffff

# --- sigaction flags (x86 asm/signal.h), in strace's print order --------------------------------
SA_NOCLDSTOP, SA_NOCLDWAIT, SA_SIGINFO = 0x1, 0x2, 0x4
SA_RESTORER = 0x04000000     # x86: libc supplies the sigreturn trampoline (sa_restorer)
SA_ONSTACK, SA_RESTART, SA_INTERRUPT = 0x08000000, 0x10000000, 0x20000000
SA_NODEFER, SA_RESETHAND = 0x40000000, 0x80000000
SA_FLAGS = ((SA_RESTORER, "SA_RESTORER"), (SA_ONSTACK, "SA_ONSTACK"),
            (SA_RESTART, "SA_RESTART"), (SA_INTERRUPT, "SA_INTERRUPT"),
            (SA_NODEFER, "SA_NODEFER"), (SA_RESETHAND, "SA_RESETHAND"),
            (SA_SIGINFO, "SA_SIGINFO"), (SA_NOCLDSTOP, "SA_NOCLDSTOP"),
            (SA_NOCLDWAIT, "SA_NOCLDWAIT"))
SIG_DFL, SIG_IGN = 0, 1
SIGNAL_HANDLERS = {SIG_DFL: "SIG_DFL", SIG_IGN: "SIG_IGN"}

# --- clone flags (uapi/linux/sched.h); the low byte is the exit signal -------------------------
CSIGNAL = 0xff
CLONE_VM, CLONE_FS, CLONE_FILES, CLONE_SIGHAND = 0x100, 0x200, 0x400, 0x800
CLONE_PIDFD, CLONE_PTRACE, CLONE_VFORK, CLONE_PARENT = 0x1000, 0x2000, 0x4000, 0x8000
CLONE_THREAD, CLONE_NEWNS, CLONE_SYSVSEM, CLONE_SETTLS = 0x10000, 0x20000, 0x40000, 0x80000
CLONE_PARENT_SETTID, CLONE_CHILD_CLEARTID = 0x100000, 0x200000
CLONE_DETACHED, CLONE_UNTRACED, CLONE_CHILD_SETTID = 0x400000, 0x800000, 0x1000000
CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC = 0x2000000, 0x4000000, 0x8000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_IO = 0x10000000, 0x20000000, 0x40000000, \
    0x80000000
CLONE_FLAGS = tuple((value, name) for name, value in sorted(
    ((name, value) for name, value in globals().items() if name.startswith("CLONE_")),
    key=lambda item: item[1]))

# --- file types in st_mode (uapi/linux/stat.h) -------------------------------------------------
S_IFMT = 0o170000
FILE_TYPES = {0o140000: "S_IFSOCK", 0o120000: "S_IFLNK", 0o100000: "S_IFREG",
              0o060000: "S_IFBLK", 0o040000: "S_IFDIR", 0o020000: "S_IFCHR",
              0o010000: "S_IFIFO"}
MODE_SPECIAL_BITS = ((0o4000, "S_ISUID"), (0o2000, "S_ISGID"), (0o1000, "S_ISVTX"))


def decode_flags(value: int, table: Sequence[tuple[int, str]], zero: str = "0") -> str:
    """Names of the set bits joined by '|', unknown bits as a trailing hex remainder (strace)."""
    names = []
    for bits, name in table:
        if bits and value & bits == bits:
            names.append(name)
            value &= ~bits
    if value:
        names.append(hex(value))
    return "|".join(names) if names else zero


def decode_enum(value: int, table: Mapping[int, str], prefix: str) -> str:
    """A named constant, or strace's `0x63 /* F_??? */` for a value the table does not know."""
    name = table.get(value)
    return name if name is not None else f"{format_hex(value)} /* {prefix}??? */"


def decode_open_flags(value: int) -> str:
    """`O_RDONLY|O_CLOEXEC`: the access mode always comes first, even when it is O_RDONLY (0)."""
    access = OPEN_ACCESS_MODES[value & O_ACCMODE]
    rest = decode_flags(value & ~O_ACCMODE, OPEN_FLAGS, zero="")
    return f"{access}|{rest}" if rest else access


def decode_prot(value: int) -> str:
    return decode_flags(value, PROT_FLAGS, zero="PROT_NONE")


def decode_map_flags(value: int) -> str:
    """Mapping type first (MAP_PRIVATE...), then flags, then the huge-page size field."""
    kind = value & MAP_TYPE
    parts = [MAP_TYPES.get(kind, f"{format_hex(kind)} /* MAP_??? */")]
    huge = (value >> MAP_HUGE_SHIFT) & MAP_HUGE_MASK
    rest = decode_flags(value & ~MAP_TYPE & ~(MAP_HUGE_MASK << MAP_HUGE_SHIFT), MAP_FLAGS, "")
    if rest:
        parts.append(rest)
    if huge:
        parts.append(f"{huge}<<MAP_HUGE_SHIFT")
    return "|".join(parts)


def decode_at_flags(value: int) -> str:
    return decode_flags(value, AT_FLAGS)


def decode_access_mode(value: int) -> str:
    return decode_flags(value, ACCESS_MODES, zero="F_OK")


def decode_ioctl_request(value: int) -> str:
    """Known request name, else strace's `_IOC(dir, type, nr, size)` split of the number."""
    name = IOCTL_REQUESTS.get(value)
    if name is not None:
        return name
    direction = IOC_DIRECTIONS[(value >> 30) & 3]
    kind, number, size = (value >> 8) & 0xff, value & 0xff, (value >> 16) & 0x3fff
    return (f"_IOC({direction}, {format_hex(kind)}, {format_hex(number)}, "
            f"{format_hex(size)})")


def decode_futex_op(value: int) -> str:
    """`FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME` as strace spells futex operations."""
    command = value & FUTEX_CMD_MASK
    name = FUTEX_COMMANDS.get(command, f"{format_hex(command)} /* FUTEX_??? */")
    if value & FUTEX_PRIVATE_FLAG:
        name += "_PRIVATE"
    if value & FUTEX_CLOCK_REALTIME:
        name += "|FUTEX_CLOCK_REALTIME"
    return name


def decode_file_mode(mode: int) -> str:
    """`S_IFREG|0644` for st_mode: file type, special bits, then the permission bits in octal."""
    kind = FILE_TYPES.get(mode & S_IFMT)
    parts = [kind] if kind else ([f"{mode & S_IFMT:#o}"] if mode & S_IFMT else [])
    parts += [name for bits, name in MODE_SPECIAL_BITS if mode & bits]
    parts.append(format_octal(mode & 0o777))
    return "|".join(parts)


def format_hex(value: int) -> str:
    """C's `%#x`, which strace uses for hex values: 0x1000, but plain 0 for zero."""
    return f"{value:#x}" if value else "0"


def format_octal(value: int) -> str:
    """C's `%#03o`, which strace uses for modes: 0644, 04755, 000, 007."""
    return ("0" + format(value, "o") if value else "0").zfill(3)


# --- getrandom(2) flags (uapi/linux/random.h) -------------------------------------------------
GRND_FLAGS = ((0x1, "GRND_NONBLOCK"), (0x2, "GRND_RANDOM"), (0x4, "GRND_INSECURE"))

# --- statx(2) (uapi/linux/stat.h, uapi/linux/fcntl.h) -----------------------------------------
# The sync type is a two-bit field of the flags, printed first and by name even when it is 0.
AT_STATX_SYNC_TYPE = 0x6000
AT_STATX_SYNC_TYPES = {0: "AT_STATX_SYNC_AS_STAT", AT_STATX_FORCE_SYNC: "AT_STATX_FORCE_SYNC",
                       AT_STATX_DONT_SYNC: "AT_STATX_DONT_SYNC"}
STATX_BASIC_STATS = 0x7ff
# strace names the whole set of Linux 4.11 (STATX_ALL, the basic set and the birth time), then
# the basic set, as one name when all of it is there (its xlat lists them first), in the mask
# asked for and in the mask answered alike.
STATX_MASK = ((0xfff, "STATX_ALL"), (STATX_BASIC_STATS, "STATX_BASIC_STATS"), (0x1, "STATX_TYPE"),
              (0x2, "STATX_MODE"),
              (0x4, "STATX_NLINK"), (0x8, "STATX_UID"), (0x10, "STATX_GID"),
              (0x20, "STATX_ATIME"), (0x40, "STATX_MTIME"), (0x80, "STATX_CTIME"),
              (0x100, "STATX_INO"), (0x200, "STATX_SIZE"), (0x400, "STATX_BLOCKS"),
              (0x800, "STATX_BTIME"), (0x1000, "STATX_MNT_ID"), (0x2000, "STATX_DIOALIGN"),
              (0x80000000, "STATX__RESERVED"))
STATX_ATTRIBUTES = ((0x4, "STATX_ATTR_COMPRESSED"), (0x10, "STATX_ATTR_IMMUTABLE"),
                    (0x20, "STATX_ATTR_APPEND"), (0x40, "STATX_ATTR_NODUMP"),
                    (0x800, "STATX_ATTR_ENCRYPTED"), (0x1000, "STATX_ATTR_AUTOMOUNT"),
                    (0x2000, "STATX_ATTR_MOUNT_ROOT"), (0x100000, "STATX_ATTR_VERITY"),
                    (0x200000, "STATX_ATTR_DAX"))

# --- interval timers (uapi/linux/time.h) ------------------------------------------------------
ITIMER_WHICH = {0: "ITIMER_REAL", 1: "ITIMER_VIRTUAL", 2: "ITIMER_PROF"}

# --- prctl(2) options (uapi/linux/prctl.h) ----------------------------------------------------
PR_OPTIONS = {1: "PR_SET_PDEATHSIG", 2: "PR_GET_PDEATHSIG", 3: "PR_GET_DUMPABLE",
              4: "PR_SET_DUMPABLE", 5: "PR_GET_UNALIGN", 6: "PR_SET_UNALIGN",
              7: "PR_GET_KEEPCAPS", 8: "PR_SET_KEEPCAPS", 9: "PR_GET_FPEMU", 10: "PR_SET_FPEMU",
              11: "PR_GET_FPEXC", 12: "PR_SET_FPEXC", 13: "PR_GET_TIMING", 14: "PR_SET_TIMING",
              15: "PR_SET_NAME", 16: "PR_GET_NAME", 19: "PR_GET_ENDIAN", 20: "PR_SET_ENDIAN",
              21: "PR_GET_SECCOMP", 22: "PR_SET_SECCOMP", 23: "PR_CAPBSET_READ",
              24: "PR_CAPBSET_DROP", 25: "PR_GET_TSC", 26: "PR_SET_TSC",
              27: "PR_GET_SECUREBITS", 28: "PR_SET_SECUREBITS", 29: "PR_SET_TIMERSLACK",
              30: "PR_GET_TIMERSLACK", 31: "PR_TASK_PERF_EVENTS_DISABLE",
              32: "PR_TASK_PERF_EVENTS_ENABLE", 33: "PR_MCE_KILL", 34: "PR_MCE_KILL_GET",
              35: "PR_SET_MM", 36: "PR_SET_CHILD_SUBREAPER", 37: "PR_GET_CHILD_SUBREAPER",
              38: "PR_SET_NO_NEW_PRIVS", 39: "PR_GET_NO_NEW_PRIVS", 40: "PR_GET_TID_ADDRESS",
              41: "PR_SET_THP_DISABLE", 42: "PR_GET_THP_DISABLE", 45: "PR_SET_FP_MODE",
              46: "PR_GET_FP_MODE", 47: "PR_CAP_AMBIENT", 50: "PR_SVE_SET_VL",
              51: "PR_SVE_GET_VL", 52: "PR_GET_SPECULATION_CTRL",
              53: "PR_SET_SPECULATION_CTRL", 54: "PR_PAC_RESET_KEYS",
              55: "PR_SET_TAGGED_ADDR_CTRL", 56: "PR_GET_TAGGED_ADDR_CTRL",
              57: "PR_SET_IO_FLUSHER", 58: "PR_GET_IO_FLUSHER", 59: "PR_SET_SYSCALL_USER_DISPATCH",
              0x53564d41: "PR_SET_VMA"}
# How strace prints the arguments after the option (strace's prctl.c): none, a signal, a
# string in or out, an int pointer out, or the rest as plain numbers.
PR_ARGUMENTS = {"PR_GET_DUMPABLE": (), "PR_GET_KEEPCAPS": (), "PR_GET_SECCOMP": (),
                "PR_GET_TIMERSLACK": (), "PR_GET_CHILD_SUBREAPER": "int*",
                "PR_GET_NO_NEW_PRIVS": (), "PR_GET_THP_DISABLE": (), "PR_GET_TIMING": (),
                "PR_GET_SECUREBITS": (), "PR_GET_IO_FLUSHER": (),
                "PR_TASK_PERF_EVENTS_DISABLE": (), "PR_TASK_PERF_EVENTS_ENABLE": (),
                "PR_SET_NAME": "str", "PR_GET_NAME": "str_out", "PR_SET_PDEATHSIG": "signal",
                "PR_GET_PDEATHSIG": "int*", "PR_SET_DUMPABLE": "ulong", "PR_SET_KEEPCAPS": "ulong",
                "PR_SET_NO_NEW_PRIVS": "ulong4", "PR_SET_CHILD_SUBREAPER": "ulong",
                "PR_SET_TIMERSLACK": "ulong", "PR_SET_THP_DISABLE": "ulong4"}

# --- siginfo si_code names (uapi/asm-generic/siginfo.h) ---------------------------------------
SI_CODES = {0: "SI_USER", 0x80: "SI_KERNEL", -1: "SI_QUEUE", -2: "SI_TIMER", -3: "SI_MESGQ",
            -4: "SI_ASYNCIO", -5: "SI_SIGIO", -6: "SI_TKILL"}
# The positive codes mean something per signal (SIGILL 4, SIGTRAP 5, SIGBUS 7, SIGFPE 8,
# SIGSEGV 11, SIGCHLD 17, SIGPOLL 29).
SIGNAL_SI_CODES = {
    4: {1: "ILL_ILLOPC", 2: "ILL_ILLOPN", 3: "ILL_ILLADR", 4: "ILL_ILLTRP", 5: "ILL_PRVOPC",
        6: "ILL_PRVREG", 7: "ILL_COPROC", 8: "ILL_BADSTK"},
    5: {1: "TRAP_BRKPT", 2: "TRAP_TRACE", 3: "TRAP_BRANCH", 4: "TRAP_HWBKPT"},
    7: {1: "BUS_ADRALN", 2: "BUS_ADRERR", 3: "BUS_OBJERR", 4: "BUS_MCEERR_AR", 5: "BUS_MCEERR_AO"},
    8: {1: "FPE_INTDIV", 2: "FPE_INTOVF", 3: "FPE_FLTDIV", 4: "FPE_FLTOVF", 5: "FPE_FLTUND",
        6: "FPE_FLTRES", 7: "FPE_FLTINV", 8: "FPE_FLTSUB"},
    11: {1: "SEGV_MAPERR", 2: "SEGV_ACCERR", 3: "SEGV_BNDERR", 4: "SEGV_PKUERR"},
    17: {1: "CLD_EXITED", 2: "CLD_KILLED", 3: "CLD_DUMPED", 4: "CLD_TRAPPED", 5: "CLD_STOPPED",
         6: "CLD_CONTINUED"},
    29: {1: "POLL_IN", 2: "POLL_OUT", 3: "POLL_MSG", 4: "POLL_ERR", 5: "POLL_PRI", 6: "POLL_HUP"},
}
FAULT_SIGNALS = frozenset({4, 5, 7, 8, 11})      # their siginfo carries si_addr
