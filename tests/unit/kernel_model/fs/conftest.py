import os
from pathlib import Path

import pytest

from kernel_model.fs import FileSystem

from .helpers import make_rootfs


@pytest.fixture
def rootfs(tmp_path: Path) -> Path:
    return make_rootfs(tmp_path / "root")


@pytest.fixture
def fs(rootfs: Path) -> FileSystem:
    return FileSystem(str(rootfs), seed=7, clock=lambda: 1_000)


def host_tree(root: Path) -> dict:
    """Everything observable of a host folder: types, bytes, link targets, modes, mtimes."""
    tree = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            st = path.lstat()
            if path.is_symlink():
                tree[str(path.relative_to(root))] = ("link", os.readlink(path))
            elif path.is_dir():
                tree[str(path.relative_to(root))] = ("dir", st.st_mode, st.st_mtime_ns)
            else:
                tree[str(path.relative_to(root))] = ("file", path.read_bytes(), st.st_mode,
                                                     st.st_mtime_ns)
    return tree
