"""A process root below the guest root (chroot(2)): resolution under it, and how global paths
are shown from it (fs/rootpath.py, after Linux's fs/d_path.c)."""
from dataclasses import dataclass

from kernel_model import errno as E
from kernel_model.fs import O_RDONLY, FileSystem
from kernel_model.fs.rootpath import beneath_root, getcwd_text, link_text
from kernel_model.fsview import fs_view, global_view
from kernel_model.process.proc import Process

from .helpers import FakeProcess, errno_of, make_rootfs


@dataclass
class Chrooted(FakeProcess):
    jail: bytes = b"/usr"

    def root(self) -> bytes:
        return self.jail


JAILED = Chrooted()


def read(fs, path, cwd=b"/", proc=JAILED) -> bytes:
    f = fs.open(path, O_RDONLY, 0, cwd, proc)
    try:
        return f.read(100)
    finally:
        f.close()


def test_absolute_paths_start_at_the_process_root(fs):
    assert read(fs, b"/lib/libc.so").startswith(b"libc")
    assert errno_of(fs.stat, b"/etc/passwd", b"/", JAILED) == E.ENOENT
    assert fs.realpath(b"/lib", b"/", JAILED) == b"/usr/lib"      # paths stay global


def test_dotdot_at_the_process_root_stays_there(fs):
    assert fs.realpath(b"/..", b"/", JAILED) == b"/usr"
    assert fs.realpath(b"/lib/../../..", b"/", JAILED) == b"/usr"
    assert read(fs, b"../../lib/libc.so", cwd=b"/usr/lib").startswith(b"libc")


def test_absolute_symlinks_restart_at_the_process_root(tmp_path):
    root = make_rootfs(tmp_path / "root")
    (root / "usr" / "etc").mkdir()
    (root / "usr" / "etc" / "passwd").write_bytes(b"jail passwd")
    fs = FileSystem(str(root))
    (root / "usr" / "abs").symlink_to("/etc/passwd")
    assert read(fs, b"/abs") == b"jail passwd"
    assert read(fs, b"/usr/abs", proc=FakeProcess()).startswith(b"root:")   # same link, from /


def test_a_cwd_outside_the_process_root_climbs_to_the_guest_root_only(fs):
    """chroot(2) leaves the cwd alone: relative paths from a cwd outside the new root reach
    what Linux reaches from there, never above the guest root."""
    assert read(fs, b"etc/passwd", cwd=b"/").startswith(b"root:")
    assert read(fs, b"../../etc/passwd", cwd=b"/bin").startswith(b"root:")
    assert fs.realpath(b"../../..", b"/bin", JAILED) == b"/"


def test_mounts_are_at_the_guest_root_only(fs):
    assert errno_of(fs.stat, b"/proc/self", b"/", JAILED) == E.ENOENT
    assert fs.stat(b"proc/self", b"/", JAILED).mode      # from the cwd left outside


def test_directory_errors_are_chdirs(fs):
    assert fs.directory(b"/lib", b"/", JAILED) == b"/usr/lib"
    assert errno_of(fs.directory, b"/lib/libc.so", b"/", JAILED) == E.ENOTDIR
    assert errno_of(fs.directory, b"/nothing", b"/", JAILED) == E.ENOENT
    assert errno_of(fs.directory, b"/nothing/x", b"/", JAILED) == E.ENOENT


def test_how_paths_are_shown_from_a_root():
    assert beneath_root(b"/usr/lib", b"/usr") == b"/lib"
    assert beneath_root(b"/usr", b"/usr") == b"/"
    assert beneath_root(b"/usrx", b"/usr") is None
    assert beneath_root(b"/etc", b"/") == b"/etc"
    assert getcwd_text(b"/bin", b"/usr") == b"(unreachable)/bin"
    assert getcwd_text(b"/usr/lib", b"/usr") == b"/lib"
    assert link_text(b"/bin", b"/usr") == b"/bin"          # d_path shows the global path
    assert link_text(b"/usr/bin/x", b"/usr") == b"/bin/x"
    assert link_text(b"pipe:[4100]", b"/usr") == b"pipe:[4100]"


def test_the_process_view_shows_its_links_from_its_root():
    proc = Process(pid=3, ppid=1, space=None, fds=None, cwd=b"/jail/w", root=b"/jail",
                   exe=b"/jail/bin/sh")
    view = fs_view(proc)
    assert (view.cwd(), view.exe_path(), view.root()) == (b"/w", b"/bin/sh", b"/jail")
    assert global_view(proc).root() == b"/"
    proc.cwd = b"/elsewhere"
    assert view.cwd() == b"/elsewhere"
