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


def test_listing_order_is_sorted_bytewise_whatever_the_creation_order(fs):
    for name in (b"zeta", b"Alpha", b"_x", b"beta", b"0"):
        write_file(fs, b"/etc/" + name, b"")
    listed = names(fs, b"/etc")
    assert listed[:2] == [b".", b".."]
    assert listed[2:] == sorted(listed[2:])


def test_host_directory_size_is_not_shown(fs):
    assert fs.stat(b"/etc", b"/", PROC).size == 4096
