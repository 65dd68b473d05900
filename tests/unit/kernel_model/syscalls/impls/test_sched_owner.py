"""Changing another user's task's scheduling needs the same owner or CAP_SYS_NICE
(check_same_owner; LTP sched_setaffinity01 and sched_setparam05 as nobody: it was allowed):
sched_setaffinity of init (root's) is EPERM before its mask is looked at, of oneself fine."""
import pytest

from kernel_model import errno as E

from ...call_script import run_script

NOBODY = 65534


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_setaffinity_of_another_users_task(arch):
    setresuid = "setresuid32" if arch == "i386" else "setresuid"
    results, _, _ = run_script(arch, [
        ("sched_setaffinity", 1, 8, "BUF"),              # as root, an empty mask: EINVAL
        (setresuid, -1, NOBODY, -1),
        ("sched_setaffinity", 1, 8, "BUF"),              # init is root's: EPERM first
        ("sched_setaffinity", 1, 8, "BUF+8"),
        ("sched_setaffinity", 0, 8, "BUF+8"),            # oneself
        ("sched_setparam", 0, "BUF+16")], data=bytes(8) + b"\x01" + bytes(15))
    assert results == [-E.EINVAL, 0, -E.EPERM, -E.EPERM, 0, 0]
