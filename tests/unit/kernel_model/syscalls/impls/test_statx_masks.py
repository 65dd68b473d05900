"""statx's answered mask (both ABIs): the birth time when asked and kept (a rootfs file's is
its host mtime, a file made in the sandbox's its making's virtual time, devtmpfs's too; procfs
keeps none), and no mtime or ctime from the rootfs (multigrain timestamps, Linux 6.13's
fill_mg_cmtime) when the call asked for neither, as the reference host answers."""
import os
import struct

from ...call_script import run_script

AT_FDCWD = -100
STATX_MODE, STATX_MTIME, STATX_BASIC_STATS, STATX_BTIME, STATX_ALL = 0x2, 0x40, 0x7FF, 0x800, 0xFFF
STATX_MNT_ID = 0x1000
MTIME_CTIME = 0x40 | 0x80
O_CREAT_WRONLY = 0o101


def _answer(buf: bytes, at: int) -> tuple[int, int]:
    """(stx_mask, stx_btime.tv_sec) of the struct statx at `at` (stx_btime at 0x50)."""
    return struct.unpack_from("<I", buf, at)[0], struct.unpack_from("<q", buf, at + 0x50)[0]


def test_each_file_system_answers_its_mask(arch, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "f").write_bytes(b"hello\n")
    os.utime(root / "f", ns=(1_600_000_000 * 10**9, 1_600_000_000 * 10**9))
    (root / "d").mkdir()
    (root / "tmp").mkdir()
    calls = [("statx", AT_FDCWD, "/f", 0, STATX_ALL, "BUF"),
             ("statx", AT_FDCWD, "/f", 0, STATX_MODE, "BUF+256"),
             ("statx", AT_FDCWD, "/f", 0, STATX_MTIME, "BUF+512"),
             ("statx", AT_FDCWD, "/proc/self/maps", 0, STATX_ALL, "BUF+768"),
             ("statx", AT_FDCWD, "/dev/null", 0, STATX_ALL, "BUF+1024"),
             ("statx", AT_FDCWD, "/dev/null", 0, 0, "BUF+1280"),
             ("open", "/tmp/new", O_CREAT_WRONLY, 0o644),
             ("statx", AT_FDCWD, "/tmp/new", 0, STATX_BTIME | STATX_MTIME, "BUF+1536")]
    results, buf, kernel = run_script(arch, calls, rootfs=root)
    assert results[:6] == [0] * 6 and results[7] == 0
    basic = STATX_BASIC_STATS | STATX_MNT_ID
    assert _answer(buf, 0) == (basic | STATX_BTIME, 1_600_000_000)     # the host file's mtime
    assert _answer(buf, 256) == (basic & ~MTIME_CTIME, 0)               # multigrain: not asked
    assert _answer(buf, 512)[0] == basic                                # mtime asked: both come
    assert _answer(buf, 768) == (basic, 0)                              # procfs: no btime
    assert _answer(buf, 1024)[0] == basic | STATX_BTIME                 # devtmpfs keeps one
    assert _answer(buf, 1280)[0] == basic                               # ... given when asked
    made, born = _answer(buf, 1536)
    modified = struct.unpack_from("<qI", buf, 1536 + 0x70)
    assert made == basic | STATX_BTIME
    assert (born, struct.unpack_from("<I", buf, 1536 + 0x58)[0]) == modified   # made, not written
    assert 0 < born <= kernel.clock.realtime_ns() // 10**9             # on the virtual clock
