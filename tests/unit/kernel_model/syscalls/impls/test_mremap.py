"""mremap grows or moves only a range that lies in one mapping (mm/mremap.c vma_to_resize:
EFAULT); it grew a one-page mapping in place from an old size past its end, leaving a hole."""
import pytest

from kernel_model import errno as E
from tests.property.syscall_fuzz_guest import RO_VADDR

from ...call_script import run_script

MREMAP_MAYMOVE = 1


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_old_size_past_the_mapping_is_efault(arch):
    results, _, _ = run_script(arch, [("mremap", RO_VADDR, 0x3000, 0x4000, MREMAP_MAYMOVE)])
    assert results == [-E.EFAULT]


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_shrinking_within_the_mapping_still_works(arch):
    results, _, _ = run_script(arch, [("mremap", RO_VADDR, 0x1000, 0x1000, 0)])
    assert results == [RO_VADDR]
