"""capget: root of the sandbox's user namespace holds every capability there (Linux 6.1:
CAP_LAST_CAP 40); the version handshake and errors of kernel/capability.c."""
import struct

from kernel_model import errno as E

from ...call_script import run_script

V1, V3 = 0x19980330, 0x20080522


def header(version: int, pid: int = 0) -> bytes:
    return struct.pack("<Ii", version, pid)


def test_capget(arch):
    data = header(V3) + header(0x1234) + header(V3, 4242) + header(V3, -1) + header(V1) \
        + header(0x1234)
    results, buf, _ = run_script(arch, [
        ("capget", "BUF", "BUF+256"), ("capget", "BUF+8", "BUF+256"), ("capget", "BUF+16", "BUF+512"),
        ("capget", "BUF+24", "BUF+512"), ("capget", "BUF+32", "BUF+300"), ("capget", "BUF+40", 0),
        ("capget", "BUF", 0), ("capget", 0x10, "BUF+512"), ("capget", "BUF", "RO"),
        ("capget", "BUF+8", "BUF+512")], data=data)
    # the last call reuses the second header, which the kernel rewrote to version 3
    assert results == [0, -E.EINVAL, -E.ESRCH, -E.EINVAL, 0, 0, 0, -E.EFAULT, -E.EFAULT, 0]
    assert struct.unpack_from("<6I", buf, 256) == (0xFFFFFFFF, 0xFFFFFFFF, 0, 0x1FF, 0x1FF, 0)
    assert struct.unpack_from("<3I", buf, 300) == (0xFFFFFFFF, 0xFFFFFFFF, 0)
    # an unknown version is answered with the preferred one, probe (NULL data) or not
    assert struct.unpack_from("<I", buf, 8)[0] == V3 and struct.unpack_from("<I", buf, 40)[0] == V3
