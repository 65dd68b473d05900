"""Record locks (fs/locks.py after fs/locks.c): conflicts between owners, F_GETLK's answer,
splitting and merging an owner's locks, EDEADLK for a cycle of POSIX waiters, release by owner,
and a property: whatever an owner sets and clears, its locks are the byte map a simple model
keeps, disjoint and merged. Before, every lock was granted and F_GETLK always said F_UNLCK."""
import pytest
from hypothesis import given, strategies as st

from kernel_model import errno as E
from kernel_model.blocking import WouldBlock
from kernel_model.errno import GuestErrno
from kernel_model.fs.locks import F_RDLCK, F_UNLCK, F_WRLCK, Lock, LockTable

KEY = (1, 2)
A, B = object(), object()


def table():
    woken = []
    return LockTable(woken.append), woken


def lock(owner, kind, start, end, pid=100):
    return Lock(owner, kind, start, end, pid)


def errno_of(call, *args):
    with pytest.raises(GuestErrno) as info:
        call(*args)
    return info.value.errno


def test_conflicts_and_getlk():
    t, woken = table()
    t.set(KEY, lock(A, F_WRLCK, 10, 19), False, "ch")
    t.set(KEY, lock(B, F_RDLCK, 0, 9), False, "ch")          # beside it: no conflict
    assert errno_of(t.set, KEY, lock(B, F_RDLCK, 15, 25), False, "ch") == E.EAGAIN
    found = t.conflict(KEY, lock(B, F_WRLCK, 5, None))
    assert (found.owner, found.kind, found.start, found.end) == (A, F_WRLCK, 10, 19)
    assert t.conflict(KEY, lock(A, F_WRLCK, 0, None)).owner is B      # B's read lock
    assert t.conflict(KEY, lock(A, F_RDLCK, 0, 9)) is None            # read beside read
    with pytest.raises(WouldBlock):
        t.set(KEY, lock(B, F_WRLCK, 12, 12), True, "ch")
    t.release(A)
    t.set(KEY, lock(B, F_WRLCK, 12, 12), True, "ch")
    assert woken


def test_unlock_splits_and_same_type_merges():
    t, _ = table()
    t.set(KEY, lock(A, F_WRLCK, 0, 99), False, "ch")
    t.set(KEY, lock(A, F_UNLCK, 40, 59), False, "ch")
    assert [(x.start, x.end) for x in t.locks(KEY)] == [(0, 39), (60, 99)]
    t.set(KEY, lock(A, F_RDLCK, 50, 69), False, "ch")          # a read lock inside a write one
    assert [(x.kind, x.start, x.end) for x in t.locks(KEY)] == \
        [(F_WRLCK, 0, 39), (F_RDLCK, 50, 69), (F_WRLCK, 70, 99)]
    t.set(KEY, lock(A, F_WRLCK, 40, 49), False, "ch")          # touches both write neighbours
    assert [(x.kind, x.start, x.end) for x in t.locks(KEY)] == \
        [(F_WRLCK, 0, 49), (F_RDLCK, 50, 69), (F_WRLCK, 70, 99)]
    t.set(KEY, lock(A, F_WRLCK, 100, None), False, "ch")
    assert (t.locks(KEY)[-1].start, t.locks(KEY)[-1].end) == (70, None)


def test_a_cycle_of_posix_waiters_is_edeadlk():
    t, _ = table()
    t.set(KEY, lock(A, F_WRLCK, 0, 0), False, "ch")
    t.set(KEY, lock(B, F_WRLCK, 1, 1), False, "ch")
    with pytest.raises(WouldBlock):
        t.set(KEY, lock(A, F_WRLCK, 1, 1), True, "ch")         # A waits on B
    assert errno_of(t.set, KEY, lock(B, F_WRLCK, 0, 0), True, "ch") == E.EDEADLK
    ofd = Lock(B, F_WRLCK, 0, 0, -1, ofd=True)                  # OFD locks sleep instead
    with pytest.raises(WouldBlock):
        t.set(KEY, ofd, True, "ch")


OPS = st.lists(st.tuples(st.sampled_from([A, B]), st.sampled_from([F_RDLCK, F_WRLCK, F_UNLCK]),
                         st.integers(0, 12), st.one_of(st.none(), st.integers(0, 12))),
               max_size=25)
TOP = 32                               # "to the end of the file" in the model's byte map


@given(OPS)
def test_locks_are_the_model_s_byte_map(ops):
    t, _ = table()
    model = {A: [None] * TOP, B: [None] * TOP}          # per byte: the owner's lock type
    refused = 0
    # Every example starts with a conflict, so the refusal path is always taken.
    for owner, kind, start, length in [(A, F_WRLCK, 0, 3), (B, F_RDLCK, 2, 0)] + ops:
        end = None if length is None else start + length
        cells = range(start, TOP if end is None else end + 1)
        other = model[B if owner is A else A]
        if kind != F_UNLCK and any(other[c] is not None and F_WRLCK in (kind, other[c])
                                   for c in cells):
            assert errno_of(t.set, KEY, lock(owner, kind, start, end), False, "ch") == E.EAGAIN
            refused += 1
            continue
        t.set(KEY, lock(owner, kind, start, end), False, "ch")
        for c in cells:
            model[owner][c] = None if kind == F_UNLCK else kind
    for owner in (A, B):
        mine = [x for x in t.locks(KEY) if x.owner is owner]
        got = [None] * TOP
        for x in mine:
            for c in range(x.start, TOP if x.end is None else x.end + 1):
                assert got[c] is None, "an owner's locks overlap"
                got[c] = x.kind
        assert got == model[owner]
        for x, y in zip(mine, mine[1:]):          # sorted, and merged when they touch
            assert x.end is not None and (x.end + 1 < y.start or x.kind != y.kind)
    assert refused >= 1

