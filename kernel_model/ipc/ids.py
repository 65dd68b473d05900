"""The objects of one System V IPC kind, by key and id, and their permissions (ipc/util.c).

An id is (seq << 15) + index (ipc_buildid, IPCMNI 32768): indexes are handed out cyclically
(ipc_idr_alloc: idr_alloc_cyclic from the one after the last, below max(in_use * 3 / 2,
ipc_min_cycle), ipc_min_cycle being RADIX_TREE_MAP_SIZE, 64) and seq grows each time they
wrap (back to 0 past ipcid_seq_max, INT_MAX >> 15), so a removed object's id is not soon
reused, while a kind with few objects keeps its indexes small. With CONFIG_CHECKPOINT_RESTORE an id written to /proc/sys/kernel/{msg,sem,shm}_next_id
is the next object's (its seq, and the lowest free index from its own: idr_alloc), once:
next_id is -1 again as soon as an object is made. IPC_PRIVATE always makes a new object; another key finds its object or, with
IPC_CREAT, makes one (EEXIST with IPC_EXCL, ENOENT without IPC_CREAT, EACCES when the mode
refuses what the flags ask: ipcget_public, ipcperms).
"""
from dataclasses import dataclass, field
from typing import Callable

from .. import errno as E
from ..errno import GuestErrno
from ..creds import Credentials

IPC_PRIVATE = 0
IPC_CREAT, IPC_EXCL, IPC_NOWAIT = 0o1000, 0o2000, 0o4000
IPC_RMID, IPC_SET, IPC_STAT, IPC_INFO = 0, 1, 2, 3
IPC_64 = 0x100
IPCMNI_SHIFT = 15
IPCMNI = 1 << IPCMNI_SHIFT
IPC_MIN_CYCLE = 64                  # ipc/util.h ipc_min_cycle: RADIX_TREE_MAP_SIZE
SEQ_MAX = 0x7FFFFFFF >> IPCMNI_SHIFT            # ipcid_seq_max()
CAP_IPC_OWNER, CAP_SYS_ADMIN = 15, 21
S_IRUGO, S_IWUGO = 0o444, 0o222


@dataclass
class IpcPerm:
    """struct kern_ipc_perm: the key, owner and creator, mode and sequence number."""
    key: int
    uid: int
    gid: int
    cuid: int
    cgid: int
    mode: int
    seq: int = 0
    id: int = 0
    deleted: bool = False


def ipcperms(perm: IpcPerm, creds: Credentials, groups: tuple, flag: int) -> bool:
    """ipcperms(): the owner's or creator's bits, the group's, or the others'; CAP_IPC_OWNER
    passes everything. `flag` is what is asked, in any of the three octal digits."""
    requested = (flag >> 6 | flag >> 3 | flag) & 0o7
    granted = perm.mode
    if creds.euid in (perm.cuid, perm.uid):
        granted >>= 6
    elif creds.egid in (perm.cgid, perm.gid) or perm.cgid in groups or perm.gid in groups:
        granted >>= 3
    return not (requested & ~granted & 0o7) or creds.capable(CAP_IPC_OWNER)


def check_owner(perm: IpcPerm, creds: Credentials) -> None:
    """ipcctl_obtain_check() for IPC_SET and IPC_RMID: the owner, the creator or
    CAP_SYS_ADMIN, else EPERM."""
    if creds.euid not in (perm.cuid, perm.uid) and not creds.capable(CAP_SYS_ADMIN):
        raise GuestErrno(E.EPERM)


@dataclass
class IpcIds:
    """The table of one kind: objects (each with a `perm`) by index."""
    limit: Callable[[], int]                   # the namespace's msgmni, semmni or shmmni
    objects: dict = field(default_factory=dict)    # index -> object
    keys: dict = field(default_factory=dict)       # key (not IPC_PRIVATE) -> object
    seq: int = 0
    last_index: int = -1
    next_id: int = -1          # /proc/sys/kernel/*_next_id: the next object's id, -1 unset

    def find(self, ident: int):
        """ipc_obtain_object_check(): EINVAL for an id no live object has."""
        if ident < 0:
            raise GuestErrno(E.EINVAL)
        obj = self.objects.get(ident % IPCMNI)
        if obj is None or obj.perm.id != ident:
            raise GuestErrno(E.EINVAL)
        return obj

    def by_index(self, index: int):
        """For *_STAT commands, which take an index, not an id."""
        obj = self.objects.get(index) if 0 <= index < IPCMNI else None
        if obj is None:
            raise GuestErrno(E.EINVAL)
        return obj

    def by_key(self, key: int):
        return self.keys.get(key)

    def make_private(self, obj) -> None:
        """The object keeps its id but its key no longer finds it (shm's IPC_RMID while
        attached: the key becomes IPC_PRIVATE)."""
        if self.keys.get(obj.perm.key) is obj:
            del self.keys[obj.perm.key]
        obj.perm.key = IPC_PRIVATE

    def add(self, obj) -> int:
        if len(self.objects) >= min(self.limit(), IPCMNI):      # ipc_addid
            raise GuestErrno(E.ENOSPC)
        next_id, self.next_id = self.next_id, -1
        if next_id < 0:
            index, seq = self._free_index(), self.seq
        else:
            index, seq = self._free_index_from(next_id % IPCMNI), next_id >> IPCMNI_SHIFT
        obj.perm.seq = seq
        obj.perm.id = (seq << IPCMNI_SHIFT) + index
        self.objects[index] = obj
        if obj.perm.key != IPC_PRIVATE:
            self.keys[obj.perm.key] = obj
        return obj.perm.id

    def _free_index(self) -> int:
        """idr_alloc_cyclic(0, max_idx): the lowest free index from the one after the last
        up to the window's end, else from 0; seq grows when the index is not above the last."""
        end = min(max(len(self.objects) * 3 // 2, IPC_MIN_CYCLE), IPCMNI)
        index = next((i for i in range(self.last_index + 1, end) if i not in self.objects), None)
        if index is None:
            index = next((i for i in range(end) if i not in self.objects), None)
        if index is None:
            raise GuestErrno(E.ENOSPC)
        if index <= self.last_index:
            self.seq = self.seq + 1 if self.seq + 1 < SEQ_MAX else 0     # the indexes wrapped
        self.last_index = index
        return index

    def _free_index_from(self, start: int) -> int:
        """idr_alloc(start, 0): the lowest free index from `start` on (no cursor moves)."""
        for index in range(start, IPCMNI):
            if index not in self.objects:
                return index
        raise GuestErrno(E.ENOSPC)

    def remove(self, obj) -> None:
        obj.perm.deleted = True
        del self.objects[obj.perm.id % IPCMNI]
        if self.keys.get(obj.perm.key) is obj:
            del self.keys[obj.perm.key]

    def max_index(self) -> int:
        return max(self.objects, default=-1)


def ipcget(ids: IpcIds, key: int, flags: int, creds: Credentials, groups: tuple,
           make: Callable[[IpcPerm], object], more_checks: Callable[[object], None]) -> int:
    """ipcget(): the id of the object `key` names, made by `make` when it is new."""
    key = key - (1 << 32) if key >= 1 << 31 else key       # key_t is a C int
    if key != IPC_PRIVATE:
        found = ids.by_key(key)
        if found is not None:
            if flags & IPC_CREAT and flags & IPC_EXCL:
                raise GuestErrno(E.EEXIST)
            more_checks(found)
            if not ipcperms(found.perm, creds, groups, flags):
                raise GuestErrno(E.EACCES)
            return found.perm.id
        if not flags & IPC_CREAT:
            raise GuestErrno(E.ENOENT)
    perm = IpcPerm(key, creds.euid, creds.egid, creds.euid, creds.egid, flags & 0o777)
    return ids.add(make(perm))
