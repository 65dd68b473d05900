"""File-I/O's representations (GDB manual, "Protocol-specific Representation of Datatypes") in
the stub's Host I/O packets (trapline/gdbserver/host_io.py): open flags to Linux's, errno values
to File-I/O's, struct stat in its big-endian layout."""
import errno
import os
import struct

from hypothesis import given, strategies as st

from kernel_model.fs.records import StatResult
from trapline.gdbserver.host_io import FILEIO_EUNKNOWN, fileio_errno, fileio_stat, linux_open_flags

# File-I/O's O_* (gdb's fileio.h) and what each means on Linux (asm-generic/fcntl.h)
FILEIO = {"O_WRONLY": (0x1, os.O_WRONLY), "O_RDWR": (0x2, os.O_RDWR), "O_APPEND": (0x8, os.O_APPEND),
          "O_CREAT": (0x200, os.O_CREAT), "O_TRUNC": (0x400, os.O_TRUNC), "O_EXCL": (0x800, os.O_EXCL)}
MODIFIERS = ("O_APPEND", "O_CREAT", "O_TRUNC", "O_EXCL")


@given(access=st.sampled_from((None, "O_WRONLY", "O_RDWR")),
       modifiers=st.sets(st.sampled_from(MODIFIERS), min_size=1))
def test_open_flags_map_bit_by_bit_with_one_access_mode(access, modifiers):
    names = set(modifiers) | ({access} if access else set())
    fileio = sum(FILEIO[name][0] for name in names)
    linux = linux_open_flags(fileio)
    assert linux == sum(FILEIO[name][1] for name in names)
    assert linux & os.O_ACCMODE == (FILEIO[access][1] if access else os.O_RDONLY)


def test_errno_values_are_file_io_s():
    assert fileio_errno(errno.ENOENT) == 2 and fileio_errno(errno.EACCES) == 13
    assert fileio_errno(errno.ENOSYS) == 88 and fileio_errno(errno.ENAMETOOLONG) == 91
    assert fileio_errno(errno.ESRCH) == fileio_errno(errno.ELOOP) == FILEIO_EUNKNOWN


def test_stat_is_sixty_four_big_endian_bytes_cut_to_each_field():
    st_ = StatResult(dev=0x803, ino=(1 << 40) + 7, mode=0o100644, nlink=1, uid=1000, gid=100, rdev=0,
                     size=123456, blksize=4096, blocks=248, atime_ns=1_609_556_645_500_000_000,
                     mtime_ns=1_609_556_645_000_000_000, ctime_ns=2 * 10**9)
    raw = fileio_stat(st_)
    assert len(raw) == 64
    fields = struct.unpack(">7I3Q3I", raw)
    assert fields == (0x803, 7, 0o100644, 1, 1000, 100, 0, 123456, 4096, 248, 1609556645, 1609556645, 2)
