"""mseal (LTP mseal01/mseal02 got ENOSYS): a sealed area cannot be unmapped, moved, resized,
re-protected or mapped over (EPERM, nothing changed), nor a read-only one discarded; the
checks of the call itself (mm/mseal.c do_mseal)."""
import pytest

from kernel_model import errno as E

from ...call_script import run_script

PAGE = 4096
PROT_READ, PROT_RW = 1, 3
MAP_PRIVATE_ANON, MAP_FIXED = 0x22, 0x10
MADV_DONTNEED, MREMAP_MAYMOVE = 4, 1


@pytest.mark.parametrize("abi", ["i386", "x86_64"])
def test_a_sealed_area_stays_as_it_is(abi):
    mmap = "mmap2" if abi == "i386" else "mmap"
    results, _, _ = run_script(abi, [
        (mmap, 0, 4 * PAGE, PROT_RW, MAP_PRIVATE_ANON, -1, 0), ("mseal", "@0", 4 * PAGE, 0),
        ("munmap", "@0", PAGE), ("mprotect", "@0", PAGE, PROT_READ),
        ("mremap", "@0", 4 * PAGE, 8 * PAGE, MREMAP_MAYMOVE, 0),
        (mmap, "@0", PAGE, PROT_RW, MAP_PRIVATE_ANON | MAP_FIXED, -1, 0),
        ("madvise", "@0", PAGE, MADV_DONTNEED),
        (mmap, 0, PAGE, PROT_READ, MAP_PRIVATE_ANON, -1, 0), ("mseal", "@7", PAGE, 0),
        ("madvise", "@7", PAGE, MADV_DONTNEED), ("mseal", "@7", PAGE, 1), ("mseal", "@7", 0, 0),
        ("mseal", 0x10000, PAGE, 0), ("munmap", "@7", PAGE)])
    assert results[0] % PAGE == 0 and results[7] % PAGE == 0     # addresses (i386: signed)
    assert results[1:7] == [0, -E.EPERM, -E.EPERM, -E.EPERM, -E.EPERM, 0]
    assert results[8:] == [0, -E.EPERM, -E.EINVAL, 0, -E.ENOMEM, -E.EPERM]


@pytest.mark.parametrize("abi", ["i386", "x86_64"])
def test_a_length_that_wraps_the_word_is_einval(abi):
    """LTP mseal02's overflow case, ULONG_MAX - page + 2, rounded up to pages, wraps the
    kernel's unsigned long: EINVAL on both ABIs, since the model shows an i386 guest a 32-bit
    kernel (uname's i686; a compat task of a 64-bit kernel would get ENOMEM)."""
    mmap = "mmap2" if abi == "i386" else "mmap"
    overflow = (1 << (32 if abi == "i386" else 64)) - 1 - PAGE + 2
    results, _, _ = run_script(abi, [(mmap, 0, 4 * PAGE, PROT_RW, MAP_PRIVATE_ANON, -1, 0),
                                     ("mseal", "@0", overflow, 0)])
    assert results[1] == -E.EINVAL
