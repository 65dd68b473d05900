"""Write-through mode holds host descriptors for what the guest keeps open, not for the
directories above it: each open file description costs one host descriptor (its data handle,
or its own O_PATH one), however deep the file, and nothing is left open once it is closed."""
import gc
import os

import pytest

from kernel_model.fs import FileSystem, O_DIRECTORY, O_PATH, O_RDONLY

from .helpers import PROC, names, write_file


def host_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize("flags", [O_RDONLY, O_PATH, O_RDONLY | O_DIRECTORY])
def test_one_host_descriptor_per_open_description(rootfs, flags):
    deep = rootfs / "a" / "b" / "c" / "d"
    for i in range(40):
        (deep / f"e{i}").mkdir(parents=True)
        (deep / f"e{i}" / "f").write_bytes(b"x")
    fs = FileSystem(str(rootfs), writable=True)
    fs.stat(b"/a", b"/", PROC)                   # the root's own descriptor, opened once
    # The count is the whole process's: garbage of earlier tests in this worker (an open file
    # description's __del__ closes its host descriptor) must not be collected in the middle.
    gc.collect()
    gc.disable()
    try:
        before = host_fds()
        target = "/a/b/c/d/e{}" if flags & O_DIRECTORY else "/a/b/c/d/e{}/f"
        kept = [fs.open(target.format(i).encode(), flags, 0, b"/", PROC) for i in range(40)]
        assert host_fds() - before == 40
        for f in kept:
            f.stat()
            if flags & O_DIRECTORY:
                f.getdents()
            f.close()
        del kept, f
        assert host_fds() == before
    finally:
        gc.enable()


def test_the_root_stays_usable_after_it_is_opened(rootfs):
    fs = FileSystem(str(rootfs), writable=True)
    root = fs.open(b"/", O_RDONLY | O_DIRECTORY, 0, b"/", PROC)
    write_file(fs, b"/new", b"data")
    fs.mkdir(b"/newdir", 0o755, b"/", PROC)
    assert b"new" in [e.name for e in root.getdents()]
    assert b"newdir" in names(fs, b"/")
