"""format_syscall produces strace 6.x's text exactly.

Most expected strings are copied from real `strace` 6.1 output of programs doing the same calls.
"""
import struct

import pytest

from trapline.strace.syscall_line import format_syscall, unknown_name
from tests.unit.trapline.strace.fake_memory import FakeMemory

M64 = (1 << 64) - 1
AT_FDCWD = -100

PATH, NOPE, HELLO, ETC, PROC = 0x1000, 0x1100, 0x1200, 0x1400, 0x1500
ABC, BIN, UTS = 0x10000, 0x20000, 0x30000  # large buffers, apart from the small ones
LONGBUF, ESCAPES, SIGSET_BLOCK, SIGSET_OLD = 0x1700, 0x1800, 0x1900, 0x1a00
ACT, PIPEFD, TS, RLIM, STATBUF, STATUS, IOV = (0x2000, 0x2100, 0x2200, 0x2300, 0x2400,
                                              0x2600, 0x2700)
ARGV, ENVP, LOFF, WINSZ, OLDMMAP, STAT64 = 0x2800, 0x2900, 0x2a00, 0x2b00, 0x2c00, 0x2d00


def _memory() -> FakeMemory:
    mem = FakeMemory()
    mem.put(PATH, b"data.txt\0")
    mem.put(NOPE, b"nope\0")
    mem.put(HELLO, b"hello, world\n")
    mem.put(ABC, b"abc" + bytes(4093))
    mem.put(ETC, b"/etc/ld.so.preload\0")
    mem.put(PROC, b"/tmp/probe/q\0")
    mem.put(BIN, b"\x7fELF\x02\x01\x01\x03" + bytes(8) + b"\x03\x00>\x00\x01\x00\x00\x00\x10t\x02"
            + bytes(900))
    mem.put(LONGBUF, b"a" * 100)
    mem.put(ESCAPES, b"\x001\x008\x7f\xff\t\n\r\v\f\"\\ab\x1bx")
    mem.put(SIGSET_BLOCK, struct.pack("<Q", ~(3 << 31) & M64))
    mem.put(SIGSET_OLD, struct.pack("<Q", (~(3 << 31) & M64) & ~((1 << 8) | (1 << 18))))
    mem.put(ACT, struct.pack("<QQQQ", 0x55e8027683b9, 0x14000000, 0x7f10efab8050,
                             (1 << 1) | (1 << 33)))
    mem.put(PIPEFD, struct.pack("<ii", 6, 7))
    mem.put(TS, struct.pack("<qq", 1, 500000000))
    mem.put(RLIM, struct.pack("<QQ", 8192 * 1024, M64))
    stat = bytearray(144)
    struct.pack_into("<I", stat, 24, 0o100644)
    struct.pack_into("<q", stat, 48, 34547)
    mem.put(STATBUF, bytes(stat))
    mem.put(UTS, b"Linux".ljust(65, b"\0") + b"trapline".ljust(65, b"\0") + bytes(65 * 4))
    mem.put(STATUS, struct.pack("<i", 3 << 8))
    mem.put(IOV, struct.pack("<QQQQ", HELLO, 5, HELLO + 12, 1))
    mem.put(ARGV, struct.pack("<QQQ", PATH, NOPE, 0))
    mem.put(ENVP, struct.pack("<QQQQ", PATH, NOPE, ETC, 0))
    mem.put(LOFF, struct.pack("<q", 4096))
    mem.put(WINSZ, struct.pack("<HHHH", 24, 80, 0, 0))
    mem.put(OLDMMAP, struct.pack("<6I", 0, 4096, 3, 0x22, 0xffffffff, 0))
    stat64 = bytearray(96)
    struct.pack_into("<I", stat64, 16, 0o20666)
    struct.pack_into("<Q", stat64, 32, (1 << 8) | 3)
    mem.put(STAT64, bytes(stat64))
    return mem


CASES_64 = [
    ("openat", [AT_FDCWD, PATH, 0], 3, 'openat(AT_FDCWD, "data.txt", O_RDONLY) = 3'),
    ("openat", [AT_FDCWD, NOPE, 0], -2,
     'openat(AT_FDCWD, "nope", O_RDONLY) = -1 ENOENT (No such file or directory)'),
    ("openat", [AT_FDCWD, PATH, 0o1101, 0o644], 3,
     'openat(AT_FDCWD, "data.txt", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3'),
    ("openat", [7, PATH, 0o2000000], 4, 'openat(7, "data.txt", O_RDONLY|O_CLOEXEC) = 4'),
    ("openat", [AT_FDCWD, NOPE, 0x4000000], -2,
     'openat(AT_FDCWD, "nope", O_RDONLY|0x4000000) = -1 ENOENT (No such file or directory)'),
    ("openat", [AT_FDCWD, 0x10, 0], -14,
     "openat(AT_FDCWD, 0x10, O_RDONLY) = -1 EFAULT (Bad address)"),
    ("write", [1, HELLO, 13], 13, 'write(1, "hello, world\\n", 13) = 13'),
    ("write", [2, ESCAPES, 17], 17,
     'write(2, "\\0001\\08\\177\\377\\t\\n\\r\\v\\f\\"\\\\ab\\33x", 17) = 17'),
    ("write", [2, LONGBUF, 100], 100, 'write(2, "' + "a" * 32 + '"..., 100) = 100'),
    ("write", [2, LONGBUF, 32], 32, 'write(2, "' + "a" * 32 + '", 32) = 32'),
    ("write", [2, LONGBUF, 33], 33, 'write(2, "' + "a" * 32 + '"..., 33) = 33'),
    ("write", [0x100000005, HELLO, 1], -9, 'write(5, "h", 1) = -1 EBADF (Bad file descriptor)'),
    ("read", [3, ABC, 4096], 3, 'read(3, "abc", 4096) = 3'),
    ("read", [99, 0x10, 10], -9, "read(99, 0x10, 10) = -1 EBADF (Bad file descriptor)"),
    ("read", [3, BIN, 832], 832,
     'read(3, "\\177ELF\\2\\1\\1\\3\\0\\0\\0\\0\\0\\0\\0\\0\\3\\0>\\0\\1\\0\\0\\0\\20t\\2\\0\\0\\0\\0\\0"'
     '..., 832) = 832'),
    ("mmap", [0, 8192, 3, 0x22, -1, 0], 0x7faa19ba6000,
     "mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7faa19ba6000"),
    ("mmap", [0x7f10efaa2000, 1400832, 5, 0x812, 3, 0x26000], 0x7f10efaa2000,
     "mmap(0x7f10efaa2000, 1400832, PROT_READ|PROT_EXEC, MAP_PRIVATE|MAP_FIXED|MAP_DENYWRITE,"
     " 3, 0x26000) = 0x7f10efaa2000"),
    ("mmap", [0x10000, 4096, 1, 0x80128001, 5, 0x3000], -9,
     "mmap(0x10000, 4096, PROT_READ, MAP_SHARED|MAP_POPULATE|MAP_STACK|MAP_FIXED_NOREPLACE|"
     "32<<MAP_HUGE_SHIFT, 5, 0x3000) = -1 EBADF (Bad file descriptor)"),
    ("munmap", [0x7faa19b9d000, 34547], 0, "munmap(0x7faa19b9d000, 34547) = 0"),
    ("mprotect", [0, 0, 0x105], 0, "mprotect(NULL, 0, PROT_READ|PROT_EXEC|0x100) = 0"),
    ("exit_group", [0], 0, "exit_group(0) = ?"),
    ("exit", [263], 0, "exit(263) = ?"),
    ("brk", [0], 0x55f3f0130000, "brk(NULL) = 0x55f3f0130000"),
    ("close", [3], 0, "close(3) = 0"),
    ("close", [M64], -9, "close(-1) = -1 EBADF (Bad file descriptor)"),
    ("access", [ETC, 4], -2,
     'access("/etc/ld.so.preload", R_OK) = -1 ENOENT (No such file or directory)'),
    ("faccessat2", [AT_FDCWD, PATH, 7, 0], 0, 'faccessat2(AT_FDCWD, "data.txt", R_OK|W_OK|X_OK, 0) = 0'),
    ("unlinkat", [AT_FDCWD, NOPE, 0x200], -2,
     'unlinkat(AT_FDCWD, "nope", AT_REMOVEDIR) = -1 ENOENT (No such file or directory)'),
    ("mkdir", [PATH, 0], -17, 'mkdir("data.txt", 000) = -1 EEXIST (File exists)'),
    ("chmod", [NOPE, 0o4755], -2, 'chmod("nope", 04755) = -1 ENOENT (No such file or directory)'),
    ("syscall_0x1b3", [1, 2, 3, 4, 5, 6], -38,
     "syscall_0x1b3(0x1, 0x2, 0x3, 0x4, 0x5, 0x6) = -1 ENOSYS (Function not implemented)"),
    ("rt_sigprocmask", [0, SIGSET_BLOCK, 0, 8], 0,
     "rt_sigprocmask(SIG_BLOCK, ~[RTMIN RT_1], NULL, 8) = 0"),
    ("rt_sigprocmask", [2, 0x3000, SIGSET_OLD, 8], 0,
     "rt_sigprocmask(SIG_SETMASK, 0x3000, ~[KILL STOP RTMIN RT_1], 8) = 0"),
    ("rt_sigprocmask", [7, 0, 0, 8], 0, "rt_sigprocmask(0x7 /* SIG_??? */, NULL, NULL, 8) = 0"),
    ("rt_sigaction", [17, ACT, 0, 8], 0,
     "rt_sigaction(SIGCHLD, {sa_handler=0x55e8027683b9, sa_mask=[INT RT_2], "
     "sa_flags=SA_RESTORER|SA_RESTART, sa_restorer=0x7f10efab8050}, NULL, 8) = 0"),
    ("rt_sigaction", [32, 0, ACT + 32, 8], 0, "rt_sigaction(SIGRTMIN, NULL, 0x2020, 8) = 0"),
    ("pipe2", [PIPEFD, 0], 0, "pipe2([6, 7], 0) = 0"),
    ("pipe2", [PIPEFD, 0o2000000], 0, "pipe2([6, 7], O_CLOEXEC) = 0"),
    ("lseek", [0, 0, 1], 0, "lseek(0, 0, SEEK_CUR) = 0"),
    ("lseek", [8, 10, 2], -29, "lseek(8, 10, SEEK_END) = -1 ESPIPE (Illegal seek)"),
    ("lseek", [0, 4294967291, 7], -22,
     "lseek(0, 4294967291, 0x7 /* SEEK_??? */) = -1 EINVAL (Invalid argument)"),
    ("ioctl", [1, 0x5413, 0x7ffce106d3f0], -25,
     "ioctl(1, TIOCGWINSZ, 0x7ffce106d3f0) = -1 ENOTTY (Inappropriate ioctl for device)"),
    ("ioctl", [1, 0x5413, WINSZ], 0,
     "ioctl(1, TIOCGWINSZ, {ws_row=24, ws_col=80, ws_xpixel=0, ws_ypixel=0}) = 0"),
    ("ioctl", [0, 0x1234, 5], -25,
     "ioctl(0, _IOC(_IOC_NONE, 0x12, 0x34, 0), 0x5) = -1 ENOTTY (Inappropriate ioctl for device)"),
    ("fcntl", [8, 3], 0, "fcntl(8, F_GETFL) = 0 (flags O_RDONLY)"),
    ("fcntl", [1, 3], 0x8801, "fcntl(1, F_GETFL) = 0x8801 (flags O_WRONLY|O_NONBLOCK|O_LARGEFILE)"),
    ("fcntl", [8, 2, 1], 0, "fcntl(8, F_SETFD, FD_CLOEXEC) = 0"),
    ("fcntl", [8, 1030, 10], 11, "fcntl(8, F_DUPFD_CLOEXEC, 10) = 11"),
    ("fcntl", [8, 1], 1, "fcntl(8, F_GETFD) = 0x1 (flags FD_CLOEXEC)"),
    ("fcntl", [1, 4, 0x8802 | 0o4000], 0, "fcntl(1, F_SETFL, O_RDWR|O_NONBLOCK|O_LARGEFILE) = 0"),
    ("fcntl", [1, 6, 0], -14, "fcntl(1, F_SETLK, NULL) = -1 EFAULT (Bad address)"),
    ("fcntl", [1, 99, 3], -22, "fcntl(1, 0x63 /* F_??? */, 0x3) = -1 EINVAL (Invalid argument)"),
    ("clock_gettime", [1, TS], 0, "clock_gettime(CLOCK_MONOTONIC, {tv_sec=1, tv_nsec=500000000}) = 0"),
    ("clock_gettime", [17, 0x7ffce106d3a0], -22,
     "clock_gettime(0x11 /* CLOCK_??? */, 0x7ffce106d3a0) = -1 EINVAL (Invalid argument)"),
    ("clock_gettime", [0, 1], -14, "clock_gettime(CLOCK_REALTIME, 0x1) = -1 EFAULT (Bad address)"),
    ("clock_nanosleep", [1, 1, 0x10, 0], -14,
     "clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, 0x10, NULL) = -1 EFAULT (Bad address)"),
    ("prlimit64", [0, 3, 0, RLIM], 0,
     "prlimit64(0, RLIMIT_STACK, NULL, {rlim_cur=8192*1024, rlim_max=RLIM64_INFINITY}) = 0"),
    ("newfstatat", [3, 0x1000 + 8, STATBUF, 0x1000], 0,
     'newfstatat(3, "", {st_mode=S_IFREG|0644, st_size=34547, ...}, AT_EMPTY_PATH) = 0'),
    ("newfstatat", [AT_FDCWD, PATH, STATBUF, 0x41100], -22,
     'newfstatat(AT_FDCWD, "data.txt", 0x2400, AT_SYMLINK_NOFOLLOW|AT_EMPTY_PATH|0x40000)'
     " = -1 EINVAL (Invalid argument)"),
    ("arch_prctl", [0x1002, 0x7faa199b8740], 0, "arch_prctl(ARCH_SET_FS, 0x7faa199b8740) = 0"),
    ("arch_prctl", [0x1234, 0], -22,
     "arch_prctl(0x1234 /* ARCH_??? */, 0) = -1 EINVAL (Invalid argument)"),
    ("set_tid_address", [0x7faa199b8a10], 5969, "set_tid_address(0x7faa199b8a10) = 5969"),
    ("set_robust_list", [0x7faa199b8a20, 24], 0, "set_robust_list(0x7faa199b8a20, 24) = 0"),
    ("rseq", [0x7faa199b9060, 0x20, 0, 0x53053053], 0,
     "rseq(0x7faa199b9060, 0x20, 0, 0x53053053) = 0"),
    ("futex", [0x10, 0x81, 1, 0, 0, 0], 0, "futex(0x10, FUTEX_WAKE_PRIVATE, 1) = 0"),
    ("futex", [0x10, 0x189, 0, 0, 0, 0xffffffff], -110,
     "futex(0x10, FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME, 0, NULL, FUTEX_BITSET_MATCH_ANY)"
     " = -1 ETIMEDOUT (Connection timed out)"),
    ("kill", [0, 0], 0, "kill(0, 0) = 0"),
    ("kill", [10097, 28], 0, "kill(10097, SIGWINCH) = 0"),
    ("kill", [0, 99], -22, "kill(0, 99) = -1 EINVAL (Invalid argument)"),
    ("tgkill", [10097, 10097, 40], 0, "tgkill(10097, 10097, SIGRT_8) = 0"),
    ("getpid", [], 10097, "getpid() = 10097"),
    ("umask", [0o22], 0o22, "umask(022) = 022"),
    ("uname", [UTS], 0, 'uname({sysname="Linux", nodename="trapline", ...}) = 0'),
    ("wait4", [1234, STATUS, 0, 0], 1234,
     "wait4(1234, [{WIFEXITED(s) && WEXITSTATUS(s) == 3}], 0, NULL) = 1234"),
    ("wait4", [M64, STATUS, 0x40000001, 0], 0, "wait4(-1, 0x2600, WNOHANG|__WALL, NULL) = 0"),
    ("writev", [1, IOV, 2], 6,
     'writev(1, [{iov_base="hello", iov_len=5}, {iov_base="\\n", iov_len=1}], 2) = 6'),
    ("readv", [0, IOV, 2], 3, 'readv(0, [{iov_base="hel", iov_len=5}, {iov_base="", iov_len=1}], 2) = 3'),
    ("readlink", [PROC, PROC, 200], 12, 'readlink("/tmp/probe/q", "/tmp/probe/q", 200) = 12'),
    ("readlink", [PROC, PROC, 3], 3, 'readlink("/tmp/probe/q", "/tm", 3) = 3'),
    ("getcwd", [PROC, 200], 13, 'getcwd("/tmp/probe/q", 200) = 13'),
    ("getcwd", [PROC, 1], -34, "getcwd(0x1500, 1) = -1 ERANGE (Numerical result out of range)"),
    ("execve", [PATH, ARGV, ENVP], 0, 'execve("data.txt", ["data.txt", "nope"], 0x2900 /* 3 vars */) = 0'),
    ("clone", [0x1200011, 0, 0, 0x7f0000000a10, 0], 4242,
     "clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, "
     "child_tidptr=0x7f0000000a10) = 4242"),
    ("dup3", [1, 101, 0o2000000], 101, "dup3(1, 101, O_CLOEXEC) = 101"),
    ("madvise", [0, 0, 4], 0, "madvise(NULL, 0, MADV_DONTNEED) = 0"),
    ("restart_syscall", [0] * 6, -512,
     "restart_syscall(0, 0, 0, 0, 0, 0) = ? ERESTARTSYS (To be restarted if SA_RESTART is set)"),
    ("openat", [AT_FDCWD, PATH, 0], -41, 'openat(AT_FDCWD, "data.txt", O_RDONLY) = -1 ERRNO_41 (Unknown error 41)'),
]


@pytest.mark.parametrize("name,args,ret,expected", CASES_64,
                         ids=[f"{i}-{case[0]}" for i, case in enumerate(CASES_64)])
def test_x86_64(name, args, ret, expected):
    assert format_syscall(name, args, ret & M64, _memory(), 64) == expected


def test_negative_python_ints_and_raw_register_values_agree():
    mem = _memory()
    assert (format_syscall("openat", [AT_FDCWD, NOPE, 0], -2, mem, 64)
            == format_syscall("openat", [AT_FDCWD & M64, NOPE, 0], (-2) & M64, mem, 64))


I386_SIGSET, I386_TS, I386_RES = 0x3000, 0x3100, 0x3200
CASES_32 = [
    ("_llseek", [3, 0, 4096, LOFF, 0], 0, "_llseek(3, 4096, [4096], SEEK_SET) = 0"),
    ("_llseek", [3, 1, 0, LOFF, 1], -22,
     "_llseek(3, 4294967296, 0x2a00, SEEK_CUR) = -1 EINVAL (Invalid argument)"),
    ("mmap2", [0, 8192, 3, 0x22, 0xffffffff, 0], 0xf7f00000,
     "mmap2(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0xf7f00000"),
    ("mmap2", [0x8048000, 4096, 5, 0x812, 3, 0x1a], 0x8048000,
     "mmap2(0x8048000, 4096, PROT_READ|PROT_EXEC, MAP_PRIVATE|MAP_FIXED|MAP_DENYWRITE, 3, 0x1a000)"
     " = 0x8048000"),
    ("mmap", [OLDMMAP], 0xf7f00000,
     "mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0xf7f00000"),
    ("brk", [0], 0x0804c000, "brk(NULL) = 0x804c000"),
    ("fstat64", [0, STAT64], 0,
     "fstat64(0, {st_mode=S_IFCHR|0666, st_rdev=makedev(0x1, 0x3), ...}) = 0"),
    ("clock_gettime", [0, I386_TS], 0, "clock_gettime(CLOCK_REALTIME, {tv_sec=7, tv_nsec=-1}) = 0"),
    ("rt_sigprocmask", [1, I386_SIGSET, 0, 8], 0, "rt_sigprocmask(SIG_UNBLOCK, [HUP SEGV], NULL, 8) = 0"),
    ("openat", [0xffffff9c, PATH, 0o100000], 3, 'openat(AT_FDCWD, "data.txt", O_RDONLY|O_LARGEFILE) = 3'),
    ("write", [1, HELLO, 13], 0xfffffff2, 'write(1, "hello, world\\n", 13) = -1 EFAULT (Bad address)'),
    ("getuid32", [], 1000, "getuid32() = 1000"),
    # pread64's loff_t in two registers, low word first (its i386 declaration): strace joins them
    ("pwrite64", [3, HELLO, 13, 0, 1], 13, 'pwrite64(3, "hello, world\\n", 13, 4294967296) = 13'),
    ("pwrite64", [3, HELLO, 13, 0xfffffffe, 0xffffffff], -22,
     'pwrite64(3, "hello, world\\n", 13, -2) = -1 EINVAL (Invalid argument)'),
    ("exit_group", [0], 0, "exit_group(0) = ?"),
    ("fcntl64", [3, 2, 1], 0, "fcntl64(3, F_SETFD, FD_CLOEXEC) = 0"),
    ("ugetrlimit", [7, I386_RES], 0, "ugetrlimit(RLIMIT_NOFILE, {rlim_cur=1024, rlim_max=RLIM_INFINITY}) = 0"),
    ("clone", [0x1200011, 0, 0, 0, 0x0804aa10], 77,
     "clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, "
     "child_tidptr=0x804aa10) = 77"),
]


@pytest.mark.parametrize("name,args,ret,expected", CASES_32,
                         ids=[f"{i}-{case[0]}" for i, case in enumerate(CASES_32)])
def test_i386(name, args, ret, expected):
    mem = _memory()
    mem.put(I386_SIGSET, struct.pack("<Q", (1 << 0) | (1 << 10)))
    mem.put(I386_TS, struct.pack("<ii", 7, -1))
    mem.put(I386_RES, struct.pack("<II", 1024, 0xffffffff))
    assert format_syscall(name, args, ret, mem, 32) == expected


@pytest.mark.parametrize("text,expected", [
    (("close", [3], 0), "close(3)                                = 0"),
    (("openat", [AT_FDCWD, ETC, 0o2000000], 3),
     'openat(AT_FDCWD, "/etc/ld.so.preload", O_RDONLY|O_CLOEXEC) = 3'),
])
def test_strace_column_alignment(text, expected):
    name, args, ret = text
    assert format_syscall(name, args, ret, _memory(), 64, align=40) == expected


def test_unknown_name_is_hex():
    assert unknown_name(0x1b3) == "syscall_0x1b3"


def test_bad_abi_is_refused():
    with pytest.raises(ValueError):
        format_syscall("close", [3], 0, _memory(), 16)
