"""/proc/self/mountinfo and the mount ids (issue 32, LTP statx01: no mountinfo, ENOENT): the
modeled mounts as show_mountinfo prints them, and statx's stx_mnt_id of a file is the id of
the line with its device (the rootfs, /proc, /dev), as /proc/self/fdinfo's mnt_id."""
import struct

from ..call_script import run_script

O_RDONLY, AT_FDCWD = 0, -100
STATX_MNT_ID = 0x1000
MNT_ID_AT = 0x90                        # struct statx's stx_mnt_id


def test_statx_mount_ids_are_mountinfo_lines(arch):
    data = b"/proc/self/mountinfo\0".ljust(32, b"\0") + b"/dev/null\0"
    results, buf, _ = run_script(arch, [
        ("open", "BUF", O_RDONLY),                                   # 3
        ("read", 3, "BUF+256", 400),
        ("statx", AT_FDCWD, "/f", 0, STATX_MNT_ID, "BUF+1024"),
        ("statx", AT_FDCWD, "/proc/self/maps", 0, STATX_MNT_ID, "BUF+1536"),
        ("statx", AT_FDCWD, "BUF+32", 0, STATX_MNT_ID, "BUF+2048"),
    ], data=data)
    assert results[0] == 3 and results[2:] == [0, 0, 0]
    lines = buf[256:256 + results[1]].decode().splitlines()
    by_point = {line.split()[4]: line.split() for line in lines}
    assert set(by_point) == {"/", "/proc", "/dev"}
    for offset, point in ((1024, "/"), (1536, "/proc"), (2048, "/dev")):
        mnt_id = struct.unpack_from("<Q", buf, offset + MNT_ID_AT)[0]
        major, minor = struct.unpack_from("<II", buf, offset + 0x88)       # stx_dev_*
        fields = by_point[point]
        assert int(fields[0]) == mnt_id and fields[2] == f"{major}:{minor}"
    assert by_point["/proc"][8] == "proc" and by_point["/"][1] == "1"
