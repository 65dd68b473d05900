"""memfd_create and seals on both ABIs: a nameless memory file (its /proc link says
"/memfd:NAME (deleted)"), writes and reads, seals refusing growth, shrinking and writes
(EPERM, and for a shared writable map), F_SEAL_SEAL, no seals without MFD_ALLOW_SEALING,
ENODEV for MFD_HUGETLB of a huge page size x86-64 lacks (64 KiB), EINVAL for unknown flags, a
long name or a file that cannot be sealed. It was ENOSYS (LTP memfd_create01-04)."""
from kernel_model import errno as E

from ...call_script import run_script

MFD_CLOEXEC, MFD_ALLOW_SEALING, MFD_HUGETLB = 1, 2, 4
MFD_HUGE_64KB = 16 << 26
F_ADD_SEALS, F_GET_SEALS, F_GETFD = 1033, 1034, 1
SEAL, SHRINK, GROW, WRITE = 1, 2, 4, 8
PROT_READ, PROT_WRITE, MAP_SHARED = 1, 2, 1
O_RDONLY = 0


def test_memfd_and_seals(arch):
    fcntl = "fcntl" if arch == "x86_64" else "fcntl64"
    mmap = "mmap" if arch == "x86_64" else "mmap2"
    data = b"box\0" + b"/proc/self/fd/3\0" + b"n" * 250 + b"\0"
    results, buf, _ = run_script(arch, [
        ("memfd_create", "BUF", MFD_ALLOW_SEALING | MFD_CLOEXEC),      # 3
        (fcntl, 3, F_GETFD, 0),
        ("write", 3, "BUF+4", 10),
        ("readlink", "BUF+4", "BUF+512", 64),
        ("pread64", 3, "BUF+600", 4, 1),
        (fcntl, 3, F_GET_SEALS, 0),
        (fcntl, 3, F_ADD_SEALS, GROW | SHRINK),
        ("ftruncate", 3, 20), ("ftruncate", 3, 5), ("pwrite64", 3, "BUF", 3, 9),
        ("pwrite64", 3, "BUF", 2, 0),                                  # within the size
        (fcntl, 3, F_ADD_SEALS, WRITE),
        ("pwrite64", 3, "BUF", 1, 0),
        (mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, 3, 0),
        (fcntl, 3, F_ADD_SEALS, SEAL), (fcntl, 3, F_ADD_SEALS, 0x20),
        (fcntl, 3, F_GET_SEALS, 0),
        ("memfd_create", "BUF", 0),                                     # 4: not sealable
        (fcntl, 4, F_GET_SEALS, 0), (fcntl, 4, F_ADD_SEALS, GROW),
        ("memfd_create", "BUF", MFD_HUGETLB | MFD_HUGE_64KB), ("memfd_create", "BUF", 0x100),
        ("memfd_create", "BUF+20", 0),
        ("open", "/f", O_RDONLY), (fcntl, 5, F_GET_SEALS, 0),
    ], data=data)
    assert results == [3, 1, 10, 20, 4, 0, 0, -E.EPERM, -E.EPERM, -E.EPERM, 2, 0, -E.EPERM,
                       -E.EPERM, 0, -E.EPERM, SEAL | GROW | SHRINK | WRITE, 4, SEAL, -E.EPERM,
                       -E.ENODEV, -E.EINVAL, -E.EINVAL, 5, -E.EINVAL]
    assert buf[512:532] == b"/memfd:box (deleted)" and buf[600:604] == b"proc"


def test_a_shared_read_only_map_of_a_write_sealed_memfd_ends_quietly(arch):
    """Unmapping a shared map of a memfd sealed against writes writes its pages back: the
    kernel's write-back is no writer the seal refuses (it panicked with EPERM: LTP
    memfd_create01)."""
    fcntl = "fcntl" if arch == "x86_64" else "fcntl64"
    mmap = "mmap" if arch == "x86_64" else "mmap2"
    results, _, _ = run_script(arch, [
        ("memfd_create", "BUF", MFD_ALLOW_SEALING),
        ("ftruncate", 3, 4096),
        (fcntl, 3, F_ADD_SEALS, WRITE),
        (mmap, 0x50000000, 4096, PROT_READ, MAP_SHARED | 0x10, 3, 0),
        ("munmap", 0x50000000, 4096),
        ("close", 3),
    ], data=b"box\0")
    assert results == [3, 0, 0, 0x50000000, 0, 0]
