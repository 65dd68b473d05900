"""mlock, mlockall and MAP_LOCKED mark areas VM_LOCKED, which /proc/PID/status counts as VmLck
and msync(MS_INVALIDATE) refuses (EBUSY). They changed nothing before: LTP mmap14, mlock203 and
munlockall01 read VmLck (there was no such line), msync03 expected EBUSY."""
import re

import pytest

from kernel_model import errno as E

from ...call_script import run_script

PROT_RW, MAP_PRIVATE_ANON, MAP_SHARED_ANON, MAP_FIXED, MAP_LOCKED = 3, 0x22, 0x21, 0x10, 0x2000
MCL_CURRENT, MCL_FUTURE = 1, 2
MS_INVALIDATE = 2
AT_FDCWD = -100
AREA = 0x0710_0000
STATUS = b"/proc/self/status\0"


def _mmap(arch):
    return "mmap2" if arch == "i386" else "mmap"


def _read_status(index: int):
    """Calls that read /proc/self/status into BUF+256+index*512 (the path is at BUF)."""
    return [("openat", AT_FDCWD, "BUF", 0, 0), ("read", 3, f"BUF+{256 + index * 512}", 500),
            ("close", 3)]


def _vmlck_kb(buf: bytes, index: int) -> int:
    text = buf[256 + index * 512:256 + (index + 1) * 512]
    return int(re.search(rb"VmLck:\t *(\d+) kB\n", text).group(1))


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_vmlck_counts_each_locked_page_once(arch):
    calls = [(_mmap(arch), AREA, 0x8000, PROT_RW, MAP_PRIVATE_ANON | MAP_FIXED, -1, 0),
             *_read_status(0),
             ("mlock", AREA, 0x1001),                  # two pages: the range is rounded out
             *_read_status(1),
             ("mlock", AREA, 0x2000),                  # the same pages again
             *_read_status(2),
             ("munlock", AREA + 0x1000, 0x1000),       # splits the locked area
             *_read_status(3)]
    results, buf, _ = run_script(arch, calls, data=STATUS)
    assert results[0] == AREA
    assert [_vmlck_kb(buf, i) for i in range(4)] == [0, 8, 8, 4]


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_mlockall_map_locked_and_munlockall(arch):
    """MCL_CURRENT locks every area, MCL_FUTURE the ones made later (mm->def_flags), MAP_LOCKED
    one mapping; munlockall undoes both."""
    calls = [("mlockall", MCL_FUTURE),
             (_mmap(arch), AREA, 0x3000, PROT_RW, MAP_PRIVATE_ANON | MAP_FIXED, -1, 0),
             *_read_status(0),
             ("munlockall",),
             *_read_status(1),
             (_mmap(arch), AREA + 0x10000, 0x2000, PROT_RW, MAP_SHARED_ANON | MAP_LOCKED, -1, 0),
             *_read_status(2),
             ("mlockall", MCL_CURRENT),
             *_read_status(3),
             ("munlockall",),
             *_read_status(4)]
    results, buf, _ = run_script(arch, calls, data=STATUS)
    locked = [_vmlck_kb(buf, i) for i in range(5)]
    assert locked[:3] == [12, 0, 8]
    assert locked[3] > 12 and locked[4] == 0       # everything mapped, then nothing


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_msync_invalidate_of_locked_pages_is_ebusy(arch):
    results, _, _ = run_script(arch, [
        (_mmap(arch), AREA, 0x2000, PROT_RW, MAP_SHARED_ANON | MAP_FIXED | MAP_LOCKED, -1, 0),
        ("msync", AREA, 0x2000, MS_INVALIDATE),
        ("munlock", AREA, 0x2000),
        ("msync", AREA, 0x2000, MS_INVALIDATE)])
    assert results == [AREA, -E.EBUSY, 0, 0]
