"""times(2), close_range(2), and the administration calls: mount, umount and pivot_root
(which look their paths up first), swapon/off and reboot (refused), setns, unshare."""
import struct

from kernel_model import errno as E

from ...call_script import run_script

O_RDONLY = 0
CLOEXEC, UNSHARE = 4, 2
F_GETFD = 1


def test_times_counts_user_hz_ticks_from_initial_jiffies(arch):
    results, buf, kernel = run_script(arch, [("times", "BUF"), ("times", 0), ("times", 0x10)])
    boot_ticks = (2**32 - 300 * 100) + 3600 * 100          # INITIAL_JIFFIES, an hour up
    mask = 2**32 - 1 if arch == "i386" else 2**64 - 1
    assert results[0] & mask == boot_ticks & mask
    assert results[2] == -E.EFAULT
    fmt = "<4I" if arch == "i386" else "<4q"
    assert struct.unpack_from(fmt, buf) == (0, 0, 0, 0)    # under a tick of CPU so far


def test_close_range(arch):
    results, _, _ = run_script(arch, [
        ("open", "/f", O_RDONLY), ("open", "/f", O_RDONLY), ("open", "/f", O_RDONLY),
        ("close_range", 4, 0xFFFFFFFF, CLOEXEC), ("fcntl", 4, F_GETFD), ("fcntl", 3, F_GETFD),
        ("close_range", 4, 4, 0), ("fcntl", 4, F_GETFD), ("fcntl", 5, F_GETFD),
        ("close_range", 5, 4, 0), ("close_range", 0, 1, 8), ("close_range", 100, 200, UNSHARE),
        ("close_range", 3, 0xFFFFFFFF, 0), ("fcntl", 5, F_GETFD), ("fcntl", 3, F_GETFD)])
    assert results == [3, 4, 5, 0, 1, 0, 0, -E.EBADF, 1, -E.EINVAL, -E.EINVAL, 0, 0, -E.EBADF,
                       -E.EBADF]


def test_administration_calls(arch):
    calls = [("mount", "/d", "/tmp/new", "/f", 0, 0), ("umount2", "/tmp/new", 0),
             ("umount2", "/tmp/new", 0x100), ("pivot_root", "/d", "/tmp/new"), ("swapon", "/f", 0),
             ("swapoff", "/f"), ("reboot", 0xfee1dead, 672274793, 0x4321FEDC, 0),
             ("setns", 0, 0), ("setns", 77, 0)]
    expected = [-E.ENOENT, -E.ENOENT, -E.EINVAL, -E.ENOENT, -E.EPERM, -E.EPERM, -E.EPERM,
                -E.EINVAL, -E.EBADF]
    if arch == "i386":
        calls.append(("umount", "/tmp/new"))
        expected.append(-E.ENOENT)
    assert run_script(arch, calls)[0] == expected


def test_unshare(arch):
    # CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWUTS (0x20000, 0x10000000, 0x04000000) make namespaces
    results, _, _ = run_script(arch, [
        ("unshare", 0), ("unshare", 0x400 | 0x200 | 0x40000), ("unshare", 0x100 | 0x800 | 0x10000),
        ("unshare", 0x20000), ("unshare", 0x10000000), ("unshare", 0x04000000),
        ("unshare", 0x1), ("unshare", 0x80000000)])
    assert results == [0, 0, 0, 0, 0, 0, -E.EINVAL, -E.EINVAL]
