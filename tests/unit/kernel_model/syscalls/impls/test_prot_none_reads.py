"""A copy from the user faults on a PROT_NONE page (EFAULT), as on Linux: the page is mapped
but not present to the user. Reads of a call's arguments went straight to the emulator's
memory and succeeded (LTP timer_settime02: new_value on tst_get_bad_addr's PROT_NONE page
was accepted)."""
import pytest

from kernel_model import errno as E

from ...call_script import run_script

PROT_NONE, PROT_WRITE = 0, 2
MAP_PRIVATE, MAP_FIXED, MAP_ANONYMOUS = 2, 0x10, 0x20
AT = 0x5000_0000


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_reading_an_argument_from_a_prot_none_page_is_efault(arch):
    mmap = "mmap2" if arch == "i386" else "mmap"
    flags = MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS
    results, _, _ = run_script(arch, [
        (mmap, AT, 4096, PROT_NONE, flags, -1 & 0xFFFFFFFF, 0),
        ("nanosleep", AT, 0),                          # its timespec cannot be read
        ("mprotect", AT, 4096, PROT_WRITE),            # write implies read on x86
        ("nanosleep", AT, 0),                          # zeros: returns at once
    ])
    assert results == [AT, -E.EFAULT, 0, 0]
