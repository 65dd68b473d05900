"""getgroups/setgroups' id lists and utimensat's times as Debian's strace 6.1 prints them
(busybox id: `getgroups(64, []) = 0`; busybox touch: `[UTIME_NOW, UTIME_NOW]`)."""
import struct

import pytest

from trapline.strace.syscall_line import format_syscall
from tests.unit.trapline.strace.fake_memory import FakeMemory

LIST, TIMES = 0x1000, 0x2000
AT_FDCWD = (1 << 64) - 100
UTIME_NOW, UTIME_OMIT = (1 << 30) - 1, (1 << 30) - 2


@pytest.mark.parametrize("name, bits, packed", [("getgroups", 64, "<II"), ("getgroups32", 32, "<II"),
                                                ("getgroups", 32, "<HH")])
def test_the_ids_getgroups_wrote(name, bits, packed):
    mem = FakeMemory({LIST: struct.pack(packed, 0, 4)})
    assert format_syscall(name, (64, LIST), 2, mem, bits) == f"{name}(64, [0, 4]) = 2"
    assert format_syscall(name, (64, LIST), 0, mem, bits) == f"{name}(64, []) = 0"


def test_setgroups_shows_the_ids_it_gives():
    mem = FakeMemory({LIST: struct.pack("<I", 0)})
    assert format_syscall("setgroups", (1, LIST), 0, mem, 64) == "setgroups(1, [0]) = 0"


@pytest.mark.parametrize("bits, field", [(64, "q"), (32, "i")])
def test_utimensat_times(bits, field):
    mem = FakeMemory({TIMES: struct.pack(f"<4{field}", 0, UTIME_NOW, 0, UTIME_OMIT),
                      TIMES + 64: struct.pack(f"<4{field}", 5, 0, 1, 2)})
    fdcwd = AT_FDCWD & ((1 << bits) - 1)
    assert format_syscall("utimensat", (fdcwd, 0, TIMES, 0), 0, mem, bits) == \
        "utimensat(AT_FDCWD, NULL, [UTIME_NOW, UTIME_OMIT], 0) = 0"
    assert format_syscall("utimensat", (fdcwd, 0, TIMES + 64, 0), 0, mem, bits) == (
        "utimensat(AT_FDCWD, NULL, [{tv_sec=5, tv_nsec=0} /* 1970-01-01T00:00:05+0000 */, "
        "{tv_sec=1, tv_nsec=2} /* 1970-01-01T00:00:01.000000002+0000 */], 0) = 0")


def test_getgroups_of_size_0_reads_as_many_as_it_returned():
    """strace reads `ret` ids whatever the size (glibc's id: `getgroups32(0, []) = 0`)."""
    assert format_syscall("getgroups32", (0, LIST), 0, FakeMemory({LIST: bytes(8)}), 32) == \
        "getgroups32(0, []) = 0"
