"""strace -v: structures in full (unabbreviated.py). The expected texts are Debian's strace 6.1
-v output for the same bytes (a stat of /etc/hostname, the statx of a pipe, uname, getdents64
of a folder), packed here in each ABI's layout."""
import struct

import pytest

from trapline.strace.syscall_line import format_syscall
from tests.unit.trapline.strace.fake_memory import FakeMemory

PATH, BUF = 0x1000, 0x2000
AT_FDCWD = (1 << 64) - 100
# st_dev 0xfe00 (254:0), ino 612, a 0755 file of 3 bytes; atime without nanoseconds
DEV, INO, MODE, SIZE, BLOCKS = 0xfe00, 612, 0o100755, 3, 8
ATIME, MTIME, MTIME_NS = 1792201761, 1795880070, 352976643
STAT_TEXT = ("{st_dev=makedev(0xfe, 0), st_ino=612, st_mode=S_IFREG|0755, st_nlink=1, st_uid=0, "
             "st_gid=0, st_blksize=4096, st_blocks=8, st_size=3, "
             "st_atime=1792201761 /* 2026-10-17T01:49:21+0000 */, st_atime_nsec=0, "
             "st_mtime=1795880070 /* 2026-11-28T15:34:30.352976643+0000 */, "
             "st_mtime_nsec=352976643, "
             "st_ctime=1795880070 /* 2026-11-28T15:34:30.352976643+0000 */, "
             "st_ctime_nsec=352976643}")


class VerboseMemory(FakeMemory):
    verbose = True


def _memory(buffer: bytes) -> FakeMemory:
    mem = VerboseMemory()
    mem.put(PATH, b"/etc/hostname\0")
    mem.put(BUF, buffer)
    return mem


def _stat_x86_64() -> bytes:
    return struct.pack("<QQQIIIiQqqqqqqqqq", DEV, INO, 1, MODE, 0, 0, 0, 0, SIZE, 4096, BLOCKS,
                       ATIME, 0, MTIME, MTIME_NS, MTIME, MTIME_NS) + bytes(24)


def _stat64_i386() -> bytes:
    return struct.pack("<Q4sIIIIIQ4sqIQIIIIIIQ", DEV, bytes(4), INO & 0xffffffff, MODE, 1, 0, 0,
                       0, bytes(4), SIZE, 4096, BLOCKS, ATIME, 0, MTIME, MTIME_NS, MTIME,
                       MTIME_NS, INO)


def test_newfstatat_in_full():
    line = format_syscall("newfstatat", (AT_FDCWD, PATH, BUF, 0x100), 0, _memory(_stat_x86_64()), 64)
    assert line == f'newfstatat(AT_FDCWD, "/etc/hostname", {STAT_TEXT}, AT_SYMLINK_NOFOLLOW) = 0'


def test_i386_stat64_in_full():
    line = format_syscall("stat64", (PATH, BUF), 0, _memory(_stat64_i386()), 32)
    assert line == f'stat64("/etc/hostname", {STAT_TEXT}) = 0'


def test_statx_in_full():
    statx = bytearray(256)
    struct.pack_into("<IIQIIIH", statx, 0, 0x17ff, 4096, 0, 1, 0, 0, 0o10600)
    struct.pack_into("<QQQQ", statx, 32, 4044818, 0, 0, 0x203000)
    for offset in (64, 96, 112):
        struct.pack_into("<qI", statx, offset, 1795900428, 509546723)
    struct.pack_into("<IIIIQ", statx, 128, 0, 0, 0, 15, 0x10)
    line = format_syscall("statx", (1, PATH + 13, 0x1800, 0x7ff, BUF), 0, _memory(bytes(statx)), 32)
    stamp = "{tv_sec=1795900428, tv_nsec=509546723} /* 2026-11-28T21:13:48.509546723+0000 */"
    assert line == (
        'statx(1, "", AT_STATX_SYNC_AS_STAT|AT_NO_AUTOMOUNT|AT_EMPTY_PATH, STATX_BASIC_STATS, '
        "{stx_mask=STATX_BASIC_STATS|STATX_MNT_ID, stx_blksize=4096, stx_attributes=0, "
        "stx_nlink=1, stx_uid=0, stx_gid=0, stx_mode=S_IFIFO|0600, stx_ino=4044818, stx_size=0, "
        "stx_blocks=0, stx_attributes_mask=STATX_ATTR_AUTOMOUNT|STATX_ATTR_MOUNT_ROOT|STATX_ATTR_DAX, "
        f"stx_atime={stamp}, stx_ctime={stamp}, stx_mtime={stamp}, stx_rdev_major=0, "
        "stx_rdev_minor=0, stx_dev_major=0, stx_dev_minor=15, stx_mnt_id=0x10}) = 0")


@pytest.mark.parametrize("bits", [32, 64])
def test_uname_in_full(bits):
    fields = (b"Linux", b"vm", b"6.18.44-fc-v595", b"#1 SMP PREEMPT_DYNAMIC @0", b"x86_64", b"(none)")
    line = format_syscall("uname", (BUF,), 0, _memory(b"".join(f.ljust(65, b"\0") for f in fields)), bits)
    assert line == ('uname({sysname="Linux", nodename="vm", release="6.18.44-fc-v595", '
                    'version="#1 SMP PREEMPT_DYNAMIC @0", machine="x86_64", domainname="(none)"}) = 0')


def _dirent64(ino: int, off: int, kind: int, name: bytes) -> bytes:
    reclen = (19 + len(name) + 1 + 7) // 8 * 8
    return struct.pack("<QqHB", ino, off, reclen, kind) + name.ljust(reclen - 19, b"\0")


def test_getdents64_in_full():
    records = (_dirent64(5513495, 2370361613739046146, 4, b".")
               + _dirent64(5513668, 504404622617448509, 8, b"sockets.c"))
    line = format_syscall("getdents64", (3, BUF, 32768), len(records), _memory(records), 64)
    assert line == ('getdents64(3, [{d_ino=5513495, d_off=2370361613739046146, d_reclen=24, '
                    'd_type=DT_DIR, d_name="."}, {d_ino=5513668, d_off=504404622617448509, '
                    'd_reclen=32, d_type=DT_REG, d_name="sockets.c"}], 32768) = 56')
    assert format_syscall("getdents64", (3, BUF, 32768), 0, _memory(b""), 64) == \
        "getdents64(3, [], 32768) = 0"


def test_i386_getdents_names_the_type_after_the_name():
    """linux_dirent (fs/readdir.c): 32-bit d_ino and d_off, d_type in the record's last byte."""
    record = struct.pack("<IIH", 12, 1, 16) + b"bin\0" + bytes(1) + bytes([4])
    line = format_syscall("getdents", (3, BUF, 1024), len(record), _memory(record), 32)
    assert line == 'getdents(3, [{d_ino=12, d_off=1, d_reclen=16, d_name="bin", d_type=DT_DIR}], 1024) = 16'


def test_without_dash_v_the_stat_stays_abbreviated():
    mem = FakeMemory({PATH: b"/etc/hostname\0", BUF: _stat_x86_64()})
    line = format_syscall("newfstatat", (AT_FDCWD, PATH, BUF, 0x100), 0, mem, 64)
    assert line == ('newfstatat(AT_FDCWD, "/etc/hostname", {st_mode=S_IFREG|0755, st_size=3, ...}, '
                    "AT_SYMLINK_NOFOLLOW) = 0")
