"""futex_waitv (ENOSYS before; LTP futex_waitv01-03): its checks in sys_futex_waitv's order,
EAGAIN for a word that does not hold its value, ETIMEDOUT for a deadline already past."""
import struct

import pytest

from kernel_model import errno as E

from ...call_script import BUF, run_script

FUTEX_32, PRIVATE = 2, 128
CLOCK_MONOTONIC, CLOCK_REALTIME = 1, 0


def waiter(val: int, uaddr: int, flags: int = FUTEX_32 | PRIVATE, reserved: int = 0) -> bytes:
    return struct.pack("<QQII", val, uaddr, flags, reserved)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_checks_and_immediate_answers(arch):
    word = BUF + 0x800                      # holds 0 (BUF starts zeroed past the data)
    data = (waiter(0, word) + waiter(1, word) + waiter(0, word + 1) + waiter(0, word, 0x40)
            + waiter(0, word, reserved=1) + waiter(0, word, PRIVATE))
    data = data.ljust(0x200, b"\0") + struct.pack("<qq", 0, 1)        # timeout at BUF+0x200
    results, _, _ = run_script(arch, [
        ("futex_waitv", "BUF", 1, 1, 0, 0),                 # flags
        ("futex_waitv", "BUF", 0, 0, 0, 0),                 # no futex
        ("futex_waitv", "BUF", 129, 0, 0, 0),               # more than FUTEX_WAITV_MAX
        ("futex_waitv", 0, 1, 0, 0, 0),                     # no array
        ("futex_waitv", "BUF", 1, 0, "BUF+512", 7),         # a clock it does not take
        ("futex_waitv", "BUF+24", 1, 0, 0, 0),              # the word holds 0, not 1
        ("futex_waitv", "BUF+48", 1, 0, 0, 0),              # misaligned word
        ("futex_waitv", "BUF+72", 1, 0, 0, 0),              # unknown flag
        ("futex_waitv", "BUF+96", 1, 0, 0, 0),              # reserved word set
        ("futex_waitv", "BUF+120", 1, 0, 0, 0),             # no size flag
        ("futex_waitv", "BUF", 2, 0, "BUF+512", CLOCK_MONOTONIC),   # value mismatch first
        ("futex_waitv", "BUF", 1, 0, "BUF+512", CLOCK_MONOTONIC),   # 1 ns after boot: past
        ("futex_waitv", 0x10, 1, 0, 0, 0)], data=data)      # unmapped array
    assert results == [-E.EINVAL] * 5 + [-E.EAGAIN] + [-E.EINVAL] * 4 + \
        [-E.EAGAIN, -E.ETIMEDOUT, -E.EFAULT]
