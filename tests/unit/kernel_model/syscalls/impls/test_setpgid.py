"""setpgid's checks (kernel/sys.c): a negative group is EINVAL, a process that is neither the
caller nor its child ESRCH, a group that does not exist in the caller's session EPERM; all
were accepted (LTP setpgid03: moving into another session's group succeeded)."""
import pytest

from kernel_model import errno as E

from ...call_script import run_script

OWN_PID = 100


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_setpgid_checks_the_process_and_the_group(arch):
    results, _, _ = run_script(arch, [
        ("setpgid", 0, -5 & 0xFFFFFFFF),
        ("setpgid", 1, 0),                               # not ours (init, outside the run)
        ("setpgid", 0, 4242),                            # no such group
        ("setpgid", 0, 0),
        ("setpgid", OWN_PID, OWN_PID),
        ("getpgid", 0),
    ])
    assert results == [-E.EINVAL, -E.ESRCH, -E.EPERM, 0, 0, OWN_PID]
