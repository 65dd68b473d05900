"""mlock/munlock/mlock2/mlockall/mincore's checks and getrusage on both ABIs: every mapped page
is resident (the model has no paging), a hole or an unaligned address is ENOMEM or EINVAL, bad
flags EINVAL, RLIMIT_MEMLOCK limits a caller without CAP_IPC_LOCK; getrusage's maxrss is the
mapped size. All were ENOSYS (LTP mlock*, mincore01, getrusage*)."""
import struct

from kernel_model import errno as E

from ...call_script import BUF, run_script

PAGE = 4096
RLIMIT_MEMLOCK = 8


def test_locking_and_residency(arch):
    setresuid = "setresuid32" if arch == "i386" else "setresuid"
    base = BUF & ~(PAGE - 1)
    results, buf, _ = run_script(arch, [
        ("mincore", base - PAGE, 2 * PAGE, "BUF+64"),
        ("mincore", base + 1, PAGE, "BUF+64"),
        ("mincore", 0x60000000, PAGE, "BUF+64"),             # not mapped
        ("mlock", BUF + 5, 100),
        ("mlock", 0x60000000, PAGE),
        ("munlock", BUF, 100),
        ("mlock2", BUF, 100, 2),
        ("mlockall", 4), ("mlockall", 3), ("munlockall",),
        ("prlimit64", 0, RLIMIT_MEMLOCK, "BUF+128", 0),      # a limit of one page
        (setresuid, 1000, 1000, 1000),                       # without CAP_IPC_LOCK
        ("mlock", base - PAGE, 2 * PAGE),                    # mapped, but past the limit
        ("mlock", base, PAGE),
    ], data=b"\0" * 128 + struct.pack("<QQ", PAGE, PAGE))
    assert results == [0, -E.EINVAL, -E.ENOMEM, 0, -E.ENOMEM, 0, -E.EINVAL, -E.EINVAL, 0, 0,
                       0, 0, -E.ENOMEM, 0]
    assert buf[64:66] == b"\x01\x01"


def test_getrusage(arch):
    word = "<18q" if arch == "x86_64" else "<18i"
    results, buf, _ = run_script(arch, [
        ("getrusage", 0, "BUF"), ("getrusage", (1 << 32) - 1 if arch == "i386" else (1 << 64) - 1,
                                  "BUF+256"),
        ("getrusage", 5, "BUF"), ("getrusage", 0, 0x60000000),
    ])
    assert results == [0, 0, -E.EINVAL, -E.EFAULT]
    usage = struct.unpack_from(word, buf)
    assert usage[4] > 0 and usage[4] * 1024 % PAGE == 0          # maxrss in KiB
    assert struct.unpack_from(word, buf, 256) == (0,) * 18
