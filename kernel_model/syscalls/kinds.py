"""The kinds a syscall's declaration gives its arguments and its result (registry.syscall).

The kinds tell the strace formatter (trapline/strace/syscall_line.py) how to print each raw register
value: as a number, a descriptor, a string read from guest memory, a flag set, a decoded
structure... Names follow the Linux man pages (section 2). A syscall declared without arguments
kinds is printed with all six arguments in hex, as strace prints syscalls it cannot decode.

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
    OFFSET64_SPLIT = "loff_t in two words"  # i386: a 64-bit offset as (low, high) words
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
    # extended attributes (strace's xattr.c): a value is shown as printstr_ex with
    # QUOTE_OMIT_TRAILING_0, its length the next argument (set) or the result (get); a
    # list of names as a buffer, an address when its size is 0
    XATTR_VALUE_IN = "xattr value in"
    XATTR_VALUE_OUT = "xattr value out"
    XATTR_LIST_OUT = "xattr list out"
    XATTR_FLAGS = "xattr flags"


class Ret(enum.Enum):
    INT = "int"                  # decimal
    HEX = "hex"                  # addresses: mmap, brk
    OCTAL = "octal"              # umask
    NONE = "none"                # never returns: `= ?`


K = Kind
