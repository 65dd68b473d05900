"""System V message queues (ipc/msg.c): the queue and what msgsnd and msgrcv do to it.

Limits are the namespace's (limits.py: msgmax, the largest message; msgmnb, a new queue's
msg_qbytes, which IPC_SET may lower, or raise past msgmnb with CAP_SYS_RESOURCE; msgmni queues). A queue is full when its bytes or its message count would pass msg_qbytes
(msg.c msg_fits_inqueue).
"""
from dataclasses import dataclass, field

from .. import errno as E
from ..errno import GuestErrno
from .ids import IpcIds, IpcPerm
MSG_NOERROR, MSG_EXCEPT, MSG_COPY = 0o10000, 0o20000, 0o40000


@dataclass(eq=False)
class Message:
    mtype: int
    text: bytes


@dataclass(eq=False)
class MessageQueue:
    perm: IpcPerm
    ctime: int
    qbytes: int
    messages: list = field(default_factory=list)
    stime: int = 0
    rtime: int = 0
    lspid: int = 0
    lrpid: int = 0

    @property
    def cbytes(self) -> int:
        return sum(len(m.text) for m in self.messages)

    def fits(self, size: int) -> bool:
        return self.cbytes + size <= self.qbytes and len(self.messages) + 1 <= self.qbytes

    def select(self, mtype: int, flags: int) -> int | None:
        """The index of the message msgrcv takes (msg.c find_msg / convert_mode)."""
        if flags & MSG_COPY:
            return mtype if 0 <= mtype < len(self.messages) else None
        if mtype == 0:
            return 0 if self.messages else None
        if mtype < 0:
            candidates = [(m.mtype, i) for i, m in enumerate(self.messages) if m.mtype <= -mtype]
            return min(candidates)[1] if candidates else None
        for i, m in enumerate(self.messages):
            if (m.mtype != mtype) if flags & MSG_EXCEPT else (m.mtype == mtype):
                return i
        return None


def new_queues(msgmni) -> IpcIds:
    return IpcIds(msgmni)


def check_receive_flags(flags: int) -> None:
    """do_msgrcv(): MSG_COPY needs IPC_NOWAIT and excludes MSG_EXCEPT (EINVAL)."""
    if flags & MSG_COPY and (flags & MSG_EXCEPT or not flags & 0o4000):
        raise GuestErrno(E.EINVAL)
