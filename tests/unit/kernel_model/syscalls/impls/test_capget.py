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


def test_capset_keeps_new_inheritable_capabilities_within_the_bounding_set(arch):
    """cap_capset: a new inheritable capability must be in the old inheritable set or the
    bounding set (LTP capset02: one dropped with PR_CAPBSET_DROP was accepted). Natively
    (root): 0, 0, 0, 0, EPERM."""
    cap_chown, cap_kill, cap_setpcap, cap_net_raw = 0, 5, 8, 13
    cap1 = 1 << cap_net_raw | 1 << cap_chown | 1 << cap_setpcap
    cap2 = cap1 | 1 << cap_kill
    sets = [(cap2, cap2, cap2), (cap1, cap2, cap2), (cap1, cap1, cap1), (cap1, cap1, cap2)]
    data = header(V3).ljust(16, b"\0") + b"".join(
        struct.pack("<6I", *s, 0, 0, 0).ljust(48, b"\0") for s in sets)
    pr_capbset_drop = 24
    results, _, _ = run_script(arch, [
        ("capset", "BUF", "BUF+16"),
        ("prctl", pr_capbset_drop, cap_kill, 0, 0, 0),
        ("capset", "BUF", "BUF+64"),          # CAP_KILL stays: it was inheritable already
        ("capset", "BUF", "BUF+112"),
        ("capset", "BUF", "BUF+160"),         # CAP_KILL again: in neither set any more
    ], data=data)
    assert results == [0, 0, 0, 0, -E.EPERM]
