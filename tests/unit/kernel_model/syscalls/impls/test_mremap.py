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


MREMAP_FIXED = 2
PROT_RW, MAP_PRIVATE_ANON = 3, 0x22


def _mmap(arch):
    return "mmap2" if arch == "i386" else "mmap"


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_flags_and_alignment_are_checked_first(arch):
    """mm/mremap.c checks the flags and the old address's alignment before any area: an
    unaligned address inside a mapping is EINVAL (LTP mremap02 got EFAULT), MREMAP_FIXED
    without MREMAP_MAYMOVE is EINVAL (LTP mremap05: it moved)."""
    results, _, _ = run_script(arch, [
        ("mremap", RO_VADDR + 1, 0x1000, 0x2000, MREMAP_MAYMOVE),
        ("mremap", RO_VADDR, 0x1000, 0x1000, MREMAP_FIXED, 0x0720_0000),
        ("mremap", RO_VADDR, 0x1000, 0x1000, 8),
        ("mremap", RO_VADDR, 0x1000, 0, MREMAP_MAYMOVE)])
    assert results == [-E.EINVAL] * 4


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_mremap_fixed_moves_the_pages_to_the_new_address(arch):
    """MREMAP_FIXED | MREMAP_MAYMOVE moves the area to new_address, replacing what was there,
    with its bytes; an unaligned or overlapping new address is EINVAL (mremap_to)."""
    old, new = 0x0710_0000, 0x0720_0000
    fixed = MAP_PRIVATE_ANON | 0x10
    both = MREMAP_FIXED | MREMAP_MAYMOVE
    results, buf, _ = run_script(arch, [
        (_mmap(arch), old, 0x1000, PROT_RW, fixed, -1, 0),
        (_mmap(arch), new, 0x1000, PROT_RW, fixed, -1, 0),
        ("mremap", old, 0x1000, 0x1000, both, new + 1),
        ("mremap", old, 0x2000, 0x1000, both, old + 0x1000),
        ("mremap", "BUF", 0x1000, 0x1000, both, new),           # BUF is not page aligned
        ("pipe", "BUF+512"),
        ("write", 4, "RO", 8),
        ("read", 3, old, 8),
        ("mremap", old, 0x1000, 0x1000, both, new),
        ("write", 4, new, 8),
        ("read", 3, "BUF", 8),
        ("msync", old, 0x1000, 4)])
    assert results[:2] == [old, new]
    assert results[2:5] == [-E.EINVAL] * 3
    assert results[6:] == [8, 8, new, 8, 8, -E.ENOMEM]        # the old place is unmapped
    assert buf[:8] == b"A" * 8                                  # RO's bytes, moved along
