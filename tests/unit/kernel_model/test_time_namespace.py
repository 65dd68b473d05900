"""A time namespace's offsets file (kernel_model/time_namespace.py)."""
import pytest
from hypothesis import given, strategies as st

from kernel_model import errno as E
from kernel_model.errno import GuestErrno
from kernel_model.time_namespace import INITIAL, TimeNamespace

NS = 10**9


def errno_of(ns, text, may=True):
    with pytest.raises(GuestErrno) as error:
        ns.write(text, may)
    return error.value.errno


def test_the_file_shows_and_takes_both_clocks():
    ns = TimeNamespace(0xF0000000)
    assert ns.show() == b"monotonic           0         0\nboottime            0         0\n"
    assert ns.write(b"7 -3 250000000\n1 10 0", True) == 21
    assert ns.show() == b"monotonic          10         0\nboottime           -3 250000000\n"
    assert ns.offset(1) == ns.offset(4) == ns.offset(6) == 10 * NS       # MONOTONIC, _RAW, _COARSE
    assert ns.offset(7) == ns.offset(9) == -3 * NS + 250000000          # BOOTTIME, _ALARM
    assert ns.offset(0) == 0                                            # REALTIME never moves


def test_the_checks_in_linux_order():
    ns = TimeNamespace(0xF0000001)
    assert errno_of(ns, b"realtime 1 0") == E.EINVAL
    assert errno_of(ns, b"1 1 1000000000") == E.EINVAL
    assert errno_of(ns, b"1 x 0") == E.EINVAL
    assert errno_of(ns, b"1 1 0", may=False) == E.EPERM
    assert errno_of(ns, b"1 %d 0" % (2**63 // NS + 1)) == E.ERANGE
    ns.frozen = True
    assert errno_of(ns, b"1 1 0") == E.EACCES
    assert errno_of(INITIAL, b"1 1 0") == E.EACCES


@given(st.integers(-10**6, 10**6), st.integers(0, NS - 1), st.sampled_from([b"monotonic", b"1"]))
def test_a_written_offset_reads_back(sec, nsec, name):
    ns = TimeNamespace(0xF0000002)
    ns.write(b"%s %d %d" % (name, sec, nsec), True)
    assert ns.offset(1) == sec * NS + nsec
    shown = ns.show().split(b"\n")[0].split()
    assert int(shown[1]) * NS + int(shown[2]) == sec * NS + nsec
