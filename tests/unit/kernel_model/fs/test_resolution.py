"""Chroot-like path resolution: nothing leads outside the guest root."""
from kernel_model import errno as E
from kernel_model.fs import FileSystem

from .helpers import PROC, errno_of, make_rootfs, read_file


def test_dotdot_at_the_root_stays_at_the_root(fs):
    assert fs.realpath(b"/../../..", b"/", PROC) == b"/"
    assert read_file(fs, b"/../../etc/passwd").startswith(b"root:")
    assert read_file(fs, b"../../../etc/passwd", cwd=b"/etc").startswith(b"root:")


def test_dotdot_never_reaches_the_host_folder_around_the_root(tmp_path):
    (tmp_path / "secret").write_bytes(b"host secret")
    root = make_rootfs(tmp_path / "root")
    fs = FileSystem(str(root))
    assert errno_of(fs.stat, b"/../secret", b"/", PROC) == E.ENOENT
    assert errno_of(fs.stat, b"../secret", b"/", PROC) == E.ENOENT


def test_absolute_symlink_resolves_from_the_guest_root(fs):
    assert fs.readlink(b"/etc/abs", b"/", PROC) == b"/etc/passwd"
    assert read_file(fs, b"/etc/abs").startswith(b"root:")
    assert fs.realpath(b"/etc/abs", b"/", PROC) == b"/etc/passwd"


def test_absolute_symlink_to_a_host_path_outside_stays_inside(tmp_path):
    (tmp_path / "outside.txt").write_bytes(b"outside")
    root = make_rootfs(tmp_path / "root")
    (root / "escape").symlink_to(tmp_path / "outside.txt")      # host-absolute target
    fs = FileSystem(str(root))
    assert errno_of(fs.stat, b"/escape", b"/", PROC) == E.ENOENT


def test_relative_symlink_resolves_from_its_directory(fs):
    assert fs.realpath(b"/lib/libc.so", b"/", PROC) == b"/usr/lib/libc.so"
    assert read_file(fs, b"lib/libc.so").startswith(b"libc")


def test_relative_symlink_climbing_above_the_root_stops_at_the_root(fs):
    assert fs.realpath(b"/etc/up", b"/", PROC) == b"/"
    assert fs.realpath(b"/etc/up/etc/up/bin", b"/", PROC) == b"/bin"


def test_symlink_loop_gives_eloop(fs):
    assert errno_of(fs.stat, b"/loop1", b"/", PROC) == E.ELOOP
    assert errno_of(fs.open, b"/loop1/x", 0, 0, b"/", PROC) == E.ELOOP


def test_forty_links_resolve_and_forty_one_give_eloop(rootfs):
    for i in range(41):
        (rootfs / f"chain{i}").symlink_to(f"chain{i + 1}" if i < 40 else "etc")
    fs = FileSystem(str(rootfs))
    assert fs.realpath(b"/chain1", b"/", PROC) == b"/etc"     # 40 links
    assert errno_of(fs.realpath, b"/chain0", b"/", PROC) == E.ELOOP


def test_lstat_does_not_follow_the_last_symlink(fs):
    from kernel_model.fs import S_IFLNK, S_IFMT
    assert fs.stat(b"/loop1", b"/", PROC, follow=False).mode & S_IFMT == S_IFLNK


def test_file_used_as_a_directory_is_enotdir(fs):
    assert errno_of(fs.stat, b"/etc/passwd/x", b"/", PROC) == E.ENOTDIR
    assert errno_of(fs.stat, b"/etc/passwd/", b"/", PROC) == E.ENOTDIR
    assert errno_of(fs.stat, b"/etc/passwd/.", b"/", PROC) == E.ENOTDIR
    assert errno_of(fs.stat, b"/etc/passwd/..", b"/", PROC) == E.ENOTDIR


def test_missing_components(fs):
    assert errno_of(fs.stat, b"/nope", b"/", PROC) == E.ENOENT
    assert errno_of(fs.stat, b"/nope/x", b"/", PROC) == E.ENOENT
    assert errno_of(fs.stat, b"", b"/", PROC) == E.ENOENT


def test_name_too_long(fs):
    assert errno_of(fs.stat, b"/" + b"a" * 256, b"/", PROC) == E.ENAMETOOLONG
    assert errno_of(fs.stat, b"/" + b"a" * 255, b"/", PROC) == E.ENOENT
    assert errno_of(fs.stat, b"/a" * 2048, b"/", PROC) == E.ENAMETOOLONG


def test_relative_paths_start_at_cwd(fs):
    assert fs.realpath(b"passwd", b"/etc", PROC) == b"/etc/passwd"
    assert fs.realpath(b"./../bin/./prog", b"/etc", PROC) == b"/bin/prog"


def test_is_dir(fs):
    assert fs.is_dir(b"/lib", b"/", PROC)            # through the symlink
    assert not fs.is_dir(b"/etc/passwd", b"/", PROC)
    assert not fs.is_dir(b"/nope", b"/", PROC)


def test_proc_and_dev_do_not_lead_outside(fs):
    assert fs.realpath(b"/proc/../..", b"/", PROC) == b"/"
    assert fs.realpath(b"/dev/fd/../../../etc", b"/", PROC) == b"/etc"
    assert fs.realpath(b"/dev/fd/..", b"/", PROC) == b"/proc/42"


def test_host_root_when_no_rootfs_is_given_is_readable():
    fs = FileSystem(None)
    assert fs.is_dir(b"/", b"/", PROC)
    assert fs.realpath(b"/..", b"/", PROC) == b"/"
