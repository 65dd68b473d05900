"""fcntl's owner and signal commands (fs/fcntl.c): F_SETOWN/F_GETOWN, F_SETOWN_EX/F_GETOWN_EX,
F_SETSIG/F_GETSIG, and O_ASYNC through F_SETFL (fs/fasync.py keeps the state and the lists).

F_SETOWN takes a pid, or a negated process group; F_GETOWN answers the same way. F_SETOWN_EX
takes struct f_owner_ex {int type; pid_t pid;} of F_OWNER_TID, F_OWNER_PID or F_OWNER_PGRP
(EINVAL for another type); a pid no task has is ESRCH, 0 is nobody. F_SETSIG takes 0 (SIGIO)
or a valid signal (EINVAL above 64). A fresh description's owner is {F_OWNER_TID, 0}.
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ...flags import F_GETOWN, F_GETOWN_EX, F_GETSIG, F_SETOWN, F_SETOWN_EX, F_SETSIG
from ...fs.fasync import F_OWNER_PGRP, F_OWNER_PID, F_OWNER_TID, SI_KERNEL, SIGIO, fown_of
from ...signals.numbers import NSIG

OWNER_COMMANDS = (F_SETOWN, F_GETOWN, F_SETOWN_EX, F_GETOWN_EX, F_SETSIG, F_GETSIG)


def owner_fcntl(ctx, f, cmd: int, arg: int) -> int:
    fown = fown_of(f)
    if cmd == F_GETOWN:
        return -fown.pid if fown.kind == F_OWNER_PGRP else fown.pid
    if cmd == F_SETOWN:
        who = ctx.int32(arg)
        kind, pid = (F_OWNER_PGRP, -who) if who < 0 else (F_OWNER_PID, who)
        _check_exists(ctx, kind, pid)
        fown.kind, fown.pid = kind, pid
        return 0
    if cmd == F_GETOWN_EX:
        ctx.write(arg, struct.pack("<ii", fown.kind, fown.pid))
        return 0
    if cmd == F_SETOWN_EX:
        kind, pid = struct.unpack("<ii", ctx.read(arg, 8))
        if kind not in (F_OWNER_TID, F_OWNER_PID, F_OWNER_PGRP):
            raise GuestErrno(E.EINVAL)
        _check_exists(ctx, kind, pid)
        fown.kind, fown.pid = kind, pid
        return 0
    if cmd == F_GETSIG:
        return fown.signum
    sig = ctx.int32(arg)
    if not 0 <= sig <= NSIG:
        raise GuestErrno(E.EINVAL)             # F_SETSIG: valid_signal
    fown.signum = sig
    return 0


def _check_exists(ctx, kind: int, pid: int) -> None:
    """f_setown_ex: find_vpid(pid) must find something (ESRCH), but for 0."""
    if pid and not _targets(ctx.kernel, kind, pid):
        raise GuestErrno(E.ESRCH)


def _targets(kernel, kind: int, pid: int) -> list:
    """(process, thread or None) pairs an owner names."""
    if kind == F_OWNER_PGRP:
        return [(p, None) for p in kernel.processes.values()
                if (p.pgid or p.pid) == pid and p.state != "zombie"]
    for proc in kernel.processes.values():
        for thread in proc.threads:
            if thread.tid == pid:
                return [(proc, thread if kind == F_OWNER_TID else None)]
    return []


def sender(kernel):
    """send_sigio() bound to the kernel: the owner's signal to each task it names."""
    def send(fown, raw) -> None:
        for proc, thread in _targets(kernel, fown.kind, fown.pid):
            if raw is None:
                kernel.signals.post(proc, SIGIO, thread=thread, info={"code": SI_KERNEL, "pid": 0})
            else:
                word = 8 if proc.arch == "x86_64" else 4
                kernel.signals.post(proc, fown.signum, thread=thread, info={"raw": raw(word)})
    return send
