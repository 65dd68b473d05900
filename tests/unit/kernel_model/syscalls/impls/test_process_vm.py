"""process_vm_readv/process_vm_writev (ENOSYS before; LTP process_vm_readv01-03 and
process_vm_writev01-02): copies between the caller and a process named by pid, here the caller
itself, in Linux's order of checks (mm/process_vm_access.c)."""
import struct

import pytest

from kernel_model import errno as E
from kernel_model.kernel import FIRST_PID
from tests.property.syscall_fuzz_guest import RO_VADDR, UNMAPPED

from ...call_script import BUF, run_script

MAP_FIXED_ANON = 0x32          # MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED
ME = FIRST_PID                 # the script's process
AREA = 0x0710_0000


def iovecs(arch: str, *segments) -> bytes:
    fmt = "<II" if arch == "i386" else "<QQ"
    return b"".join(struct.pack(fmt, base, length) for base, length in segments)


def _mmap(arch):
    return "mmap2" if arch == "i386" else "mmap"


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_read_and_write_through_the_pid(arch):
    """readv gathers the remote segments into the local ones in order; writev the reverse.
    The local vector at BUF: 3 bytes at BUF+0x400, 5 at BUF+0x500; the remote ones at BUF+0x40."""
    local = iovecs(arch, (BUF + 0x400, 3), (BUF + 0x500, 5))
    remote = iovecs(arch, (RO_VADDR, 6), (RO_VADDR, 10))
    back = iovecs(arch, (AREA + 10, 8))
    data = local + bytes(0x40 - len(local)) + remote + bytes(0x80 - 0x40 - len(remote)) + back
    results, buf, _ = run_script(arch, [
        ("getpid",),
        ("process_vm_readv", ME, "BUF", 2, "BUF+64", 2, 0),
        (_mmap(arch), AREA, 0x1000, 3, MAP_FIXED_ANON, -1, 0),
        ("process_vm_writev", ME, "BUF", 2, "BUF+128", 1, 0),
        ("pipe", "BUF+1536"),
        ("write", 4, AREA + 10, 8),
        ("read", 3, "BUF+1792", 8)], data=data)
    assert results[0] == ME
    assert results[1:4] == [8, AREA, 8] and results[5:] == [8, 8]
    assert buf[0x400:0x403] == b"AAA" and buf[0x500:0x505] == b"AAAAA"
    assert buf[0x700:0x708] == b"AAAAAAAA"                  # written into AREA by writev


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_errors_in_linux_order(arch):
    local = iovecs(arch, (BUF + 0x400, 16))
    remote_bad = iovecs(arch, (UNMAPPED, 16))
    remote_half = iovecs(arch, (RO_VADDR + 0x1000 - 4, 16))      # the RO page's last 4 bytes (0)
    data = local + bytes(0x40 - len(local)) + remote_bad + bytes(0x40 - len(remote_bad)) + remote_half
    data += bytes(0x400 - len(data)) + b"\xff" * 16
    results, buf, _ = run_script(arch, [
        ("getpid",),
        ("process_vm_readv", ME, "BUF", 1, "BUF+64", 1, 1),          # flags: EINVAL
        ("process_vm_readv", 0x7FFF_0000, "BUF", 1, "BUF+64", 1, 0),  # no such pid: ESRCH
        ("process_vm_readv", 0x7FFF_0000, "BUF", 0, "BUF+64", 1, 0),  # nothing local: 0 first
        ("process_vm_readv", ME, "BUF", 1, "BUF+64", 1, 0),          # remote unmapped: EFAULT
        ("process_vm_readv", ME, "BUF", 1, "BUF+128", 1, 0),         # a short copy
        ("process_vm_readv", ME, "BUF", 1, "BUF+64", 1025, 0),       # > UIO_MAXIOV
        ("process_vm_writev", ME, "BUF", 1, "BUF+128", 1, 0)],       # RO is not writable
        data=data)
    assert results[0] == ME
    assert results[1:] == [-E.EINVAL, -E.ESRCH, 0, -E.EFAULT, 4, -E.EINVAL, -E.EFAULT]
    assert buf[0x400:0x404] == bytes(4) and buf[0x404:0x408] == b"\xff" * 4      # 4 copied
