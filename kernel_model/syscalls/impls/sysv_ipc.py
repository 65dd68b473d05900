"""ipc(2): i386's one entry to System V IPC (ipc/syscall.c compat_ksys_ipc), which glibc uses.

The call number's low 16 bits name the operation, the high 16 its version. Arguments are
(call, first, second, third, ptr, fifth); semctl's union comes through ptr, msgrcv's version 0
passes its buffer and type in a struct ipc_kludge at ptr, shmat returns the address through
third (a pointer) and 0. An unknown operation is ENOSYS, as Linux's.
"""
import struct

from ... import errno as E
from ...blocking import WouldBlock
from ...errno import GuestErrno
from ..kinds import K
from ..registry import syscall
from .sysv_msg import msgctl_with, sys_msgget, sys_msgrcv, sys_msgsnd
from .sysv_sem import _timed, semctl_with, sys_semget, _semop

SEMOP, SEMGET, SEMCTL, SEMTIMEDOP = 1, 2, 3, 4
MSGSND, MSGRCV, MSGGET, MSGCTL = 11, 12, 13, 14
SHMAT, SHMDT, SHMGET, SHMCTL = 21, 22, 23, 24


def _semctl(ctx, first, second, third, ptr):
    if not ptr:
        raise GuestErrno(E.EINVAL)
    union = struct.unpack("<I", ctx.read(ptr, 4))[0]
    return semctl_with(ctx, first, second, third, union, old_api=True)


def _msgrcv(ctx, version, first, second, third, ptr, fifth):
    if version == 0:                          # struct compat_ipc_kludge { msgp; msgtyp; }
        if not ptr:
            raise GuestErrno(E.EINVAL)
        msgp, msgtyp = struct.unpack("<Ii", ctx.read(ptr, 8))
        return sys_msgrcv(ctx, first, msgp, second, msgtyp & 0xFFFFFFFF, third)
    return sys_msgrcv(ctx, first, ptr, second, fifth, third)


def _shm(ctx, call, version, first, second, third, ptr):
    from . import sysv_shm                    # shared memory: its own module (sysv_shm.py)
    if call == SHMAT:
        if version == 1:
            raise GuestErrno(E.EINVAL)        # iBCS2's version is refused on x86
        address = sysv_shm.sys_shmat(ctx, first, ptr, second)
        ctx.write(third, struct.pack("<I", address & 0xFFFFFFFF))
        return 0
    if call == SHMDT:
        return sysv_shm.sys_shmdt(ctx, ptr)
    if call == SHMGET:
        return sysv_shm.sys_shmget(ctx, first, second, third)
    return sysv_shm.shmctl_with(ctx, first, second, ptr, old_api=True)


# The calls that sleep, by name: a signal ends each as its direct call's (signals/delivery.py)
SLEEPERS = {SEMOP: "semop", SEMTIMEDOP: "semtimedop", MSGSND: "msgsnd", MSGRCV: "msgrcv"}


@syscall("ipc", args=(("call", K.UINT), ("first", K.INT), ("second", K.INT), ("third", K.INT),
                      ("ptr", K.PTR), ("fifth", K.LONG)), outside_hook=True)
def sys_ipc(ctx, call, first, second, third, ptr, fifth):
    try:
        return _subcall(ctx, call, first, second, third, ptr, fifth)
    except WouldBlock as blocked:
        blocked.call = SLEEPERS.get(call & 0xFFFF)
        raise


def _subcall(ctx, call, first, second, third, ptr, fifth):
    version, call = call >> 16 & 0xFFFF, call & 0xFFFF
    if call == SEMOP:
        return _semop(ctx, first, ptr, second)
    if call == SEMTIMEDOP:
        return _timed(ctx, first, ptr, second, fifth, "<ii")
    if call == SEMGET:
        return sys_semget(ctx, first, second, third)
    if call == SEMCTL:
        return _semctl(ctx, first, second, third, ptr)
    if call == MSGSND:
        return sys_msgsnd(ctx, first, ptr, second, third)
    if call == MSGRCV:
        return _msgrcv(ctx, version, first, second, third, ptr, fifth)
    if call == MSGGET:
        return sys_msgget(ctx, first, second)
    if call == MSGCTL:
        return msgctl_with(ctx, first, second, ptr, old_api=True)
    if call in (SHMAT, SHMDT, SHMGET, SHMCTL):
        return _shm(ctx, call, version, first, second, third, ptr)
    raise GuestErrno(E.ENOSYS)
