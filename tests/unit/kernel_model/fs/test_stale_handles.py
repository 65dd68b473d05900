"""No view of the host through a stale handle, from guest programs on both ABIs (write-through).

The guest opens /f/outside (a directory), a file in it (read and O_PATH), renames /f away and
puts at /f a symlink to a host folder that also has an `outside` (made by the guest, or a
symlink of the rootfs renamed there). Every old handle must still show what it opened, as on
Linux: the renamed directory's entries and metadata, the file's bytes; fchdir and *at calls
from the old directory handle land in it. Nothing of the host folder is ever seen.
"""
from pathlib import Path

import pytest

from kernel_model import errno as E

from ..syscall_steps import run_script

O_RDONLY, O_DIRECTORY, O_PATH = 0, 0o200000, 0o10000000
SECRET = b"HOST-SECRET"


def make_world(top: Path) -> tuple[Path, bytes]:
    host = top / "host"
    (host / "outside").mkdir(parents=True)
    (host / "outside" / SECRET.decode()).write_bytes(b"host data")
    (host / "outside" / "inner").write_bytes(b"HOST INNER")
    root = top / "root"
    (root / "f" / "outside").mkdir(parents=True)
    (root / "f" / "outside" / "inner").write_bytes(b"inner data")
    (root / "hostlink").symlink_to(host)
    return root, str(host).encode()


@pytest.fixture
def world(tmp_path) -> tuple[Path, bytes]:
    return make_world(tmp_path)


def run_fresh(tmp_path: Path, arch: str, steps):
    """A run in a world of its own (a write-through run changes its rootfs for good)."""
    top = tmp_path / f"world{len(list(tmp_path.iterdir()))}"
    root, _ = make_world(top)
    return run_script(root, arch, steps, writable=True)


def swap(how: str, host: bytes) -> list:
    """Rename /f to /g, then put a symlink to the host folder at /f."""
    plant = ("symlink", host, b"/f") if how == "made" else ("rename", b"/hostlink", b"/f")
    return [("rename", b"/f", b"/g"), plant]


OPEN_ALL = [("open", b"/f/outside", O_RDONLY | O_DIRECTORY, 0),       # fd 3
            ("open", b"/f/outside/inner", O_RDONLY, 0),               # fd 4
            ("open", b"/f/outside/inner", O_PATH, 0)]                 # fd 5


@pytest.mark.parametrize("how", ["made", "renamed"])
def test_old_directory_handle_lists_what_it_opened(world, arch, how):
    root, host = world
    results, buf, _ = run_script(root, arch, OPEN_ALL + swap(how, host) + [
        ("getdents64", 3, "BUF", 256),
    ], writable=True)
    assert results[:5] == [3, 4, 5, 0, 0]
    assert results[5] > 0
    assert b"inner" in buf and SECRET not in buf


@pytest.mark.parametrize("how", ["made", "renamed"])
def test_old_handles_stat_and_read_what_they_opened(tmp_path, arch, how):
    host = str(tmp_path / "world0" / "host").encode()      # every fresh world has its own
    results, buf, _ = run_fresh(tmp_path, arch, OPEN_ALL + swap(how, host) + [
        ("fstat", 3, "BUF"),
        ("open", b"/g/outside", O_RDONLY | O_DIRECTORY, 0),           # fd 6: the same directory
        ("fstat", 6, "BUF2"),
    ])
    assert results[:7] == [3, 4, 5, 0, 0, 0, 6] and results[7] == 0
    assert buf[:256] == buf[256:]                      # one inode, seen through both
    results, buf, _ = run_fresh(tmp_path, arch, OPEN_ALL + swap(how, host) + [
        ("read", 4, "BUF", 64),
    ])
    assert results[5] == len(b"inner data") and buf.startswith(b"inner data")
    results, buf, _ = run_fresh(tmp_path, arch, OPEN_ALL + swap(how, host) + [
        ("fstat", 5, "BUF2"),
        ("fstat", 4, "BUF"),
    ])
    assert results[5:] == [0, 0]
    assert buf[:256] == buf[256:]                      # O_PATH and read handles: one inode


@pytest.mark.parametrize("how", ["made", "renamed"])
def test_fchdir_and_at_calls_from_an_old_directory_handle(world, arch, how):
    root, host = world
    results, buf, _ = run_script(root, arch, OPEN_ALL + swap(how, host) + [
        ("openat", 3, b"inner", O_RDONLY, 0),
        ("openat", 3, SECRET, O_RDONLY, 0),
        ("fchdir", 3),
        ("open", SECRET, O_RDONLY, 0),
        ("open", b"inner", O_RDONLY, 0),
        ("read", 7, "BUF2", 64),
        ("getcwd", "BUF", 256),
    ], writable=True)
    assert results[5] == 6 and results[6] == -E.ENOENT
    assert results[7] == 0 and results[8] == -E.ENOENT and results[9] == 7
    assert buf[256:].startswith(b"inner data")
    assert buf.split(b"\0", 1)[0] == b"/g/outside"     # the cwd moved with the rename


def test_the_host_folder_is_untouched_and_unseen(world, arch):
    root, host = world
    before = sorted(p.name for p in Path(host.decode()).rglob("*"))
    results, buf, _ = run_script(root, arch, OPEN_ALL + swap("made", host) + [
        ("mkdir", b"/f/outside/new", 0o755),       # through the symlink: inside the root
        ("getdents64", 3, "BUF", 256),
    ], writable=True)
    assert results[5] == -E.ENOENT                  # the host path means nothing in the guest
    assert SECRET not in buf
    assert sorted(p.name for p in Path(host.decode()).rglob("*")) == before


@pytest.mark.parametrize("writable", [False, True])
def test_kept_names_move_with_a_rename(world, arch, writable):
    """d_move: a cwd and an open directory renamed (or beneath what is renamed) keep being
    what they were, under the new name: getcwd and /proc/self/fd show it."""
    root, host = world
    results, buf, _ = run_script(root, arch, [
        ("chdir", b"/f/outside"),
        ("open", b"/f", O_RDONLY | O_DIRECTORY, 0),
        ("rename", b"/f", b"/g"),
        ("getcwd", "BUF", 256),
        ("readlink", b"/proc/self/fd/3", "BUF2", 256),
        ("open", b"inner", O_RDONLY, 0),
    ], writable=writable)
    assert results[:3] == [0, 3, 0]
    assert buf.split(b"\0", 1)[0] == b"/g/outside"
    assert buf[256:256 + results[4]] == b"/g"
    assert results[5] == 4
