"""wait4/waitpid(INT_MIN) is ESRCH: its negation names no process group (kernel_wait4 refuses
it before looking for children); it was ECHILD (LTP waitpid04)."""
import pytest

from kernel_model import errno as E

from ...call_script import run_script

INT_MIN = 1 << 31          # the word -2147483648


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_int_min_is_esrch(arch):
    results, _, _ = run_script(arch, [("wait4", INT_MIN, 0, 0, 0), ("wait4", -1, 0, 0, 0)])
    assert results == [-E.ESRCH, -E.ECHILD]
