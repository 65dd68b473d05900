"""preadv/pwritev and the v2 forms on both ABIs: at an offset the position does not follow,
-1 meaning the position in the v2 forms, EINVAL for a negative offset (before EBADF), ESPIPE
on a pipe, EBADF on the wrong mode, EOPNOTSUPP for an unknown RWF flag. They were ENOSYS (LTP
preadv01-03, pwritev01-03, preadv2*, pwritev2*)."""
import struct

from kernel_model import errno as E

from ...call_script import BUF, run_script

O_RDONLY, O_RDWR, SEEK_CUR = 0, 2, 1


def iovec(arch, *segments):
    fmt = "<QQ" if arch == "x86_64" else "<II"
    return b"".join(struct.pack(fmt, base, length) for base, length in segments)


def pos(arch, value):
    """pos_l, pos_h as the ABI passes them (x86-64: pos_l holds it all)."""
    value &= (1 << 64) - 1
    if arch == "x86_64":
        return value, 0
    return value & 0xFFFFFFFF, value >> 32


def test_vectored_io_at_offsets(arch):
    vec = iovec(arch, (BUF + 256, 3), (BUF + 300, 4))          # reads land at 256 and 300
    out = iovec(arch, (BUF + 512, 2), (BUF + 520, 2))          # writes "AB" then "CD"
    data = vec.ljust(64, b"\0") + out.ljust(64, b"\0")
    data = data.ljust(512, b"\0") + b"AB\0\0\0\0\0\0CD"
    results, buf, _ = run_script(arch, [
        ("open", "/f", O_RDWR), ("pipe", "BUF+900"),             # 3; 4 and 5
        ("preadv", 3, "BUF", 2, *pos(arch, 6)),                   # "hel" "lo\nh"
        ("lseek", 3, 0, SEEK_CUR),                                # the position did not move
        ("pwritev", 3, "BUF+64", 2, *pos(arch, 1)),               # "ABCD" at 1
        ("preadv2", 3, "BUF", 1, *pos(arch, 0), 0),               # "hAB"
        ("preadv2", 3, "BUF", 1, *pos(arch, -1), 0),              # at the position (0), moves it
        ("lseek", 3, 0, SEEK_CUR),
        ("preadv", 3, "BUF", 1, *pos(arch, -5)),
        ("preadv", 99, "BUF", 1, *pos(arch, -5)),                 # EINVAL first
        ("preadv", 4, "BUF", 1, *pos(arch, 0)),                   # a pipe
        ("pwritev", 4, "BUF+64", 1, *pos(arch, 0)),               # its read end: ESPIPE first
        ("preadv2", 3, "BUF", 1, *pos(arch, 0), 0x1000),
    ], data=data)
    assert results == [3, 0, 7, 0, 4, 3, 3, 3, -E.EINVAL, -E.EINVAL, -E.ESPIPE, -E.ESPIPE,
                       -E.EOPNOTSUPP]
    assert buf[256:259] == b"hAB" and buf[300:304] == b"lo\nh"
