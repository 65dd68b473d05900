"""File leases (fs/leases.py after fs/locks.c): a break signals each holder once and makes the
breaker wait until the lease is given up, downgraded or timed out at lease-break-time; a
non-blocking breaker gets EAGAIN; a sleeping writer keeps new leases away; the last close
drops a description's leases. And a property: whatever is set, broken, closed and waited for,
a write lease never stands beside another lease, and a holder is signalled once per break.
Before, no lease was ever granted (F_SETLEASE F_RDLCK was EAGAIN)."""
import pytest
from hypothesis import given, strategies as st

from kernel_model import errno as E
from kernel_model.blocking import WouldBlock
from kernel_model.errno import GuestErrno
from kernel_model.fs.constants import O_NONBLOCK, O_RDONLY, O_WRONLY
from kernel_model.fs.fasync import Fown, F_OWNER_PID
from kernel_model.fs.leases import NS, Leases, channel_of
from kernel_model.fs.locks import F_RDLCK, F_UNLCK, F_WRLCK

KEY = (1, 2)


class File:
    def __init__(self, pid=100):
        self.fown = Fown(F_OWNER_PID, pid)


class World:
    def __init__(self, break_time=45):
        self.now, self.break_time = 0, break_time
        self.woken, self.sent = [], []
        self.leases = Leases(self.woken.append, lambda: self.now, lambda: self.break_time)

    def send(self, fown, raw):
        self.sent.append(fown.pid)

    def set(self, f, kind, busy=False, fd=3):
        self.leases.set(KEY, f, kind, fd, self.send, busy)


def errno_of(call, *args):
    with pytest.raises(GuestErrno) as info:
        call(*args)
    return info.value.errno


def test_a_writer_waits_until_the_holder_lets_go():
    w, f = World(), File()
    w.set(f, F_RDLCK)
    assert w.leases.kind_of(KEY, f) == F_RDLCK
    with pytest.raises(WouldBlock) as info:
        w.leases.break_for(KEY, O_WRONLY)
    assert info.value.channel == channel_of(KEY) and info.value.deadline_ns == 45 * NS
    with pytest.raises(WouldBlock):
        w.leases.break_for(KEY, O_WRONLY)                 # the retry: no second signal
    assert w.sent == [100]
    assert w.leases.kind_of(KEY, f) == F_UNLCK            # what the lease is going to
    assert errno_of(w.set, f, F_RDLCK) == E.EAGAIN        # a writer sleeps on it
    w.set(f, F_UNLCK)
    assert channel_of(KEY) in w.woken
    w.leases.break_for(KEY, O_WRONLY)                     # nothing left to wait for
    assert not w.leases


def test_a_reader_does_not_break_a_read_lease_and_downgrades_a_write_lease():
    w, f = World(), File()
    w.set(f, F_RDLCK)
    w.leases.break_for(KEY, O_RDONLY)
    assert w.sent == []
    w.set(f, F_WRLCK)
    assert errno_of(w.leases.break_for, KEY, O_RDONLY | O_NONBLOCK) == E.EAGAIN
    assert w.sent == [100] and w.leases.kind_of(KEY, f) == F_RDLCK
    w.set(f, F_RDLCK)                                     # the downgrade is done
    w.leases.break_for(KEY, O_RDONLY)


@pytest.mark.parametrize("want, left", [(O_WRONLY, None), (O_RDONLY, F_RDLCK)])
def test_lease_break_time_takes_the_lease_away(want, left):
    w, f = World(break_time=2), File()
    w.set(f, F_WRLCK)
    with pytest.raises(WouldBlock) as info:
        w.leases.break_for(KEY, want)
    assert info.value.deadline_ns == 2 * NS
    w.now = 2 * NS - 1
    with pytest.raises(WouldBlock):
        w.leases.break_for(KEY, want)
    w.now = 2 * NS
    w.leases.break_for(KEY, want)                         # time_out_leases, then no conflict
    assert w.leases.kind_of(KEY, f) == (F_UNLCK if left is None else left)


def test_a_non_blocking_writer_leaves_the_lease_pending_but_settable():
    w, f = World(), File()
    w.set(f, F_RDLCK)
    assert errno_of(w.leases.break_for, KEY, O_WRONLY | O_NONBLOCK) == E.EAGAIN
    w.set(f, F_RDLCK)                                     # lease_clear_pending keeps the unlock
    assert w.leases.kind_of(KEY, f) == F_UNLCK


def test_exclusive_write_leases_and_close():
    w, f, g = World(), File(), File(200)
    w.set(f, F_RDLCK)
    w.set(g, F_RDLCK)
    assert errno_of(w.set, f, F_WRLCK) == E.EAGAIN
    assert errno_of(w.set, f, F_RDLCK, True) == E.EAGAIN  # a conflicting open
    assert errno_of(w.leases.break_for, KEY, O_WRONLY | O_NONBLOCK) == E.EAGAIN
    assert sorted(w.sent) == [100, 200]
    w.leases.closed(f)
    w.leases.closed(g)
    assert not w.leases
    assert errno_of(w.set, f, F_UNLCK) == E.EAGAIN


OPS = st.lists(st.tuples(st.sampled_from(["set", "break", "close", "wait"]),
                         st.integers(0, 2), st.sampled_from([F_RDLCK, F_WRLCK, F_UNLCK]),
                         st.sampled_from([O_RDONLY, O_WRONLY, O_RDONLY | O_NONBLOCK,
                                          O_WRONLY | O_NONBLOCK])), max_size=30)


@given(OPS)
def test_write_leases_stay_exclusive_and_each_break_signals_once(ops):
    w = World(break_time=1)
    files = [File(100 + i) for i in range(3)]
    # every sequence starts with a lease and a break of it, so each one checks a signal
    start = [("set", 0, F_RDLCK, 0), ("break", 1, 0, O_WRONLY | O_NONBLOCK)]
    for op, i, kind, flags in start + ops:
        f = files[i]
        before = [w.leases.kind_of(KEY, x) for x in files]
        sent = len(w.sent)
        try:
            if op == "set":
                w.set(f, kind)
            elif op == "break":
                w.leases.break_for(KEY, flags)
            elif op == "close":
                w.leases.closed(f)
            else:
                w.now += NS // 2
        except (GuestErrno, WouldBlock):
            pass
        if op == "break":
            # __break_lease: a writer signals every lease not already being removed, a
            # reader every write lease not already being broken
            wanted = (F_RDLCK, F_WRLCK) if flags & 3 != O_RDONLY else (F_WRLCK,)
            assert len(w.sent) - sent == sum(1 for k in before if k in wanted)
        held = [w.leases.of(KEY, x) for x in files if w.leases.of(KEY, x) is not None]
        assert all(len(held) == 1 for lease in held if lease.kind == F_WRLCK)
    assert w.sent[:1] == [100]
