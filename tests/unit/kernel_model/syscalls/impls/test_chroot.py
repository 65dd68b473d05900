"""chroot(2) from guest programs on both ABIs: the new root for lookups, `..` stopping at it,
getcwd from it, Linux's errors; the root is inherited by nothing wider than the guest root."""
from pathlib import Path

import pytest

from kernel_model import errno as E

from ...syscall_steps import run_script


@pytest.fixture
def rootfs(tmp_path) -> Path:
    root = tmp_path / "root"
    (root / "jail" / "etc").mkdir(parents=True)
    (root / "jail" / "etc" / "f").write_bytes(b"in the jail")
    (root / "only-outside").write_bytes(b"outside the jail")
    (root / "jail" / "abs").symlink_to("/etc/f")
    return root


def cwd_of(buf: bytes) -> bytes:
    return buf.split(b"\0", 1)[0]


def test_chroot_then_paths_resolve_in_the_new_root(rootfs, arch):
    results, buf, _ = run_script(rootfs, arch, [
        ("chroot", b"/jail"),
        ("open", b"/only-outside", 0, 0),
        ("open", b"/etc/f", 0, 0),
        ("open", b"/abs", 0, 0),             # an absolute symlink restarts at the new root
        ("read", 4, "BUF", 11),
    ])
    assert results[0] == 0
    assert results[1] == -E.ENOENT
    assert results[2] >= 3 and results[3] == results[2] + 1
    assert results[4] == 11 and buf.startswith(b"in the jail")


def test_dotdot_at_the_new_root_stays_and_getcwd_is_relative(rootfs, arch):
    results, buf, _ = run_script(rootfs, arch, [
        ("chdir", b"/jail/etc"),
        ("chroot", b".."),                   # relative to the cwd, as Linux looks it up
        ("chdir", b"/../../.."),
        ("getcwd", "BUF", 256),
    ])
    assert results[:3] == [0, 0, 0]
    assert results[3] == 2 and cwd_of(buf) == b"/"


def test_cwd_left_outside_is_unreachable(rootfs, arch):
    """chroot does not move the cwd: getcwd then says "(unreachable)" as Linux's does, and
    relative paths still start there."""
    results, buf, _ = run_script(rootfs, arch, [
        ("chroot", b"/jail"),
        ("open", b"only-outside", 0, 0),
        ("getcwd", "BUF", 256),
    ])
    assert results[0] == 0 and results[1] >= 3
    assert cwd_of(buf) == b"(unreachable)/" and results[2] == len(b"(unreachable)/") + 1


def test_chroot_errors_are_linux_s(rootfs, arch):
    results, buf, _ = run_script(rootfs, arch, [
        ("chroot", b"/nothing"),
        ("chroot", b"/jail/etc/f"),
        ("chroot", b"/jail/etc/f/x"),
        ("chroot", b""),
        ("chroot", 0),
        ("getcwd", "BUF", 256),
    ])
    assert results[:5] == [-E.ENOENT, -E.ENOTDIR, -E.ENOTDIR, -E.ENOENT, -E.EFAULT]
    assert cwd_of(buf) == b"/"               # nothing changed


def test_nested_chroot_never_widens(rootfs, arch):
    results, buf, _ = run_script(rootfs, arch, [
        ("chroot", b"/jail"),
        ("chdir", b"/"),
        ("chroot", b"/etc"),
        ("chroot", b"/.."),                  # the root itself: nothing above it
        ("open", b"/f", 0, 0),
        ("chdir", b".."),
        ("getcwd", "BUF", 256),
    ])
    assert results[:4] == [0, 0, 0, 0]
    assert results[4] >= 3
    assert cwd_of(buf) == b"(unreachable)/"  # the cwd left at /jail climbed to the guest /
