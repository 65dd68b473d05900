"""/proc/PID/fdinfo/N (kernel_model/fs/fdinfo.py): ENOENT before (LTP inotify12 could not parse
an inotify instance's watch line). Each file shows its position, its flags with O_CLOEXEC,
the mount id and the inode; an inotify instance adds a line per watch with its mask."""
import re

from tests.unit.kernel_model.call_script import run_script

O_RDONLY, O_CLOEXEC, O_LARGEFILE = 0, 0o2000000, 0o100000
IN_MODIFY, IN_ATTRIB, IN_MASK_ADD = 2, 4, 0x20000000
IN_EXCL_UNLINK, IN_ONESHOT = 0x04000000, 0x80000000
# BUF: "/proc/self/fdinfo/3\0" at 0, ".../4\0" at 32
PATHS = b"/proc/self/fdinfo/3\0".ljust(32, b"\0") + b"/proc/self/fdinfo/4\0"


def test_a_file_s_fdinfo_shows_its_position_flags_and_inode(arch):
    results, buf, _ = run_script(arch, [
        ("open", "/f", O_RDONLY | O_CLOEXEC),
        ("lseek", "@0", 5, 0),
        ("open", "BUF", O_RDONLY),
        ("read", "@2", "BUF+512", 400),
        ("fstat", "@0", "BUF+1024"),
    ], data=PATHS)
    assert results[0] == 3 and results[1] == 5 and results[2] == 4
    text = buf[512:512 + results[3]].decode()
    flags = O_CLOEXEC | (O_LARGEFILE if arch == "x86_64" else 0)
    assert re.fullmatch(rf"pos:\t5\nflags:\t0{flags:o}\nmnt_id:\t1\nino:\t\d+\n", text), text


def test_an_inotify_instance_lists_each_watch_with_its_user_mask(arch):
    """inotify_mark_user_mask: the events, IN_EXCL_UNLINK and IN_ONESHOT; not IN_MASK_ADD.
    The newest watch comes first (checked natively, as the masks and the flags line)."""
    results, buf, _ = run_script(arch, [
        ("inotify_init1", 0),
        ("inotify_add_watch", "@0", "/d", IN_MODIFY | IN_EXCL_UNLINK | IN_ONESHOT),
        ("inotify_add_watch", "@0", "/f", IN_ATTRIB),
        ("inotify_add_watch", "@0", "/f", IN_MODIFY | IN_MASK_ADD),
        ("open", "BUF", O_RDONLY),
        ("read", "@4", "BUF+512", 400),
    ], data=PATHS)
    assert results[:4] == [3, 1, 2, 2]
    lines = buf[512:512 + results[5]].decode().splitlines()
    assert lines[:4] == ["pos:\t0", "flags:\t00", "mnt_id:\t1", "ino:\t1"], lines
    watches = [re.fullmatch(r"inotify wd:(\w+) ino:(\w+) sdev:(\w+) mask:(\w+) ignored_mask:0",
                            line) for line in lines[4:]]
    assert len(watches) == 2 and all(watches), lines
    assert [(int(m[1], 16), int(m[4], 16)) for m in watches] == \
        [(2, IN_ATTRIB | IN_MODIFY), (1, IN_MODIFY | IN_EXCL_UNLINK | IN_ONESHOT)]
