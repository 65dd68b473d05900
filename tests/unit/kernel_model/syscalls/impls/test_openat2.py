"""openat2 (syscalls/impls/openat2.py, fs/resolve.py, the walk in fs/namei.py): ENOSYS before
(LTP openat201-203 stopped there). struct open_how's size and fields are checked in
fs/open.c's order; the resolve flags restrict the walk."""
import struct

from kernel_model import errno as E
from tests.unit.kernel_model.call_script import run_script

AT_FDCWD = -100
O_RDONLY, O_RDWR, O_CREAT, O_DIRECTORY = 0, 2, 0o100, 0o200000
O_NOFOLLOW, O_PATH = 0o400000, 0o10000000
NO_XDEV, NO_MAGICLINKS, NO_SYMLINKS, BENEATH, IN_ROOT, CACHED = 1, 2, 4, 8, 16, 32


def how(flags=O_RDONLY, mode=0, resolve=0, pad=b""):
    return struct.pack("<QQQ", flags, mode, resolve) + pad


# BUF layout: open_how structs every 32 bytes from 0, strings from 1024
HOWS = [how(), how(pad=bytes(8)), how(pad=b"\xad\xde" + bytes(6)), how(mode=0o600),
        how(O_CREAT | O_RDWR, mode=2**64 - 1), how(resolve=0x40), how(resolve=BENEATH | IN_ROOT),
        how(O_PATH | O_RDWR),
        how(O_CREAT | O_RDWR, mode=0o600, resolve=CACHED), how(resolve=NO_SYMLINKS),
        how(O_PATH | O_NOFOLLOW, resolve=NO_SYMLINKS), how(resolve=NO_MAGICLINKS),
        how(resolve=NO_XDEV), how(resolve=BENEATH), how(resolve=IN_ROOT),
        how(O_DIRECTORY), how(resolve=CACHED), how(O_RDONLY | O_CREAT, mode=0o400),
        how(resolve=NO_MAGICLINKS)]
STRINGS = {"../f": 1024, "/g": 1032, "../g": 1040, "g": 1048, "/proc/version": 1056,
           "/proc/self/exe": 1072}
DATA = b"".join(h.ljust(32, b"\0") for h in HOWS).ljust(1024, b"\0") + \
    b"../f\0\0\0\0/g\0\0\0\0\0\0../g\0\0\0\0g\0\0\0\0\0\0\0/proc/version\0\0\0/proc/self/exe\0"


def at(index):
    return f"BUF+{32 * index}"


def s(text):
    return f"BUF+{STRINGS[text]}"


def test_the_struct_and_its_fields_are_checked_in_linux_order(arch):
    results, _, _ = run_script(arch, [
        ("openat2", AT_FDCWD, "/f", at(0), 24),
        ("openat2", AT_FDCWD, "/f", at(1), 32),          # a zero tail is accepted
        ("openat2", AT_FDCWD, "/f", at(0), 0),
        ("openat2", AT_FDCWD, "/f", at(0), 23),
        ("openat2", AT_FDCWD, "/f", at(2), 32),          # a non-zero tail: E2BIG
        ("openat2", AT_FDCWD, "/f", at(0), 4097),
        ("openat2", AT_FDCWD, "/f", at(3), 24),          # a mode without O_CREAT
        ("openat2", AT_FDCWD, "/f", at(4), 24),          # mode bits past 07777
        ("openat2", AT_FDCWD, "/f", at(5), 24),          # an unknown resolve bit
        ("openat2", AT_FDCWD, "/f", at(6), 24),          # BENEATH with IN_ROOT
        ("openat2", AT_FDCWD, "/f", at(7), 24),          # O_PATH with O_RDWR
        ("openat2", AT_FDCWD, "/f", at(8), 24),          # CACHED never creates
        ("openat2", -1, "f", at(0), 24),
        ("openat2", AT_FDCWD, 0, at(0), 24),
        ("openat2", AT_FDCWD, "/f", 0, 24),
        ("openat2", AT_FDCWD, "/f", at(16), 24),         # ...but a lookup is answered
    ], data=DATA)
    assert results[0] >= 3 and results[1] >= 3
    assert results[2:] == [-E.EINVAL, -E.EINVAL, -E.E2BIG, -E.E2BIG, -E.EINVAL, -E.EINVAL,
                           -E.EINVAL, -E.EINVAL, -E.EINVAL, -E.EAGAIN, -E.EBADF, -E.EFAULT,
                           -E.EFAULT, results[15]]
    assert results[15] >= 3


def test_an_existing_proc_file_opens_with_o_creat(arch):
    """LTP openat202 opens /proc/version with O_RDONLY|O_CREAT: the file did not exist in the
    model's /proc, so O_CREAT tried to make it (EACCES); Linux's holds the kernel banner."""
    results, buf, _ = run_script(arch, [
        ("openat2", AT_FDCWD, s("/proc/version"), at(17), 24),
        ("read", "@0", "BUF+2048", 200),
    ], data=DATA)
    assert results[0] >= 3 and buf[2048:2048 + results[1]].startswith(b"Linux version 6.1.0")


def test_the_resolve_flags_restrict_the_walk(arch):
    results, _, _ = run_script(arch, [
        ("openat", AT_FDCWD, "/d", O_DIRECTORY, 0),
        ("openat2", AT_FDCWD, "/l", at(9), 24),           # NO_SYMLINKS: ELOOP
        ("openat2", AT_FDCWD, "/l", at(10), 24),          # ...but the link itself opens
        ("openat2", AT_FDCWD, "/proc/self/fd/1", at(11), 24),
        ("openat2", AT_FDCWD, s("/proc/self/exe"), at(18), 24),   # exe is a magic link too
        ("openat2", AT_FDCWD, "/dev/null", at(12), 24),   # NO_XDEV: /dev is a mount
        ("openat2", AT_FDCWD, "/f", at(12), 24),
        ("openat2", "@0", s("../f"), at(13), 24),         # BENEATH: no way up
        ("openat2", "@0", "/f", at(13), 24),              # ...nor an absolute path
        ("openat2", "@0", s("g"), at(13), 24),
        ("openat2", "@0", s("../f"), at(0), 24),
        ("openat2", "@0", s("/g"), at(14), 24),           # IN_ROOT: / is /d
        ("openat2", "@0", s("../g"), at(14), 24),         # ...and .. stops there
        ("openat2", "@0", s("/g"), at(0), 24),
    ], data=DATA)
    assert results[0] >= 3
    assert results[1] == -E.ELOOP and results[2] >= 3 and results[3:5] == [-E.ELOOP, -E.ELOOP]
    assert results[5] == -E.EXDEV and results[6] >= 3
    assert results[7:9] == [-E.EXDEV, -E.EXDEV] and results[9] >= 3 and results[10] >= 3
    assert results[11] >= 3 and results[12] >= 3 and results[13] == -E.ENOENT
