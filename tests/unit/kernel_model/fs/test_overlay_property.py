"""Property: the overlay behaves like a real Linux file system.

A random sequence of mkdir/create/write/unlink/rmdir/rename/symlink is applied three ways: to the
in-memory overlay, to write-through mode, and directly with os.* calls to a host folder (the
oracle: the host kernel decides). Each call must fail with the same errno or succeed in all three,
the visible trees and contents must end up equal, and the overlay's host folder must be untouched.
"""
import errno as host_errno
import os
import tempfile
from pathlib import Path

from hypothesis import given, settings, strategies as st

from kernel_model import errno as E
from kernel_model.errno import GuestErrno
from kernel_model.fs import DT_LNK, FileSystem, O_CREAT, O_DIRECTORY, O_RDONLY, O_TRUNC, O_WRONLY

from .conftest import host_tree
from .helpers import PROC

names = st.sampled_from(["a", "b", "c"])
paths = st.lists(names, min_size=1, max_size=3).map("/".join)
data = st.binary(max_size=12)

operations = st.one_of(
    st.tuples(st.just("mkdir"), paths),
    st.tuples(st.just("create"), paths, data),
    st.tuples(st.just("write"), paths, st.integers(0, 8), data),
    st.tuples(st.just("unlink"), paths),
    st.tuples(st.just("rmdir"), paths),
    st.tuples(st.just("rename"), paths, paths),
    st.tuples(st.just("symlink"), paths, paths),      # relative targets: they stay inside
)


def seed_tree(root: Path) -> None:
    (root / "a").mkdir(parents=True)
    (root / "a" / "b").write_bytes(b"host a/b")
    (root / "c").write_bytes(b"host c")
    (root / "b" / "a").mkdir(parents=True)


def apply_to_fs(fs: FileSystem, op: tuple) -> None:
    kind, path = op[0], b"/" + op[1].encode()
    if kind == "mkdir":
        fs.mkdir(path, 0o755, b"/", PROC)
    elif kind == "create":
        fs.open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644, b"/", PROC).write(op[2])
    elif kind == "write":
        fs.open(path, O_WRONLY, 0, b"/", PROC).pwrite(op[3], op[2])
    elif kind == "unlink":
        fs.unlink(path, b"/", PROC)
    elif kind == "rmdir":
        fs.rmdir(path, b"/", PROC)
    elif kind == "symlink":
        fs.symlink(op[2].encode(), path, b"/", PROC)
    else:
        fs.rename(path, b"/" + op[2].encode(), b"/", PROC)


def apply_to_host(root: Path, op: tuple) -> None:
    kind, path = op[0], str(root / op[1])
    if kind == "mkdir":
        os.mkdir(path, 0o755)
    elif kind in ("create", "write"):
        flags = os.O_WRONLY | (os.O_CREAT | os.O_TRUNC if kind == "create" else 0)
        fd = os.open(path, flags, 0o644)
        try:
            os.write(fd, op[2]) if kind == "create" else os.pwrite(fd, op[3], op[2])
        finally:
            os.close(fd)
    elif kind == "unlink":
        os.unlink(path)
    elif kind == "rmdir":
        os.rmdir(path)
    elif kind == "symlink":
        os.symlink(op[2], path)
    else:
        os.rename(path, str(root / op[2]))


def outcome_fs(fs: FileSystem, op: tuple) -> str:
    try:
        apply_to_fs(fs, op)
    except GuestErrno as exc:
        return E.NAMES[exc.errno]
    return "ok"


def outcome_host(root: Path, op: tuple) -> str:
    try:
        apply_to_host(root, op)
    except OSError as exc:
        return host_errno.errorcode[exc.errno]
    return "ok"


def visible_tree(fs: FileSystem, path: bytes = b"/") -> dict:
    tree = {}
    for entry in fs.open(path, O_RDONLY | O_DIRECTORY, 0, b"/", PROC).getdents():
        if entry.name in (b".", b"..") or (path == b"/" and entry.name in (b"dev", b"proc")):
            continue
        child = path.rstrip(b"/") + b"/" + entry.name
        key = child[1:].decode()
        if entry.dtype == DT_LNK:
            tree[key] = ("link", fs.readlink(child, b"/", PROC).decode())
        elif fs.is_dir(child, b"/", PROC):
            tree[key] = ("dir",)
            tree.update(visible_tree(fs, child))
        else:
            tree[key] = ("file", fs.open(child, O_RDONLY, 0, b"/", PROC).read(1 << 16))
    return tree


def oracle_tree(root: Path) -> dict:
    return {name: (value[0],) if value[0] == "dir" else (value[0], value[1])
            for name, value in host_tree(root).items()}


@settings(max_examples=150, deadline=None)
@given(st.lists(operations, max_size=25))
def test_overlay_and_write_through_behave_like_the_host(ops):
    with tempfile.TemporaryDirectory() as tmp:
        lower, through, oracle = (Path(tmp, name) for name in ("lower", "through", "oracle"))
        for root in (lower, through, oracle):
            seed_tree(root)
        untouched = host_tree(lower)
        overlay = FileSystem(str(lower))
        writable = FileSystem(str(through), writable=True)
        for op in ops:
            expected = outcome_host(oracle, op)
            assert outcome_fs(overlay, op) == expected, op
            assert outcome_fs(writable, op) == expected, op
        assert visible_tree(overlay) == oracle_tree(oracle)
        assert visible_tree(writable) == oracle_tree(oracle)
        assert host_tree(lower) == untouched
