"""Nothing host-specific reaches the guest: inode numbers, devices, listing order."""
import os
import shutil

from kernel_model.fs import FileSystem, ROOTFS_DEV

from .helpers import PROC, names, write_file


def _observe(fs) -> list:
    seen = []
    for path in (b"/", b"/etc", b"/usr/lib", b"/bin", b"/dev", b"/proc/self"):
        for entry in fs.open(path, 0, 0, b"/", PROC).getdents():
            seen.append((path, entry.name, entry.ino, entry.dtype))
    for path in (b"/etc/passwd", b"/usr/lib/libc.so", b"/bin"):
        st = fs.stat(path, b"/", PROC)
        seen.append((path, st.dev, st.ino, st.nlink, st.size, st.blocks, st.uid, st.gid))
    return seen


def test_copies_of_a_rootfs_look_identical(rootfs, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(rootfs, copy, symlinks=True)
    for path in (copy, rootfs):             # same content, same times: only host ino/dev differ
        for dirpath, dirs, files in os.walk(path):
            for name in dirs + files + ["."]:
                os.utime(os.path.join(dirpath, name), ns=(1, 2), follow_symlinks=False)
    assert os.stat(copy / "etc" / "passwd").st_ino != os.stat(rootfs / "etc" / "passwd").st_ino
    assert _observe(FileSystem(str(rootfs))) == _observe(FileSystem(str(copy)))


def test_inode_numbers_are_first_sight_counters_and_stable(fs):
    root = fs.stat(b"/", b"/", PROC)
    assert (root.ino, root.dev) == (2, ROOTFS_DEV)
    first = fs.stat(b"/etc/passwd", b"/", PROC).ino
    assert fs.stat(b"/etc/passwd", b"/", PROC).ino == first
    fs.rename(b"/etc/passwd", b"/moved", b"/", PROC)
    assert fs.stat(b"/moved", b"/", PROC).ino == first     # rename keeps the inode


def test_names_the_guest_made_follow_the_hosts_sorted_whatever_the_creation_order(fs, rootfs):
    made = (b"zeta", b"Alpha", b"_x", b"beta", b"0")
    for name in made:
        write_file(fs, b"/etc/" + name, b"")
    listed = names(fs, b"/etc")
    assert listed[:2] == [b".", b".."]
    assert listed[2:] == os.listdir(os.fsencode(rootfs / "etc")) + sorted(made)


def test_a_host_folder_is_listed_in_the_hosts_getdents_order(rootfs):
    """What a native listing of the folder shows (busybox ls / under strace: the stat calls
    follow getdents' order), the same in every run; "." and ".." first."""
    folder = rootfs / "many"
    folder.mkdir()
    for index in reversed(range(40)):      # on a file system that lists by creation: reversed
        (folder / f"name{index:02}").write_bytes(b"")
    host = os.listdir(os.fsencode(folder))
    assert host != sorted(host)             # the case that tells the two orders apart
    for fs in (FileSystem(str(rootfs)), FileSystem(str(rootfs), writable=True)):
        assert names(fs, b"/many") == [b".", b".."] + host
        assert names(fs, b"/many") == [b".", b".."] + host


def test_host_directory_size_is_not_shown(fs):
    assert fs.stat(b"/etc", b"/", PROC).size == 4096


def test_the_root_lists_its_mounts_in_their_mount_points_places(rootfs):
    """/dev and /proc are mounted over the rootfs's own folders, which getdents lists where
    the host has them; a rootfs without them gets the mounts after its own entries."""
    plain = names(FileSystem(str(rootfs)), b"/")
    assert plain == [b".", b".."] + os.listdir(os.fsencode(rootfs)) + [b"dev", b"proc"]
    for index in range(12):
        (rootfs / f"d{index}").mkdir()
    (rootfs / "proc").mkdir()
    (rootfs / "dev").mkdir()
    host = os.listdir(os.fsencode(rootfs))
    assert host != sorted(host)
    assert host.index(b"proc") < len(host) - 2 or host.index(b"dev") < len(host) - 2
    assert names(FileSystem(str(rootfs)), b"/") == [b".", b".."] + host
