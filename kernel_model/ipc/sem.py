"""System V semaphore sets (ipc/sem.c): the values, and semop's all-or-nothing operations.

Limits are the namespace's (limits.py: semmsl semaphores a set, semopm operations a call,
semmni sets), values up to SEMVMX (include/uapi/linux/sem.h). A semop either applies every operation or none
(perform_atomic_semop): an operation that would take a value below zero, or wait for zero on
a value that is not, makes the caller wait; one that would pass SEMVMX is ERANGE. SEM_UNDO's
adjustments are kept per process and applied when it exits (exit_sem).
"""
from dataclasses import dataclass, field

from .. import errno as E
from ..errno import GuestErrno
from .ids import IpcIds, IpcPerm

SEMVMX, SEMAEM = 32767, 32767
SEM_UNDO = 0x1000


@dataclass(eq=False)
class Semaphore:
    value: int = 0
    pid: int = 0


@dataclass(eq=False)
class SemaphoreSet:
    perm: IpcPerm
    ctime: int
    sems: list = field(default_factory=list)
    otime: int = 0
    waiters: dict = field(default_factory=dict)    # thread -> (semnum, waits for zero)

    def try_ops(self, ops: list[tuple[int, int, int]]) -> tuple[int, bool] | None:
        """None when every operation can be applied now (and they are not yet); else the
        (semnum, waits for zero) the first blocking one waits on. ERANGE past SEMVMX."""
        values = [s.value for s in self.sems]
        for num, op, _flags in ops:
            if op == 0:
                if values[num]:
                    return num, True
                continue
            result = values[num] + op
            if result < 0:
                return num, False
            if result > SEMVMX:
                raise GuestErrno(E.ERANGE)
            values[num] = result
        return None

    def apply(self, ops, pid: int) -> None:
        for num, op, _flags in ops:
            self.sems[num].value += op
            self.sems[num].pid = pid

    def count_waiting(self, num: int, for_zero: bool) -> int:
        """GETNCNT / GETZCNT: the tasks asleep in semop on this semaphore."""
        return sum(1 for thread, (n, zero) in self.waiters.items()
                   if n == num and zero == for_zero and thread.state == "sleeping"
                   and self in _channels(thread))


def _channels(thread):
    channels = thread.wait_channels
    return [c for group in channels for c in (group if isinstance(group, list) else [group])]


def new_sets(semmni) -> IpcIds:
    return IpcIds(semmni)


def undo(undo_list: dict, ids: IpcIds) -> None:
    """exit_sem(): add each SEM_UNDO adjustment back, clamped to 0..SEMVMX, on the sets
    that still exist."""
    for (ident, num), adjustment in undo_list.items():
        try:
            sem_set = ids.find(ident)
        except GuestErrno:
            continue
        if num < len(sem_set.sems):
            sem = sem_set.sems[num]
            sem.value = min(max(sem.value + adjustment, 0), SEMVMX)
    undo_list.clear()
