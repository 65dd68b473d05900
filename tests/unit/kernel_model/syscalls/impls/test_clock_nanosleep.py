"""clock_nanosleep: the thread CPU clock cannot sleep (EOPNOTSUPP: it has no nsleep), an
unknown clock is EINVAL; both slept before (LTP clock_nanosleep01)."""
import struct

import pytest

from kernel_model import errno as E

from ...call_script import run_script

CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID = 1, 3


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_clocks_that_cannot_sleep(arch):
    data = struct.pack("<qq" if arch == "x86_64" else "<ii", 0, 1000)
    results, _, _ = run_script(arch, [
        ("clock_nanosleep", CLOCK_THREAD_CPUTIME_ID, 0, "BUF", 0),
        ("clock_nanosleep", 77, 0, "BUF", 0),
        ("clock_nanosleep", CLOCK_MONOTONIC, 0, "BUF", 0),
    ], data=data)
    assert results == [-E.EOPNOTSUPP, -E.EINVAL, 0]
