"""vmsplice on both ABIs: user memory into a pipe and back out, EAGAIN into a full pipe with
SPLICE_F_NONBLOCK, EBADF off a pipe, EINVAL for an unknown flag. It was ENOSYS (LTP
vmsplice01-04; vmsplice04 in the every-15th sample)."""
import struct

from kernel_model import errno as E

from ...call_script import BUF, run_script

F_SETPIPE_SZ = 1031
SPLICE_F_NONBLOCK = 2
O_RDONLY = 0


def iovec(arch, base, length):
    return struct.pack("<QQ" if arch == "x86_64" else "<II", base, length)


def test_vmsplice(arch):
    fcntl = "fcntl" if arch == "x86_64" else "fcntl64"
    data = iovec(arch, BUF + 64, 5).ljust(16, b"\0") + iovec(arch, BUF + 128, 8).ljust(16, b"\0") \
        + (iovec(arch, BUF + 256, 2048) * 2).ljust(32, b"\0") + b"hello".ljust(64, b"\0")
    results, buf, _ = run_script(arch, [
        ("pipe", "BUF+1024"),                                    # 3, 4
        ("vmsplice", 4, "BUF", 1, 0),                            # "hello" in
        ("vmsplice", 3, "BUF+16", 1, 0),                         # out into BUF+128
        (fcntl, 4, F_SETPIPE_SZ, 4096),
        ("vmsplice", 4, "BUF+32", 2, SPLICE_F_NONBLOCK),         # fills the page
        ("vmsplice", 4, "BUF", 1, SPLICE_F_NONBLOCK),            # full
        ("open", "/f", O_RDONLY),
        ("vmsplice", 5, "BUF", 1, 0),
        ("vmsplice", 4, "BUF", 1, 0x10),
    ], data=data)
    assert results == [0, 5, 5, 4096, 4096, -E.EAGAIN, 5, -E.EBADF, -E.EINVAL]
    assert buf[128:133] == b"hello"
