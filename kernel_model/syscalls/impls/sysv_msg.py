"""msgget, msgsnd, msgrcv, msgctl (ipc/msg.c) over the run's queues (kernel_model/ipc/msg.py).

A sender finding the queue full, or a receiver finding no message it wants, sleeps on the
queue (blocking.py: the call runs again when a message comes or goes); IPC_NOWAIT makes that
EAGAIN or ENOMSG. A sleeper whose queue was removed meanwhile gets EIDRM, as Linux wakes it
with: the id it waited on is kept in thread.restart across the re-executions.
"""
import struct

from ... import errno as E
from ...blocking import WouldBlock
from ...errno import GuestErrno
from ...ipc.ids import (IPC_INFO, IPC_NOWAIT, IPC_RMID, IPC_SET, IPC_STAT,
                        S_IRUGO, S_IWUGO, check_owner, ipcget, ipcperms)
from ...ipc.layouts import ds_size, pack_msqid, parse_cmd, update_perm
from ...ipc.limits import MSGMNB, MSGMNI
from ...ipc.msg import MSG_COPY, MSG_NOERROR, Message, MessageQueue, check_receive_flags
from ...creds import CAP_SYS_RESOURCE
from ..kinds import K
from ..registry import syscall
from ...process.namespaces import ipc_of

MSG_STAT, MSG_INFO, MSG_STAT_ANY = 11, 12, 13
WAITING = "sysv_wait"            # thread.restart: the id a blocked IPC call sleeps on


def now_seconds(ctx) -> int:
    return ctx.kernel.clock.realtime_ns() // 10**9


def creds_groups(ctx):
    return ctx.proc.creds, tuple(ctx.proc.groups)


def lookup(ctx, ids, ident: int):
    """The object of id `ident`; EIDRM instead of EINVAL for the one this thread slept on."""
    waited = ctx.thread.restart.pop(WAITING, None)
    try:
        return ids.find(ident)
    except GuestErrno:
        if waited == ident:
            raise GuestErrno(E.EIDRM) from None
        raise


def sleep_on(ctx, obj, reason: str, deadline_ns: int | None = None):
    ctx.thread.restart[WAITING] = obj.perm.id
    raise WouldBlock(obj, reason, deadline_ns=deadline_ns)


def check_perm(ctx, obj, flag: int) -> None:
    if not ipcperms(obj.perm, *creds_groups(ctx), flag):
        raise GuestErrno(E.EACCES)


@syscall("msgget", args=(("key", K.HEX), ("msgflg", K.OCTAL)))
def sys_msgget(ctx, key, flags):
    def make(perm):
        return MessageQueue(perm, now_seconds(ctx), ipc_of(ctx.kernel, ctx.proc).limits.msgmnb)   # newque
    return ipcget(ipc_of(ctx.kernel, ctx.proc).msg, key & 0xFFFFFFFF, ctx.int32(flags), *creds_groups(ctx),
                  make, lambda queue: None)


@syscall("msgsnd", args=(("msqid", K.INT), ("msgp", K.PTR), ("msgsz", K.ULONG),
                         ("msgflg", K.OCTAL)))
def sys_msgsnd(ctx, msqid, msgp, size, flags):
    msqid, flags, size = ctx.int32(msqid), ctx.int32(flags), ctx.signed(size)
    if size > ipc_of(ctx.kernel, ctx.proc).limits.msgmax or size < 0 or msqid < 0:
        raise GuestErrno(E.EINVAL)
    mtype = ctx.signed(ctx.read_word(msgp))
    if mtype < 1:
        raise GuestErrno(E.EINVAL)
    text = ctx.read(msgp + ctx.word, size)
    queue = lookup(ctx, ipc_of(ctx.kernel, ctx.proc).msg, msqid)
    check_perm(ctx, queue, S_IWUGO)
    if not queue.fits(size):
        if flags & IPC_NOWAIT:
            raise GuestErrno(E.EAGAIN)
        sleep_on(ctx, queue, "msgsnd on a full queue")
    queue.messages.append(Message(mtype, text))
    queue.lspid, queue.stime = ctx.proc.pid, now_seconds(ctx)
    ctx.kernel.wakeup(queue)
    return 0


@syscall("msgrcv", args=(("msqid", K.INT), ("msgp", K.PTR), ("msgsz", K.ULONG),
                         ("msgtyp", K.LONG), ("msgflg", K.OCTAL)))
def sys_msgrcv(ctx, msqid, msgp, size, mtype, flags):
    msqid, flags, size, mtype = ctx.int32(msqid), ctx.int32(flags), ctx.signed(size), ctx.signed(mtype)
    if msqid < 0 or size < 0:
        raise GuestErrno(E.EINVAL)
    check_receive_flags(flags)
    queue = lookup(ctx, ipc_of(ctx.kernel, ctx.proc).msg, msqid)
    check_perm(ctx, queue, S_IRUGO)
    index = queue.select(mtype, flags)
    if index is None:
        if flags & IPC_NOWAIT:
            raise GuestErrno(E.ENOMSG)
        sleep_on(ctx, queue, "msgrcv on an empty queue")
    message = queue.messages[index]
    if len(message.text) > size and not flags & MSG_NOERROR:
        raise GuestErrno(E.E2BIG)
    if not flags & MSG_COPY:
        del queue.messages[index]
        queue.lrpid, queue.rtime = ctx.proc.pid, now_seconds(ctx)
        ctx.kernel.wakeup(queue)
    text = message.text[:size]
    ctx.write_word(msgp, message.mtype)
    ctx.write(msgp + ctx.word, text)
    return len(text)


def _msginfo(ctx, cmd: int, buf: int) -> int:
    """struct msginfo: IPC_INFO the limits, MSG_INFO the use (queues, messages, bytes)."""
    ids = ipc_of(ctx.kernel, ctx.proc).msg
    limits = ipc_of(ctx.kernel, ctx.proc).limits
    # msg_fill_info: MSGPOOL, MSGMAP and MSGTQL are the uapi constants, the rest the namespace's
    pool, mapped, tql = MSGMNI * MSGMNB // 1024, MSGMNB, MSGMNB
    if cmd == MSG_INFO:
        queues = list(ids.objects.values())
        pool, mapped = len(queues), sum(len(q.messages) for q in queues)
        tql = sum(q.cbytes for q in queues)
    ctx.write(buf, struct.pack("<7iH2x", pool, mapped, limits.msgmax, limits.msgmnb,
                               limits.msgmni, 16, tql, 0xFFFF))
    return max(ids.max_index(), 0)


def _stat(ctx, queue, buf: int) -> None:
    ctx.write(buf, pack_msqid(ctx.abi, queue.perm, queue.stime, queue.rtime, queue.ctime,
                              queue.cbytes, len(queue.messages), queue.qbytes, queue.lspid,
                              queue.lrpid))


@syscall("msgctl", args=(("msqid", K.INT), ("cmd", K.INT), ("buf", K.PTR)))
def sys_msgctl(ctx, msqid, cmd, buf):
    return msgctl_with(ctx, msqid, cmd, buf, old_api=False)


def msgctl_with(ctx, msqid, cmd, buf, *, old_api: bool):
    """msgctl; `old_api`: reached through i386's ipc(2), which parses the IPC_64 version
    (layouts.parse_cmd)."""
    msqid, cmd = ctx.int32(msqid), parse_cmd(ctx.abi, cmd, "msg", old_api)
    ids = ipc_of(ctx.kernel, ctx.proc).msg
    if msqid < 0 and cmd not in (IPC_INFO, MSG_INFO):
        raise GuestErrno(E.EINVAL)
    if cmd in (IPC_INFO, MSG_INFO):
        return _msginfo(ctx, cmd, buf)
    if cmd in (MSG_STAT, MSG_STAT_ANY):
        queue = ids.by_index(msqid)
        if cmd == MSG_STAT:
            check_perm(ctx, queue, S_IRUGO)
        _stat(ctx, queue, buf)
        return queue.perm.id
    if cmd == IPC_STAT:
        queue = ids.find(msqid)
        check_perm(ctx, queue, S_IRUGO)
        _stat(ctx, queue, buf)
        return 0
    if cmd == IPC_SET:
        raw = ctx.read(buf, ds_size(ctx.abi, "msg"))
        queue = ids.find(msqid)
        check_owner(queue.perm, ctx.proc.creds)
        _set(ctx, queue, raw)
        return 0
    if cmd == IPC_RMID:
        queue = ids.find(msqid)
        check_owner(queue.perm, ctx.proc.creds)
        ids.remove(queue)
        ctx.kernel.wakeup(queue)
        return 0
    raise GuestErrno(E.EINVAL)


def _set(ctx, queue, raw: bytes) -> None:
    """msgctl_down IPC_SET: msg_qbytes above msgmnb needs CAP_SYS_RESOURCE (EPERM)."""
    qbytes_at = {"x86_64": 48 + 24 + 16, "i386": 36 + 24 + 8}[ctx.abi]
    qbytes = int.from_bytes(raw[qbytes_at:qbytes_at + ctx.word], "little")
    if qbytes > ipc_of(ctx.kernel, ctx.proc).limits.msgmnb and not ctx.proc.creds.capable(CAP_SYS_RESOURCE):
        raise GuestErrno(E.EPERM)
    queue.qbytes = qbytes
    update_perm(queue.perm, ctx.abi, raw)
    queue.ctime = now_seconds(ctx)
    ctx.kernel.wakeup(queue)

