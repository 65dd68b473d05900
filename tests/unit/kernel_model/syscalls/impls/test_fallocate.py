"""fallocate on both ABIs: vfs_fallocate's checks in their order (EBADF, EINVAL, EOPNOTSUPP,
ESPIPE, ENODEV, EFBIG) and tmpfs's three modes (allocate, keep size, punch a hole)."""
from kernel_model import errno as E

from ...call_script import run_script

O_RDONLY, O_WRONLY, O_RDWR = 0, 1, 2
SEEK_END = 2
KEEP_SIZE, PUNCH_HOLE, COLLAPSE_RANGE, ZERO_RANGE = 1, 2, 8, 0x10
FILE_SIZE = 600                 # /f of call_script's rootfs: "hello\n" * 100


def fallocate(arch, fd, mode, offset, length):
    """The call with its two loff_t as the ABI passes them (i386: low word, high word)."""
    mask = (1 << 64) - 1
    offset, length = offset & mask, length & mask
    if arch == "i386":
        return ("fallocate", fd, mode, offset & 0xFFFFFFFF, offset >> 32,
                length & 0xFFFFFFFF, length >> 32)
    return ("fallocate", fd, mode, offset, length)


def test_fallocate_checks(arch):
    results, _, _ = run_script(arch, [
        ("open", "/f", O_RDWR), ("open", "/f", O_RDONLY), ("open", "/dev/null", O_WRONLY),
        ("pipe", "BUF"),
        fallocate(arch, 4, 0, 0, 1),                     # read-only description
        fallocate(arch, 3, 0, -1, 1),
        fallocate(arch, 3, 0, 1, 0),
        fallocate(arch, 3, 0, 1, -1),
        fallocate(arch, 3, PUNCH_HOLE, 0, 1),           # a hole without KEEP_SIZE
        fallocate(arch, 3, COLLAPSE_RANGE | KEEP_SIZE, 0, 4096),
        fallocate(arch, 3, 0x1000, 0, 1),               # an unknown bit
        fallocate(arch, 99, 0, -1, 1),                   # the descriptor comes first
        fallocate(arch, 5, 0, 0, 1),                     # /dev/null: not a regular file
        fallocate(arch, 7, 0, 0, 1),                     # the pipe's write end
        fallocate(arch, 6, 0, 0, 1),                     # its read end: not for writing
        fallocate(arch, 3, 0, 1 << 62, 1 << 62),         # offset + len overflows
        fallocate(arch, 3, ZERO_RANGE, 0, 1),            # ext4 has it, tmpfs has not
    ])
    assert results[:4] == [3, 4, 5, 0]
    assert results[4:] == [-E.EBADF, -E.EINVAL, -E.EINVAL, -E.EINVAL, -E.EOPNOTSUPP,
                           -E.EOPNOTSUPP, -E.EOPNOTSUPP, -E.EBADF, -E.ENODEV, -E.ESPIPE,
                           -E.EBADF, -E.EFBIG, -E.EOPNOTSUPP]


def test_fallocate_modes(arch):
    results, buf, _ = run_script(arch, [
        ("open", "/f", O_RDWR),
        fallocate(arch, 3, KEEP_SIZE, 0, 8192),          # reserved: the size does not change
        ("lseek", 3, 0, SEEK_END),
        fallocate(arch, 3, 0, 100, 200),                 # within the file: nothing changes
        ("lseek", 3, 0, SEEK_END),
        fallocate(arch, 3, PUNCH_HOLE | KEEP_SIZE, 2, 3),
        fallocate(arch, 3, PUNCH_HOLE | KEEP_SIZE, 590, 100),   # past the end: up to it
        ("lseek", 3, 0, SEEK_END),
        fallocate(arch, 3, 0, 1000, 24),                 # allocated past the end: grows
        ("lseek", 3, 0, SEEK_END),
        ("pread64", 3, "BUF", 8, 0),
        ("pread64", 3, "BUF+8", 16, 586),
        ("pread64", 3, "BUF+24", 8, 1016),
    ])
    assert results == [3, 0, FILE_SIZE, 0, FILE_SIZE, 0, 0, FILE_SIZE, 0, 1024, 8, 16, 8]
    assert buf[:8] == b"he\0\0\0\nhe"
    assert buf[8:24] == b"o\nhe" + b"\0" * 12       # 586..589, the hole from 590, the growth
    assert buf[24:32] == b"\0" * 8
