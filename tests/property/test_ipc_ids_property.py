"""System V ids as ipc/util.c hands them out (kernel_model/ipc/ids.py): whatever objects are
made and removed, a new object's index lies in Linux's window (below max(in_use * 3 / 2, 64)
before it is added), and no id is handed out twice, since within one seq the indexes only
grow (ipc_idr_alloc bumps seq whenever the index is not above the last). Each run starts by
making and removing one queue 70 times, so that the indexes have wrapped at least once."""
from dataclasses import dataclass

from hypothesis import given, strategies as st

from kernel_model.ipc.ids import IPCMNI, IpcIds, IpcPerm


@dataclass
class _Object:
    perm: IpcPerm


def _make(ids: IpcIds) -> _Object:
    obj = _Object(IpcPerm(0, 0, 0, 0, 0, 0o600))
    window = max(len(ids.objects) * 3 // 2, 64)
    ids.add(obj)
    assert obj.perm.id % IPCMNI < window
    return obj


@given(ops=st.lists(st.tuples(st.booleans(), st.integers(0, 1000)), max_size=300))
def test_ids_stay_in_the_window_and_are_never_reused(ops):
    ids = IpcIds(limit=lambda: 32000)
    handed: set[int] = set()
    for _ in range(70):
        obj = _make(ids)
        handed.add(obj.perm.id)
        ids.remove(obj)
    assert ids.seq >= 1                      # (the indexes wrapped)
    alive = []
    for make, pick in ops:
        if make or not alive:
            obj = _make(ids)
            assert obj.perm.id not in handed
            handed.add(obj.perm.id)
            alive.append(obj)
        else:
            ids.remove(alive.pop(pick % len(alive)))
        assert all(ids.find(obj.perm.id) is obj for obj in alive)
