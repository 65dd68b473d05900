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


def test_get_thread_area_reads_back_what_was_set():
    """get_thread_area (LTP set_thread_area01 on i386: ENOSYS) answers fill_user_desc's view
    of the slot: the same fields for a set one, a cleared descriptor (read_exec_only and
    seg_not_present) for an empty one, EINVAL outside 12..14; set_thread_area refuses a 16-bit
    or code segment (tls_desc_okay) and clears a slot given an empty descriptor."""
    cleared = struct.pack("<iIII", 13, 0, 0, 0x28)          # LDT_empty
    code = struct.pack("<iIII", 14, 0x1000, 0xFFFFF, 0x51 | 0x4)   # contents 2: code
    sixteen = struct.pack("<iIII", 14, 0x1000, 0xFFFFF, 0x50)      # seg_32bit 0
    data = (_user_desc(-1) + struct.pack("<i", 12) + bytes(12) + struct.pack("<i", 13)
            + bytes(12) + struct.pack("<i", 11) + bytes(12) + cleared + code + sixteen
            + struct.pack("<i", 12) + bytes(12))
    calls = [("set_thread_area", "BUF+0"), ("get_thread_area", "BUF+16"),
             ("get_thread_area", "BUF+32"), ("get_thread_area", "BUF+48"),
             ("set_thread_area", "BUF+64"), ("set_thread_area", "BUF+80"),
             ("set_thread_area", "BUF+96"), ("set_thread_area", "BUF+112")]
    clear12 = struct.pack("<iIII", 12, 0, 0, 0x28)
    results, buf, _ = run_script("i386", calls + [("set_thread_area", "BUF+128"),
                                                  ("get_thread_area", "BUF+144")],
                                 data=data + clear12 + struct.pack("<i", 12) + bytes(12))
    assert results == [0, 0, 0, -E.EINVAL, 0, -E.EINVAL, -E.EINVAL, 0, 0, 0]
    assert buf[16:32] == struct.pack("<iIII", 12, *FLAT)
    assert buf[32:48] == struct.pack("<iIII", 13, 0, 0, 0x28)      # never set: cleared
    assert buf[144:160] == struct.pack("<iIII", 12, 0, 0, 0x28)    # cleared by an empty one
