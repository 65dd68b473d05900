"""semget, semop, semtimedop, semctl (ipc/sem.c) over the run's sets (kernel_model/ipc/sem.py).

A semop that cannot complete sleeps on its set and runs again when a value changes (every
semop, SETVAL, SETALL and IPC_RMID wakes the set's sleepers); IPC_NOWAIT on the blocking
operation makes it EAGAIN, so does semtimedop's timeout passing (its deadline is fixed by the
first execution). The waiting thread and the semaphore it waits on are kept for GETNCNT and
GETZCNT.
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ...ipc.ids import (IPC_INFO, IPC_NOWAIT, IPC_RMID, IPC_SET, IPC_STAT, S_IRUGO, S_IWUGO,
                        check_owner, ipcget)
from ...ipc.layouts import ds_size, pack_semid, parse_cmd, update_old_perm, update_perm
from ...ipc.sem import (SEM_UNDO, SEMAEM, SEMVMX, Semaphore,
                        SemaphoreSet)
from ..kinds import K
from ..registry import syscall
from ...process.namespaces import ipc_of
from .sysv_msg import check_perm, creds_groups, lookup, now_seconds, sleep_on
from .timecalls import _read_timespec

GETPID, GETVAL, GETALL, GETNCNT, GETZCNT, SETVAL, SETALL = 11, 12, 13, 14, 15, 16, 17
SEM_STAT, SEM_INFO, SEM_STAT_ANY = 18, 19, 20
SEMBUF = struct.Struct("<HhH")
DEADLINE = "semtimedop_deadline"
OLD_SEMID_SIZE = 44      # struct semid_ds with the old ipc_perm, i386 (include/uapi/linux/sem.h)


@syscall("semget", args=(("key", K.HEX), ("nsems", K.INT), ("semflg", K.OCTAL)))
def sys_semget(ctx, key, nsems, flags):
    nsems = ctx.int32(nsems)
    if nsems < 0 or nsems > ipc_of(ctx.kernel, ctx.proc).limits.semmsl:
        raise GuestErrno(E.EINVAL)

    def make(perm):
        if nsems == 0:
            raise GuestErrno(E.EINVAL)          # newary(): a new set has semaphores
        return SemaphoreSet(perm, now_seconds(ctx), [Semaphore() for _ in range(nsems)])

    def more_checks(sem_set):
        if nsems > len(sem_set.sems):
            raise GuestErrno(E.EINVAL)
    return ipcget(ipc_of(ctx.kernel, ctx.proc).sem, key & 0xFFFFFFFF, ctx.int32(flags), *creds_groups(ctx),
                  make, more_checks)


def _semop(ctx, semid, sops, nsops, timeout_ns=None):
    semid, nsops = ctx.int32(semid), ctx.signed(nsops)
    if nsops < 1 or semid < 0:
        raise GuestErrno(E.EINVAL)
    if nsops > ipc_of(ctx.kernel, ctx.proc).limits.semopm:
        raise GuestErrno(E.E2BIG)
    raw = ctx.read(sops, SEMBUF.size * nsops)
    ops = [SEMBUF.unpack_from(raw, i * SEMBUF.size) for i in range(nsops)]
    deadline = _deadline(ctx, timeout_ns)
    sem_set = lookup(ctx, ipc_of(ctx.kernel, ctx.proc).sem, semid)
    if max(num for num, _, _ in ops) >= len(sem_set.sems):
        raise GuestErrno(E.EFBIG)
    check_perm(ctx, sem_set, S_IWUGO if any(op for _, op, _ in ops) else S_IRUGO)
    blocked = sem_set.try_ops(ops)
    if blocked is not None:
        flags = next(f for num, op, f in ops if num == blocked[0])
        if flags & IPC_NOWAIT or (deadline is not None and ctx.kernel.clock.monotonic_ns() >= deadline):
            sem_set.waiters.pop(ctx.thread, None)
            raise GuestErrno(E.EAGAIN)
        sem_set.waiters[ctx.thread] = blocked
        if deadline is not None:
            ctx.thread.restart[DEADLINE] = deadline
        sleep_on(ctx, sem_set, "semop", deadline_ns=deadline)
    sem_set.waiters.pop(ctx.thread, None)
    sem_set.apply(ops, ctx.proc.pid)
    sem_set.otime = now_seconds(ctx)
    for num, op, flags in ops:
        if flags & SEM_UNDO and op:
            key = (sem_set.perm.id, num)
            ctx.proc.sem_undo[key] = ctx.proc.sem_undo.get(key, 0) - op
    ctx.kernel.wakeup(sem_set)
    return 0


def _deadline(ctx, timeout_ns):
    previous = ctx.thread.restart.pop(DEADLINE, None)
    if timeout_ns is None:
        return None
    return previous if previous is not None else ctx.kernel.clock.monotonic_ns() + timeout_ns


@syscall("semop", args=(("semid", K.INT), ("sops", K.PTR), ("nsops", K.ULONG)))
def sys_semop(ctx, semid, sops, nsops):
    return _semop(ctx, semid, sops, nsops)


def _timed(ctx, semid, sops, nsops, timeout, fmt: str):
    timeout_ns = _read_timespec(ctx, timeout, fmt) if timeout else None
    return _semop(ctx, semid, sops, nsops, timeout_ns)


SEMTIMEDOP_ARGS = (("semid", K.INT), ("sops", K.PTR), ("nsops", K.ULONG), ("timeout", K.PTR))


@syscall("semtimedop", args=SEMTIMEDOP_ARGS)
def sys_semtimedop(ctx, semid, sops, nsops, timeout):
    return _timed(ctx, semid, sops, nsops, timeout, "<qq" if ctx.word == 8 else "<ii")


@syscall("semtimedop_time64", args=SEMTIMEDOP_ARGS)
def sys_semtimedop_time64(ctx, semid, sops, nsops, timeout):
    return _timed(ctx, semid, sops, nsops, timeout, "<qq")


def _seminfo(ctx, cmd: int, buf: int) -> int:
    """struct seminfo: the limits; SEM_INFO counts the sets (semusz) and semaphores (semaem)."""
    ids = ipc_of(ctx.kernel, ctx.proc).sem
    usz, aem = 20, SEMAEM
    if cmd == SEM_INFO:
        usz, aem = len(ids.objects), sum(len(s.sems) for s in ids.objects.values())
    limits = ipc_of(ctx.kernel, ctx.proc).limits                  # sem.c semctl_info: semmap = SEMMAP = semmni
    ctx.write(buf, struct.pack("<10i", limits.semmni, limits.semmni, limits.semmns, limits.semmns,
                               limits.semmsl, limits.semopm, limits.semopm, usz, SEMVMX, aem))
    return max(ids.max_index(), 0)


def _semnum(sem_set, semnum: int):
    if not 0 <= semnum < len(sem_set.sems):
        raise GuestErrno(E.EINVAL)
    return sem_set.sems[semnum]


def _values(ctx, sem_set, cmd: int, semnum: int, arg: int) -> int:
    """The commands on values: GET* need read permission, SET* write (EACCES)."""
    check_perm(ctx, sem_set, S_IWUGO if cmd in (SETVAL, SETALL) else S_IRUGO)
    if cmd == GETALL:
        ctx.write(arg, b"".join(struct.pack("<H", s.value) for s in sem_set.sems))
        return 0
    if cmd == SETALL:
        raw = ctx.read(arg, 2 * len(sem_set.sems))
        values = struct.unpack(f"<{len(sem_set.sems)}H", raw)
        if any(v > SEMVMX for v in values):
            raise GuestErrno(E.ERANGE)
        for sem, value in zip(sem_set.sems, values):
            sem.value, sem.pid = value, ctx.proc.pid
        return _changed(ctx, sem_set, None)
    sem = _semnum(sem_set, semnum)
    if cmd == GETVAL:
        return sem.value
    if cmd == GETPID:
        return sem.pid
    if cmd in (GETNCNT, GETZCNT):
        return sem_set.count_waiting(semnum, cmd == GETZCNT)
    value = ctx.int32(arg)                     # SETVAL: the union's int
    if not 0 <= value <= SEMVMX:
        raise GuestErrno(E.ERANGE)
    sem.value, sem.pid = value, ctx.proc.pid
    return _changed(ctx, sem_set, semnum)


def _changed(ctx, sem_set, semnum) -> int:
    """A value set: every process's SEM_UNDO adjustment of it is dropped, sleepers woken."""
    for proc in ctx.kernel.processes.values():
        for key in [k for k in proc.sem_undo if k[0] == sem_set.perm.id
                    and (semnum is None or k[1] == semnum)]:
            del proc.sem_undo[key]
    sem_set.ctime = now_seconds(ctx)
    ctx.kernel.wakeup(sem_set)
    return 0


def _stat(ctx, sem_set, buf: int) -> None:
    ctx.write(buf, pack_semid(ctx.abi, sem_set.perm, sem_set.otime, sem_set.ctime,
                              len(sem_set.sems)))


def _set_old(ctx, semid: int, arg: int) -> int:
    """IPC_SET through ipc(2) without IPC_64 on i386 (ksys_old_semctl, version IPC_OLD): the
    old struct semid_ds (16-bit ids, 44 bytes) is read whole (EFAULT), its owner and mode
    applied."""
    if semid < 0:
        raise GuestErrno(E.EINVAL)
    raw = ctx.read(arg, OLD_SEMID_SIZE)
    sem_set = ipc_of(ctx.kernel, ctx.proc).sem.find(semid)
    check_owner(sem_set.perm, ctx.proc.creds)
    update_old_perm(sem_set.perm, raw)
    sem_set.ctime = now_seconds(ctx)
    return 0


@syscall("semctl", args=(("semid", K.INT), ("semnum", K.INT), ("cmd", K.INT), ("arg", K.HEX)))
def sys_semctl(ctx, semid, semnum, cmd, arg):
    return semctl_with(ctx, semid, semnum, cmd, arg, old_api=False)


def semctl_with(ctx, semid, semnum, cmd, arg, *, old_api: bool):
    """semctl; `old_api`: reached through i386's ipc(2), which parses the IPC_64 version
    (layouts.parse_cmd)."""
    if old_api and ctx.abi == "i386" and cmd & 0xFFFFFFFF == IPC_SET:
        return _set_old(ctx, ctx.int32(semid), arg)
    semid, semnum, cmd = ctx.int32(semid), ctx.int32(semnum), parse_cmd(ctx.abi, cmd, "sem", old_api)
    ids = ipc_of(ctx.kernel, ctx.proc).sem
    if cmd in (IPC_INFO, SEM_INFO):
        return _seminfo(ctx, cmd, arg)
    if semid < 0:
        raise GuestErrno(E.EINVAL)
    if cmd in (SEM_STAT, SEM_STAT_ANY):
        sem_set = ids.by_index(semid)
        if cmd == SEM_STAT:
            check_perm(ctx, sem_set, S_IRUGO)
        _stat(ctx, sem_set, arg)
        return sem_set.perm.id
    if cmd == IPC_SET:
        raw = ctx.read(arg, ds_size(ctx.abi, "sem"))
        sem_set = ids.find(semid)
        check_owner(sem_set.perm, ctx.proc.creds)
        update_perm(sem_set.perm, ctx.abi, raw)
        sem_set.ctime = now_seconds(ctx)
        return 0
    sem_set = ids.find(semid)
    if cmd == IPC_STAT:
        check_perm(ctx, sem_set, S_IRUGO)
        _stat(ctx, sem_set, arg)
        return 0
    if cmd == IPC_RMID:
        check_owner(sem_set.perm, ctx.proc.creds)
        ids.remove(sem_set)
        ctx.kernel.wakeup(sem_set)
        return 0
    if cmd in (GETPID, GETVAL, GETALL, GETNCNT, GETZCNT, SETVAL, SETALL):
        return _values(ctx, sem_set, cmd, semnum, arg)
    raise GuestErrno(E.EINVAL)
