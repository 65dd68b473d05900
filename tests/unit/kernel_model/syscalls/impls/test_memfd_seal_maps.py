"""F_SEAL_WRITE and shared mappings of a memfd (issue 32, LTP memfd_create01): adding the seal
is EBUSY while a shared mapping that may be written exists (mapping_deny_writable: a PROT_READ
one counts, it could be mprotect'ed), and a shared mapping of a sealed memfd cannot be made
writable by mprotect (memfd_check_seals_mmap clears VM_MAYWRITE). Both were accepted before."""
import pytest

from kernel_model import errno as E

from ...call_script import run_script

MFD_ALLOW_SEALING, F_ADD_SEALS, F_SEAL_WRITE = 2, 1033, 8
AT, PROT_READ, PROT_WRITE, MAP_SHARED_FIXED, MAP_PRIVATE_FIXED = 0x0710_0000, 1, 2, 0x11, 0x12


def _mmap(arch):
    return "mmap2" if arch == "i386" else "mmap"


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_write_seal_and_shared_maps(arch):
    results, _, _ = run_script(arch, [
        ("memfd_create", "BUF", MFD_ALLOW_SEALING),
        ("ftruncate", 3, 4096),
        (_mmap(arch), AT, 4096, PROT_READ, MAP_SHARED_FIXED, 3, 0),
        ("fcntl", 3, F_ADD_SEALS, F_SEAL_WRITE),          # mapped shared: EBUSY
        ("munmap", AT, 4096),
        (_mmap(arch), AT, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE_FIXED, 3, 0),
        ("fcntl", 3, F_ADD_SEALS, F_SEAL_WRITE),          # a private map does not count
        (_mmap(arch), AT, 4096, PROT_READ, MAP_SHARED_FIXED, 3, 0),
        ("mprotect", AT, 4096, PROT_READ | PROT_WRITE)], data=b"sealed\0")
    assert results == [3, 0, AT, -E.EBUSY, 0, AT, 0, AT, -E.EACCES]
