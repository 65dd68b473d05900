"""prctl's options as kernel/sys.c and cap_task_prctl answer them (LTP prctl01, 02, 08, 09):
values read back (PR_GET_PDEATHSIG gave 0 whatever was set, PR_SET_TIMERSLACK was EINVAL) and
unused arguments refused with EINVAL, privileged options without the capability EPERM."""
import struct

import pytest

from kernel_model import errno as E

from ...call_script import run_script

(PR_SET_PDEATHSIG, PR_GET_PDEATHSIG, PR_GET_DUMPABLE, PR_SET_DUMPABLE, PR_SET_TIMING,
 PR_SET_TIMERSLACK, PR_GET_TIMERSLACK, PR_SET_NO_NEW_PRIVS, PR_GET_NO_NEW_PRIVS, PR_GET_TSC,
 PR_SET_TSC, PR_CAP_AMBIENT, PR_CAPBSET_READ, PR_SET_CHILD_SUBREAPER,
 PR_GET_CHILD_SUBREAPER, PR_GET_SPECULATION_CTRL) = (1, 2, 3, 4, 14, 29, 30, 38, 39, 25, 26, 47,
                                                     23, 36, 37, 52)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_values_are_kept_and_read_back(arch):
    results, buf, _ = run_script(arch, [
        ("prctl", PR_SET_PDEATHSIG, 12), ("prctl", PR_GET_PDEATHSIG, "BUF"),
        ("prctl", PR_SET_DUMPABLE, 0), ("prctl", PR_GET_DUMPABLE),
        ("prctl", PR_GET_TIMERSLACK), ("prctl", PR_SET_TIMERSLACK, 70000),
        ("prctl", PR_GET_TIMERSLACK), ("prctl", PR_SET_TIMERSLACK, 0), ("prctl", PR_GET_TIMERSLACK),
        ("prctl", PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), ("prctl", PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0),
        ("prctl", PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0),
        ("prctl", PR_SET_TSC, 2), ("prctl", PR_GET_TSC, "BUF+4"),
        ("prctl", PR_SET_CHILD_SUBREAPER, 1), ("prctl", PR_GET_CHILD_SUBREAPER, "BUF+8"),
        ("prctl", PR_CAPBSET_READ, 21)])
    assert results == [0, 0, 0, 0, 50000, 0, 70000, 0, 50000, 0, 0, 1, 0, 0, 0, 0, 1]
    assert struct.unpack_from("<3i", buf) == (12, 2, 1)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_bad_arguments_are_einval(arch):
    results, _, _ = run_script(arch, [
        ("prctl", 999, 1), ("prctl", PR_SET_PDEATHSIG, 65), ("prctl", PR_SET_DUMPABLE, 2),
        ("prctl", PR_SET_TIMING, 1), ("prctl", PR_SET_NO_NEW_PRIVS, 0),
        ("prctl", PR_SET_NO_NEW_PRIVS, 1, 1), ("prctl", PR_GET_NO_NEW_PRIVS, 1),
        ("prctl", PR_SET_TSC, 3), ("prctl", PR_CAP_AMBIENT, 99), ("prctl", PR_CAP_AMBIENT, 4, 1),
        ("prctl", PR_CAP_AMBIENT, 1, 41), ("prctl", PR_GET_SPECULATION_CTRL, 0, 1),
        ("prctl", PR_CAPBSET_READ, 41), ("prctl", 15, 0x10)])             # PR_SET_NAME: EFAULT
    assert results == [-E.EINVAL] * 13 + [-E.EFAULT]
