"""signalfd and signalfd4 (ENOSYS before; LTP signalfd01-02, signalfd4_01-02): a read takes
the pending signals of the mask as struct signalfd_siginfo (EAGAIN under O_NONBLOCK when none,
else it sleeps until one is posted), an fd that is a signalfd gets a new mask, and bad sizes,
flags or files are EINVAL."""
import struct

import pytest

from kernel_model import errno as E

from ...call_script import run_script

SIGUSR1, SIGALRM, SIG_BLOCK, SFD_NONBLOCK = 10, 14, 0, 0o4000
OWN_PID = 100


def _data() -> bytes:
    sets = struct.pack("<QQ", 1 << (SIGUSR1 - 1), (1 << (SIGUSR1 - 1)) | (1 << (SIGALRM - 1)))
    return sets + struct.pack("<Q", 1 << (SIGALRM - 1))


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_read_takes_the_pending_signals_of_its_mask(arch):
    results, buf, _ = run_script(arch, [
        ("rt_sigprocmask", SIG_BLOCK, "BUF+8", 0, 8),
        ("signalfd4", -1, "BUF", 8, SFD_NONBLOCK),
        ("read", 3, "BUF+128", 128),                      # nothing pending
        ("kill", 0, SIGUSR1),
        ("read", 3, "BUF+128", 127),                      # under one signalfd_siginfo
        ("read", 3, "BUF+128", 256),
        ("rt_sigpending", "BUF+64", 8),
        ("signalfd", 3, "BUF+16", 8),                     # now SIGALRM only
        ("alarm", 1),
        ("signalfd4", -1, "BUF+16", 8, 0),                # a blocking one
        ("read", 4, "BUF+256", 128),                      # sleeps until the alarm
    ], data=_data())
    assert results == [0, 3, -E.EAGAIN, 0, -E.EINVAL, 128, 0, 3, 0, 4, 128]
    signo, _, code, pid = struct.unpack_from("<IiiI", buf, 128)
    assert (signo, code, pid) == (SIGUSR1, 0, OWN_PID)
    assert struct.unpack_from("<Q", buf, 64)[0] == 0       # taken: no longer pending
    assert struct.unpack_from("<Ii", buf, 256) == (SIGALRM, 0)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_bad_sizes_flags_and_files_are_einval(arch):
    results, _, _ = run_script(arch, [
        ("signalfd4", -1, "BUF", 4, 0),
        ("signalfd4", -1, "BUF", 8, 1),
        ("signalfd4", 0, "BUF", 8, 0),                    # stdin is no signalfd
        ("signalfd4", 77, "BUF", 8, 0),
    ], data=_data())
    assert results == [-E.EINVAL, -E.EINVAL, -E.EINVAL, -E.EBADF]
