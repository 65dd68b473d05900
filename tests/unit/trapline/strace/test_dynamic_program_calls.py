"""Calls of Debian's dynamic programs (coreutils, glibc's nss) that strace 6.1 decodes, as its
lines show them: i386's socketcall as the call it multiplexes, fadvise64 (x86-64) and
fadvise64_64 (i386, halves joined), statx's STATX_ALL."""
import struct

from trapline.strace.syscall_line import format_syscall
from tests.unit.trapline.strace.fake_memory import FakeMemory

ARGS, ADDR = 0x1000, 0x2000


def test_socketcall_is_the_call_it_stands_for():
    mem = FakeMemory({ARGS: struct.pack("<III", 1, 0o2004001, 0),
                      ARGS + 16: struct.pack("<III", 3, ADDR, 110),
                      ADDR: struct.pack("<H", 1) + b"/var/run/nscd/socket".ljust(108, b"\0")})
    assert format_syscall("socketcall", (1, ARGS), 3, mem, 32) == \
        "socket(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC|SOCK_NONBLOCK, 0) = 3"
    assert format_syscall("socketcall", (3, ARGS + 16), -2, mem, 32) == (
        'connect(3, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = -1 ENOENT '
        "(No such file or directory)")
    assert format_syscall("socketcall", (99, ARGS), -22, mem, 32).startswith("socketcall(99, ")


def test_fadvise():
    assert format_syscall("fadvise64", (3, 0, 0, 2), 0, FakeMemory(), 64) == \
        "fadvise64(3, 0, 0, POSIX_FADV_SEQUENTIAL) = 0"
    assert format_syscall("fadvise64_64", (3, 0, 1, 5, 0, 2), 0, FakeMemory(), 32) == \
        "fadvise64_64(3, 4294967296, 5, POSIX_FADV_SEQUENTIAL) = 0"


def test_statx_all():
    line = format_syscall("statx", (3, 0, 0, 0xfff, 0), -2, FakeMemory(), 64)
    assert ", STATX_ALL, NULL)" in line
