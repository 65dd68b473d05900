"""kernel_model/ipc/limits.py: the IPC namespace's /proc/sys/kernel limits. kernel.sem is four
ints written left to right by proc_dointvec; proc_ipc_sem_dointvec then refuses a semmni
outside 0..IPCMNI (ERANGE) and puts the old semmni back, keeping the others written (as the
reference host does: tests/e2e/run/test_ipc_limits.py)."""
import pytest
from hypothesis import given, strategies as st

from kernel_model import errno as E
from kernel_model.errno import GuestErrno
from kernel_model.ipc.limits import IPCMNI, IpcLimits

INTS = st.integers(min_value=-(1 << 31), max_value=(1 << 31) - 1)
SEEN = set()


@given(st.lists(INTS, min_size=1, max_size=4))
def test_semmni_stays_in_range_and_a_refused_one_is_kept(values):
    limits = IpcLimits()
    old = list(limits.sem)
    text = b" ".join(b"%d" % v for v in values) + b"\n"
    write = limits.sysctls()[b"kernel/sem"][1]
    try:
        write(0, text)
        SEEN.add("taken")
        assert limits.sem == values + old[len(values):]
    except GuestErrno as error:
        SEEN.add("refused")
        assert error.errno == E.ERANGE and len(values) == 4
        assert limits.sem == values[:3] + old[3:]
    assert 0 <= limits.semmni <= IPCMNI


def test_both_outcomes_were_reached():
    test_semmni_stays_in_range_and_a_refused_one_is_kept()
    assert SEEN == {"taken", "refused"}


@pytest.mark.parametrize("path,text,errno", [
    (b"kernel/msgmni", b"32769", E.EINVAL), (b"kernel/shmmni", b"-1", E.EINVAL),
    (b"kernel/msgmax", b"2147483648", E.EINVAL), (b"kernel/shmmax", b"-5", E.EINVAL),
    (b"kernel/sem", b"1 2 3 2147483648", E.EINVAL)])
def test_out_of_range_values_are_refused_and_change_nothing_they_name(path, text, errno):
    limits = IpcLimits()
    text_of, write = limits.sysctls()[path]
    before = text_of()
    with pytest.raises(GuestErrno) as raised:
        write(0, text)
    assert raised.value.errno == errno
    assert text_of().split(b"\t")[-1] == before.split(b"\t")[-1]
