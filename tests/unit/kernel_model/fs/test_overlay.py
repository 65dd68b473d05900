"""The in-memory overlay: the host folder never changes, the guest sees its own changes."""
import os

from kernel_model import errno as E
from kernel_model.fs import (FileSystem, O_APPEND, O_CREAT, O_EXCL, O_RDONLY, O_RDWR, O_WRONLY,
                             S_IFDIR, S_IFMT, S_IFREG)

from .conftest import host_tree
from .helpers import PROC, errno_of, names, read_file, write_file

DIR_ENTRIES = [b".", b".."]


def test_writes_land_in_memory_and_the_host_is_unchanged(fs, rootfs):
    before = host_tree(rootfs)
    write_file(fs, b"/etc/passwd", b"changed\n")
    write_file(fs, b"/new", b"new file")
    fs.mkdir(b"/tmp", 0o1777, b"/", PROC)
    fs.symlink(b"/new", b"/tmp/ln", b"/", PROC)
    fs.rename(b"/usr", b"/usr2", b"/", PROC)
    fs.unlink(b"/bin/prog", b"/", PROC)
    fs.chmod(b"/etc", 0o700, b"/", PROC)
    fs.utimens(b"/etc", 5, 6, b"/", PROC)
    fs.truncate(b"/new", 3, b"/", PROC)
    assert host_tree(rootfs) == before
    assert read_file(fs, b"/etc/passwd") == b"changed\n"
    assert read_file(fs, b"/tmp/ln") == b"new"
    assert read_file(fs, b"/usr2/lib/libc.so") == b"libc" * 1000


def test_unlink_hides_the_host_file_and_recreate_shows_only_new_content(fs):
    fs.unlink(b"/etc/passwd", b"/", PROC)
    assert errno_of(fs.stat, b"/etc/passwd", b"/", PROC) == E.ENOENT
    assert b"passwd" not in names(fs, b"/etc")
    write_file(fs, b"/etc/passwd", b"x")
    assert read_file(fs, b"/etc/passwd") == b"x"
    assert names(fs, b"/etc").count(b"passwd") == 1


def test_whiteouts_in_listings_and_opaque_recreated_directory(fs):
    fs.unlink(b"/usr/lib/libc.so", b"/", PROC)
    fs.rmdir(b"/usr/lib", b"/", PROC)
    assert names(fs, b"/usr") == DIR_ENTRIES
    fs.mkdir(b"/usr/lib", 0o755, b"/", PROC)
    assert names(fs, b"/usr/lib") == DIR_ENTRIES     # the deleted host entries stay hidden


def test_listing_merges_host_entries_in_host_order_then_overlay_entries_sorted(fs, rootfs):
    write_file(fs, b"/etc/zzz", b"")
    write_file(fs, b"/etc/aaa", b"")
    host = os.listdir(os.fsencode(rootfs / "etc"))
    assert names(fs, b"/etc") == DIR_ENTRIES + host + [b"aaa", b"zzz"]


def test_rename_of_a_host_directory_keeps_its_contents(fs):
    fs.rename(b"/usr", b"/opt", b"/", PROC)
    assert errno_of(fs.stat, b"/usr", b"/", PROC) == E.ENOENT
    assert names(fs, b"/opt/lib") == DIR_ENTRIES + [b"libc.so"]
    write_file(fs, b"/opt/lib/extra", b"e")
    fs.rename(b"/opt", b"/usr", b"/", PROC)
    assert names(fs, b"/usr/lib") == DIR_ENTRIES + [b"libc.so", b"extra"]   # host's, then new
    assert read_file(fs, b"/lib/extra") == b"e"          # the host symlink /lib -> usr/lib


def test_rename_file_over_file_and_directory_over_empty_directory(fs):
    write_file(fs, b"/a", b"A")
    write_file(fs, b"/b", b"B")
    fs.rename(b"/a", b"/b", b"/", PROC)
    assert read_file(fs, b"/b") == b"A"
    fs.mkdir(b"/d1", 0o755, b"/", PROC)
    fs.mkdir(b"/d2", 0o755, b"/", PROC)
    write_file(fs, b"/d1/f", b"f")
    fs.rename(b"/d1", b"/d2", b"/", PROC)
    assert read_file(fs, b"/d2/f") == b"f"
    assert errno_of(fs.stat, b"/d1", b"/", PROC) == E.ENOENT


def test_rename_errors(fs):
    fs.mkdir(b"/d", 0o755, b"/", PROC)
    write_file(fs, b"/d/f", b"")
    assert errno_of(fs.rename, b"/d", b"/d/sub", b"/", PROC) == E.EINVAL
    assert errno_of(fs.rename, b"/d/f", b"/d", b"/", PROC) == E.ENOTEMPTY   # target is an ancestor
    assert errno_of(fs.rename, b"/d/f", b"/usr", b"/", PROC) == E.EISDIR
    assert errno_of(fs.rename, b"/etc", b"/d/f", b"/", PROC) == E.ENOTDIR
    assert errno_of(fs.rename, b"/etc", b"/d", b"/", PROC) == E.ENOTEMPTY
    assert errno_of(fs.rename, b"/nope", b"/x", b"/", PROC) == E.ENOENT
    assert errno_of(fs.rename, b"/d/f", b"/proc/x", b"/", PROC) == E.EXDEV
    assert errno_of(fs.rename, b"/proc", b"/p", b"/", PROC) == E.EBUSY
    assert errno_of(fs.rename, b"/d/.", b"/x", b"/", PROC) == E.EBUSY
    assert errno_of(fs.rename, b"/d/f/", b"/x", b"/", PROC) == E.ENOTDIR
    fs.rename(b"/d", b"/d", b"/", PROC)                  # same inode: nothing happens
    assert read_file(fs, b"/d/f") == b""


def test_hard_link_shares_one_inode(fs):
    fs.link(b"/etc/passwd", b"/etc/pw2", b"/", PROC)
    assert fs.stat(b"/etc/pw2", b"/", PROC).ino == fs.stat(b"/etc/passwd", b"/", PROC).ino
    assert fs.stat(b"/etc/pw2", b"/", PROC).nlink == 2
    f = fs.open(b"/etc/pw2", O_WRONLY | O_APPEND, 0, b"/", PROC)
    f.write(b"more\n")
    assert read_file(fs, b"/etc/passwd").endswith(b"more\n")
    fs.unlink(b"/etc/passwd", b"/", PROC)
    assert fs.stat(b"/etc/pw2", b"/", PROC).nlink == 1
    assert errno_of(fs.link, b"/etc", b"/etc2", b"/", PROC) == E.EPERM
    assert errno_of(fs.link, b"/etc/pw2", b"/etc/abs", b"/", PROC) == E.EEXIST
    assert errno_of(fs.link, b"/etc/pw2", b"/dev/pw", b"/", PROC) == E.EXDEV


def test_copy_up_on_partial_write_keeps_the_rest_of_the_host_bytes(fs):
    f = fs.open(b"/usr/lib/libc.so", O_RDWR, 0, b"/", PROC)
    f.pwrite(b"LIBC", 4)
    assert read_file(fs, b"/usr/lib/libc.so") == b"libcLIBC" + b"libc" * 998


def test_overlay_times_come_from_the_virtual_clock(rootfs):
    now = [100]
    fs = FileSystem(str(rootfs), clock=lambda: now[0])
    write_file(fs, b"/f", b"x")
    st = fs.stat(b"/f", b"/", PROC)
    assert (st.atime_ns, st.mtime_ns, st.ctime_ns) == (100, 100, 100)
    now[0] = 250
    f = fs.open(b"/f", O_WRONLY, 0, b"/", PROC)
    f.write(b"y")
    st = fs.stat(b"/f", b"/", PROC)
    assert (st.atime_ns, st.mtime_ns, st.ctime_ns) == (100, 250, 250)
    assert fs.stat(b"/", b"/", PROC).mtime_ns == 100        # the root changed when f was made
    fs.utimens(b"/f", 7, None, b"/", PROC)
    st = fs.stat(b"/f", b"/", PROC)
    assert (st.atime_ns, st.mtime_ns) == (7, 250)


def test_host_file_shows_host_mtime_for_all_times_and_root_ownership(fs, rootfs):
    st = fs.stat(b"/etc/passwd", b"/", PROC)
    host_mtime = (rootfs / "etc" / "passwd").stat().st_mtime_ns
    assert (st.atime_ns, st.mtime_ns, st.ctime_ns) == (host_mtime,) * 3
    assert (st.uid, st.gid, st.mode & S_IFMT, st.mode & 0o777) == (0, 0, S_IFREG, 0o644)
    assert st.size == len(b"root:x:0:0:root:/root:/bin/sh\n")


def test_mkdir_modes_chmod_and_nlink(fs):
    fs.mkdir(b"/m", 0o750, b"/", PROC)
    st = fs.stat(b"/m", b"/", PROC)
    assert (st.mode & S_IFMT, st.mode & 0o7777, st.nlink, st.size) == (S_IFDIR, 0o750, 2, 4096)
    parent_links = fs.stat(b"/", b"/", PROC).nlink
    fs.mkdir(b"/m/sub", 0o700, b"/", PROC)
    assert fs.stat(b"/m", b"/", PROC).nlink == 3
    fs.chmod(b"/m", 0o4711, b"/", PROC)
    assert fs.stat(b"/m", b"/", PROC).mode & 0o7777 == 0o4711
    fs.rmdir(b"/m/sub", b"/", PROC)
    assert fs.stat(b"/m", b"/", PROC).nlink == 2
    assert fs.stat(b"/", b"/", PROC).nlink == parent_links


def test_create_excl_and_trunc(fs):
    f = fs.open(b"/etc/passwd", O_RDWR | O_CREAT, 0o600, b"/", PROC)
    assert f.read(4) == b"root"
    assert errno_of(fs.open, b"/etc/passwd", O_CREAT | O_EXCL | O_WRONLY, 0, b"/", PROC) == E.EEXIST
    write_file(fs, b"/etc/passwd", b"")        # O_TRUNC
    assert fs.stat(b"/etc/passwd", b"/", PROC).size == 0
    assert f.read(10) == b""                   # the open description sees the same inode


def test_o_creat_through_a_dangling_symlink_creates_its_target(fs):
    fs.symlink(b"/etc/target", b"/dangling", b"/", PROC)
    fs.open(b"/dangling", O_WRONLY | O_CREAT, 0o644, b"/", PROC).write(b"t")
    assert read_file(fs, b"/etc/target") == b"t"
    assert errno_of(fs.open, b"/dangling", O_WRONLY | O_CREAT | O_EXCL, 0, b"/", PROC) == E.EEXIST


def test_file_opened_before_unlink_stays_readable(fs):
    write_file(fs, b"/tmpf", b"still here")
    f = fs.open(b"/tmpf", O_RDONLY, 0, b"/", PROC)
    fs.unlink(b"/tmpf", b"/", PROC)
    assert f.read(100) == b"still here"


def _open_host_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_an_open_host_file_is_read_through_one_host_fd_bound_to_what_was_opened(fs, rootfs):
    before = _open_host_fds()
    f = fs.open(b"/etc/passwd", O_RDONLY, 0, b"/", PROC)
    assert _open_host_fds() == before + 1
    assert f.read(5) == b"root:"
    # The host path now names another file: the open description still reads the one it
    # opened (a path re-resolved on every read would show the new bytes).
    os.rename(rootfs / "etc" / "passwd", rootfs / "etc" / "passwd.old")
    (rootfs / "etc" / "passwd").write_bytes(b"XXXXXXXXXXXXXXXX")
    assert f.read(4) == b"x:0:"
    assert _open_host_fds() == before + 1          # no fd per read
    g = fs.open(b"/etc/passwd", O_RDONLY, 0, b"/", PROC)        # the same overlay inode
    assert _open_host_fds() == before + 1
    f.close()
    assert g.read(5) == b"root:"
    g.close()
    assert _open_host_fds() == before               # the last close closes the host file


def test_copy_up_reads_the_opened_host_file_and_releases_it(fs, rootfs):
    before = _open_host_fds()
    f = fs.open(b"/etc/passwd", O_RDWR, 0, b"/", PROC)
    f.write(b"ROOT")
    assert _open_host_fds() == before
    assert f.pread(100, 0) == b"ROOT:x:0:0:root:/root:/bin/sh\n"
    f.close()


def test_reads_through_the_read_ahead_window_give_the_host_bytes(fs, rootfs):
    blob = bytes((i * 7 + i // 251) & 0xFF for i in range(200_000))      # > 3 windows
    (rootfs / "blob").write_bytes(blob)
    f = fs.open(b"/blob", O_RDONLY, 0, b"/", PROC)
    got = b"".join(f.read(size) for size in [1] * 1000 + [4096, 70_000, 3, 65_536, 200_000])
    assert got == blob
    for offset, size in [(0, 1), (65_535, 2), (65_536, 1), (131_000, 70_000), (199_999, 5),
                         (250_000, 1), (10, 0)]:
        assert f.pread(size, offset) == blob[offset:offset + size]
    f.close()
