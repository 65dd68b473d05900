"""kill finds a zombie not yet reaped (0, the signal dropped: Linux keeps its pid until
release_task), ESRCH only once it is reaped (LTP sigwait01 killed its exited child: ESRCH)."""
import pytest

from kernel_model import errno as E

from ...call_script import run_script

SIGKILL = 9
CHILD = 101              # the first child of run_script's process (pid 100)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_zombie_can_be_signalled_until_it_is_reaped(arch):
    results, _, _ = run_script(arch, [
        ("fork",),
        ("kill", CHILD, SIGKILL),            # the child kills itself, the parent kills it
        ("nanosleep", "BUF", 0),             # (the child is dead by the end of this sleep)
        ("kill", CHILD, 0),                  # a zombie
        ("kill", CHILD, SIGKILL),
        ("wait4", CHILD, 0, 0, 0),
        ("kill", CHILD, 0),                  # reaped: gone
    ], data=b"\1" + bytes(15))
    assert results == [CHILD, 0, 0, 0, 0, CHILD, -E.ESRCH]
