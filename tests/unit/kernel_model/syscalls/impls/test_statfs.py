"""statfs/fstatfs (both ABIs) and i386 statfs64/fstatfs64: the modeled file systems, the
layouts, and the errors of fs/statfs.c."""
import struct

import pytest

from kernel_model import errno as E
from kernel_model.syscalls.impls.statfs import (OVERLAYFS_SUPER_MAGIC, PIPEFS_MAGIC,
                                                PROC_SUPER_MAGIC, TMPFS_MAGIC)

from ...call_script import run_script

LAYOUT = {"x86_64": "<qqQQQQQIIqqq32x", "i386": "<iiIIIIIIIiii16x"}
STATFS64 = "<IIQQQQQIIIII16x"
AT_FDCWD, O_RDONLY = -100, 0
MEMORY = 64 << 20


def unpack(fmt: str, buf: bytes, at: int = 0) -> dict:
    names = ("type", "bsize", "blocks", "bfree", "bavail", "files", "ffree", "fsid0", "fsid1",
             "namelen", "frsize", "flags")
    return dict(zip(names, struct.unpack_from(fmt, buf, at)))


def test_each_mount_answers_as_its_file_system(arch):
    results, buf, _ = run_script(arch, [
        ("statfs", "/f", "BUF"), ("statfs", "/proc/self/maps", "BUF+256"),
        ("statfs", "/dev/null", "BUF+512"), ("pipe", "BUF+1000"), ("fstatfs", 1, "BUF+768")],
        kernel_config={"memory_limit": MEMORY})
    assert results == [0, 0, 0, 0, 0]
    fmt = LAYOUT[arch]
    root, proc, dev, pipe = (unpack(fmt, buf, at) for at in (0, 256, 512, 768))
    assert root["type"] == OVERLAYFS_SUPER_MAGIC and root["bsize"] == 4096
    assert root["blocks"] == MEMORY // 4096 and 0 < root["bfree"] == root["bavail"] < root["blocks"]
    assert (root["namelen"], root["frsize"], root["flags"]) == (255, 4096, 0x420)
    assert (root["fsid0"], root["fsid1"]) == (0x801, 0)        # the rootfs's st_dev, 8:1
    assert proc["type"] == PROC_SUPER_MAGIC and proc["blocks"] == 0 and proc["flags"] == 0x42E
    assert dev["type"] == TMPFS_MAGIC and dev["blocks"] == dev["bfree"] == MEMORY // 2 // 4096
    assert pipe["type"] == PIPEFS_MAGIC and pipe["flags"] == 0x20


def test_the_answer_is_the_same_on_every_run(arch):
    calls = [("statfs", "/", "BUF"), ("statfs", "/d", "BUF+256")]
    assert run_script(arch, calls)[:2] == run_script(arch, calls)[:2]


def test_statfs_errors(arch):
    results, _, _ = run_script(arch, [
        ("statfs", "/nonexistent", "BUF"), ("statfs", "", "BUF"), ("statfs", 0x10, "BUF"),
        ("statfs", "/f", "RO"), ("statfs", "/f/", "BUF"), ("fstatfs", 99, "BUF"),
        ("fstatfs", -1, "BUF"), ("fstatfs", 0, 0x10)])
    assert results == [-E.ENOENT, -E.ENOENT, -E.EFAULT, -E.EFAULT, -E.ENOTDIR, -E.EBADF,
                       -E.EBADF, -E.EFAULT]


def test_i386_statfs64_wants_the_exact_size():
    results, buf, _ = run_script("i386", [
        ("statfs64", "/", 84, "BUF"), ("open", "/d", O_RDONLY), ("fstatfs64", 3, 84, "BUF+128"),
        ("statfs64", "/", 88, "BUF+256"), ("statfs64", "/nonexistent", 83, "BUF"),
        ("fstatfs64", 99, 84, "BUF"), ("fstatfs64", 3, 0, "BUF")])
    assert results == [0, 3, 0, -E.EINVAL, -E.EINVAL, -E.EBADF, -E.EINVAL]
    first, second = unpack(STATFS64, buf, 0), unpack(STATFS64, buf, 128)
    assert first["type"] == second["type"] == OVERLAYFS_SUPER_MAGIC
    assert first["blocks"] == (4 << 30) // 4096                 # the default --memory budget


@pytest.mark.parametrize("name", ["statfs64", "fstatfs64"])
def test_statfs64_is_i386_only(name):
    from kernel_model.syscalls import numbers_x86_64
    assert name not in numbers_x86_64.NUMBERS.values()
