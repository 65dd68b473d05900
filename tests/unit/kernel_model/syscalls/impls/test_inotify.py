"""inotify (kernel_model/notify/, fs/fsnotify.py): ENOSYS before (LTP inotify01, 02, 04, 05,
11 and inotify_init1_01/02 broke or TCONF'd on it)."""
import struct

from kernel_model import errno as E
from kernel_model.fs.constants import O_CREAT, O_NONBLOCK, O_RDONLY, O_WRONLY
from kernel_model.fs.fsnotify import (IN_ALL_EVENTS, IN_ATTRIB, IN_CLOSE_WRITE, IN_CREATE,
                                      IN_DELETE, IN_DELETE_SELF, IN_IGNORED, IN_ISDIR,
                                      IN_MODIFY, IN_MOVED_FROM, IN_MOVED_TO, IN_OPEN)
from tests.unit.kernel_model.call_script import run_script

# BUF: "/d/new\0" at 0, "/d/sub\0" at 8, "/d/moved\0" at 16, "xy" at 32
STRINGS = b"/d/new\0\0/d/sub\0\0/d/moved\0" + bytes(7) + b"xy"


def _events(data: bytes) -> list[tuple[int, int, int, bytes]]:
    events, at = [], 0
    while at < len(data):
        wd, mask, cookie, size = struct.unpack_from("<iIII", data, at)
        events.append((wd, mask, cookie, data[at + 16:at + 16 + size].rstrip(b"\0")))
        at += 16 + size
    return events


def test_a_directory_watch_hears_its_children(arch):
    results, buf, _ = run_script(arch, [
        ("inotify_init1", O_NONBLOCK),
        ("inotify_add_watch", "@0", "/d", IN_ALL_EVENTS),
        ("open", "BUF", O_CREAT | O_WRONLY, 0o644),
        ("write", "@2", "BUF+32", 2),
        ("close", "@2"),
        ("mkdir", "BUF+8", 0o755),
        ("rename", "BUF", "BUF+16"),
        ("unlink", "BUF+16"),
        ("read", "@0", "BUF+512", 1500),
        ("read", "@0", "BUF+512", 1500),
    ], data=STRINGS)
    assert results[:2] == [3, 1] and results[9] == -E.EAGAIN
    events = _events(buf[512:512 + results[8]])
    cookie = events[5][2]
    assert cookie and events == [
        (1, IN_CREATE, 0, b"new"), (1, IN_OPEN, 0, b"new"), (1, IN_MODIFY, 0, b"new"),
        (1, IN_CLOSE_WRITE, 0, b"new"), (1, IN_CREATE | IN_ISDIR, 0, b"sub"),
        (1, IN_MOVED_FROM, cookie, b"new"), (1, IN_MOVED_TO, cookie, b"moved"),
        (1, IN_DELETE, 0, b"moved")]


def test_a_file_watch_ends_with_its_file(arch):
    """LTP inotify04: unlinking the last link gives IN_ATTRIB, IN_DELETE_SELF, IN_IGNORED."""
    results, buf, _ = run_script(arch, [
        ("inotify_init",),
        ("open", "BUF", O_CREAT | O_WRONLY, 0o644),
        ("inotify_add_watch", "@0", "BUF", IN_ALL_EVENTS),
        ("close", "@1"),
        ("unlink", "BUF"),
        ("read", "@0", "BUF+512", 1500),
        ("inotify_rm_watch", "@0", "@2"),
    ], data=STRINGS)
    assert results[2] == 1 and results[6] == -E.EINVAL          # the watch is gone already
    assert _events(buf[512:512 + results[5]]) == [
        (1, IN_CLOSE_WRITE, 0, b""), (1, IN_ATTRIB, 0, b""), (1, IN_DELETE_SELF, 0, b""),
        (1, IN_IGNORED, 0, b"")]


def test_arguments_are_checked(arch):
    results, _, _ = run_script(arch, [
        ("inotify_init1", 0o4),                                  # not IN_CLOEXEC/IN_NONBLOCK
        ("inotify_init1", 0),
        ("inotify_add_watch", "@1", "/d", 0),                    # no event: EINVAL
        ("open", "/f", O_RDONLY),
        ("inotify_add_watch", "@3", "/d", IN_ALL_EVENTS),        # not an inotify fd
        ("inotify_add_watch", "@1", "/f", IN_ALL_EVENTS | 0x01000000),   # IN_ONLYDIR
        ("inotify_add_watch", "@1", "/f", IN_ALL_EVENTS),
        ("inotify_add_watch", "@1", "/f", IN_ALL_EVENTS | 0x10000000),   # IN_MASK_CREATE
        ("inotify_rm_watch", "@1", 77),
        ("inotify_rm_watch", "@1", "@6"),                        # queues IN_IGNORED
        ("read", "@1", "BUF+512", 8),                            # which needs 16 bytes
        ("read", "@1", "BUF+512", 16),
    ], data=STRINGS)
    assert results[0] == -E.EINVAL and results[2] == -E.EINVAL and results[4] == -E.EINVAL
    assert results[5] == -E.ENOTDIR and results[6] == 1 and results[7] == -E.EEXIST
    assert results[8:] == [-E.EINVAL, 0, -E.EINVAL, 16]


def test_in_excl_unlink_holds_back_events_through_a_removed_name(arch):
    """LTP inotify12: a file written after its name is unlinked; the directory watch with
    IN_EXCL_UNLINK hears only the write before, the one without hears both (as natively)."""
    IN_EXCL_UNLINK = 0x04000000
    results, buf, _ = run_script(arch, [
        ("inotify_init1", O_NONBLOCK),
        ("inotify_init1", O_NONBLOCK),
        ("inotify_add_watch", "@0", "/d", IN_MODIFY | IN_EXCL_UNLINK),
        ("inotify_add_watch", "@1", "/d", IN_MODIFY),
        ("open", "BUF", O_CREAT | O_WRONLY, 0o644),
        ("write", "@4", "BUF+32", 1),
        ("read", "@0", "BUF+512", 100),
        ("read", "@1", "BUF+512", 100),
        ("unlink", "BUF"),
        ("write", "@4", "BUF+32", 1),
        ("read", "@0", "BUF+512", 100),
        ("read", "@1", "BUF+1024", 100),
    ], data=STRINGS)
    assert results[:4] == [3, 4, 1, 1] and results[5] == results[9] == 1
    assert results[6] == results[7] == 32                      # one IN_MODIFY "new" each
    assert results[10] == -E.EAGAIN
    assert _events(buf[1024:1024 + results[11]]) == [(1, IN_MODIFY, 0, b"new")]


def test_a_change_to_a_child_is_heard_by_its_directory_first(arch):
    """fsnotify_change -> fsnotify_parent (LTP inotify10): chmod, chown, utimensat and truncate by
    path reach the watch on the directory the name was found in, with the name, before the
    child's own watch (fsnotify_handle_event: parent mark, then inode mark); before, only the
    child's watch heard them, and a directory watched alone by one instance heard nothing
    (inotify10 then slept in read). "/d/new" and the folder "/d/sub" exist; /d and both are
    watched."""
    results, buf, _ = run_script(arch, [
        ("inotify_init1", O_NONBLOCK),
        ("mkdir", "BUF+8", 0o700),
        ("open", "BUF", O_CREAT | O_WRONLY, 0o644),
        ("close", "@2"),
        ("inotify_add_watch", "@0", "/d", IN_ATTRIB | IN_MODIFY),
        ("inotify_add_watch", "@0", "BUF+8", IN_ATTRIB),
        ("inotify_add_watch", "@0", "BUF", IN_ATTRIB | IN_MODIFY),
        ("chmod", "BUF+8", 0o755),
        ("chmod", "BUF", 0o600),
        ("chown", "BUF", 0, 0),
        ("utimensat", -100, "BUF", 0, 0),                   # AT_FDCWD, now
        ("truncate", "BUF", 1),
        ("read", "@0", "BUF+512", 1500),
    ], data=STRINGS)
    assert results[4:7] == [1, 2, 3]
    events = [(wd, mask, name) for wd, mask, _, name in _events(buf[512:512 + results[12]])]
    assert events == [
        (1, IN_ATTRIB | IN_ISDIR, b"sub"), (2, IN_ATTRIB | IN_ISDIR, b""),
        (1, IN_ATTRIB, b"new"), (3, IN_ATTRIB, b""),
        (1, IN_ATTRIB, b"new"), (3, IN_ATTRIB, b""),
        (1, IN_ATTRIB, b"new"), (3, IN_ATTRIB, b""),
        (1, IN_MODIFY, b"new"), (3, IN_MODIFY, b"")]
