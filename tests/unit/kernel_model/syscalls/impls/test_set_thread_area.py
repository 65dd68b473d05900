"""set_thread_area gives an i386 program the TLS entries of the x86-64 kernel it runs on
(GDT_ENTRY_TLS_MIN 12, arch/x86/include/asm/segment.h): entry -1 asks for the first free one,
12, then 13 and 14; a fourth is ESRCH, an entry outside 12..14 EINVAL (do_set_thread_area). The
32-bit kernel's 6..8 were the model before, which a 32-bit program on the hosts it is compared
with never sees."""
import struct

from kernel_model import errno as E

from ...call_script import run_script

FLAT = (0x1000, 0xFFFFF, 0x51)            # base, limit; seg_32bit, limit_in_pages, useable


def _user_desc(entry: int) -> bytes:
    return struct.pack("<iIII", entry, *FLAT)


def test_free_entries_are_12_to_14():
    descs = _user_desc(-1) * 4 + _user_desc(6) + _user_desc(12)
    calls = [("set_thread_area", f"BUF+{16 * i}") for i in range(6)]
    results, buf, _ = run_script("i386", calls, data=descs)
    assert results == [0, 0, 0, -E.ESRCH, -E.EINVAL, 0]
    assert [struct.unpack_from("<i", buf, 16 * i)[0] for i in range(3)] == [12, 13, 14]
