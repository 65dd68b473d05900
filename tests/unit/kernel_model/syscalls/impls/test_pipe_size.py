"""F_GETPIPE_SZ / F_SETPIPE_SZ on both ABIs (fs/pipe.c pipe_set_size): a page at least, powers
of two, EBUSY below what the pipe holds, EINVAL above 2**31, EBADF on what is not a pipe; a
writer sees the new capacity."""
from kernel_model import errno as E

from ...call_script import run_script

F_SETPIPE_SZ, F_GETPIPE_SZ = 1031, 1032
O_RDONLY, O_NONBLOCK = 0, 0o4000


def test_pipe_size(arch):
    results, _, _ = run_script(arch, [
        ("pipe2", "BUF", O_NONBLOCK),                   # fds 3 and 4
        ("fcntl", 3, F_GETPIPE_SZ, 0),
        ("fcntl", 4, F_SETPIPE_SZ, 5000),               # rounded up to a power of two
        ("fcntl", 3, F_GETPIPE_SZ, 0),                  # one pipe, seen from both ends
        ("fcntl", 4, F_SETPIPE_SZ, 0),                  # a page at least
        ("write", 4, "BUF", 3000),
        ("write", 4, "BUF", 3000),                      # atomic, and only 1096 bytes fit
        ("fcntl", 4, F_SETPIPE_SZ, 8192),
        ("write", 4, "BUF", 3000),                      # room again
        ("fcntl", 4, F_SETPIPE_SZ, 4096),               # holds 6000 bytes: EBUSY
        ("fcntl", 4, F_SETPIPE_SZ, (1 << 31) + 1),
        ("open", "/f", O_RDONLY),
        ("fcntl", 5, F_GETPIPE_SZ, 0),
        ("fcntl", 5, F_SETPIPE_SZ, 4096),
    ])
    assert results == [0, 65536, 8192, 8192, 4096, 3000, -E.EAGAIN, 8192, 3000, -E.EBUSY,
                       -E.EINVAL, 5, -E.EBADF, -E.EBADF]


def test_past_pipe_max_size_needs_cap_sys_resource(arch):
    """Above /proc/sys/fs/pipe-max-size (1 MiB) only with CAP_SYS_RESOURCE: root may until it
    drops the capability (capset), then EPERM (LTP fcntl37)."""
    import struct
    header = struct.pack("<Ii", 0x20080522, 0)
    no_resource = 0xFFFFFFFF & ~(1 << 24)
    sets = struct.pack("<6I", no_resource, no_resource, 0, 0xFF, 0xFF, 0)
    results, _, _ = run_script(arch, [
        ("pipe", "BUF+64"),
        ("fcntl", 4, F_SETPIPE_SZ, 2 << 20),
        ("fcntl", 4, F_SETPIPE_SZ, 65536),
        ("capset", "BUF", "BUF+8"),
        ("fcntl", 4, F_SETPIPE_SZ, (1 << 20) + 1),
        ("fcntl", 4, F_SETPIPE_SZ, 1 << 20),
    ], data=header + sets)
    assert results == [0, 2 << 20, 65536, 0, -E.EPERM, 1 << 20]
