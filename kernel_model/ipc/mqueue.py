"""POSIX message queues (ipc/mqueue.c): named queues of prioritised messages.

A queue holds at most mq_maxmsg messages of at most mq_msgsize bytes each; a receive takes the
oldest message of the highest priority (msg_get). A process may ask to be told when a message
arrives in the empty queue (mq_notify): a signal (SIGEV_SIGNAL), nothing (SIGEV_NONE), or a
message on a netlink socket (SIGEV_THREAD: the caller's NOTIFY_COOKIE_LEN bytes, their last
one set to NOTIFY_WOKENUP; glibc's helper thread reads it and starts the thread). The
registration goes once used (__do_notify) or when its process takes it back or closes one of
the queue's descriptors (remove_notification, mqueue_flush_file: a SIGEV_THREAD one sends its
cookie with NOTIFY_REMOVED). The names live in the run's IPC namespace's mqueue mount;
limits are the defaults of /proc/sys/fs/mqueue (msg_max 10, msgsize_max 8192, queues_max 256),
which CAP_SYS_RESOURCE lifts to the hard limits (HARD_MSGMAX, HARD_MSGSIZEMAX).

The queue is its own wait channel: senders waiting for room and receivers waiting for a message
are woken by every change.
"""
from dataclasses import dataclass, field
from itertools import count

MQ_PRIO_MAX = 32768
MSG_MAX, MSGSIZE_MAX, QUEUES_MAX = 10, 8192, 256
HARD_MSGMAX, HARD_MSGSIZEMAX = 65536, 16 * 1024 * 1024
SIGEV_SIGNAL, SIGEV_NONE, SIGEV_THREAD = 0, 1, 2
NOTIFY_COOKIE_LEN = 32
NOTIFY_WOKENUP, NOTIFY_REMOVED = 1, 2


@dataclass
class Notification:
    owner_pid: int                 # notify_owner: the registering thread group
    how: int                       # SIGEV_SIGNAL, SIGEV_NONE or SIGEV_THREAD
    signo: int = 0
    value: int = 0                 # sigev_value, handed back in si_value
    sock: object = None            # SIGEV_THREAD: the netlink socket told (notify_sock)
    cookie: bytes = b""            # ...and the bytes it is sent (notify_cookie)

    def tell_thread(self, code: int) -> None:
        """set_cookie() then netlink_sendskb(): the cookie, its last byte `code`."""
        if self.how == SIGEV_THREAD and self.sock is not None:
            self.sock.deliver(self.cookie[:-1] + bytes([code]))


@dataclass(eq=False)
class MessageQueue:
    name: bytes
    maxmsg: int
    msgsize: int
    uid: int
    gid: int
    mode: int
    messages: list = field(default_factory=list)     # (-prio, arrival, data): sorted
    ino: int = 0
    notification: Notification | None = None
    _arrivals: object = field(default_factory=count)

    @property
    def full(self) -> bool:
        return len(self.messages) >= self.maxmsg

    @property
    def qsize(self) -> int:
        return sum(len(data) for _, _, data in self.messages)

    def put(self, prio: int, data: bytes) -> None:
        self.messages.append((-prio, next(self._arrivals), data))
        self.messages.sort()

    def take(self) -> tuple[int, bytes]:
        neg_prio, _, data = self.messages.pop(0)
        return -neg_prio, data

    def remove_notification(self) -> None:
        n, self.notification = self.notification, None
        if n is not None:
            n.tell_thread(NOTIFY_REMOVED)

    def status_line(self) -> bytes:
        """What reading the queue's file gives (mqueue_read_file)."""
        n = self.notification
        how = n.how if n is not None else 0
        return b"QSIZE:%-10d NOTIFY:%-5d SIGNO:%-5d NOTIFY_PID:%-6d\n" % (
            self.qsize, how, n.signo if n is not None and how == SIGEV_SIGNAL else 0,
            n.owner_pid if n is not None else 0)


class Mqueues:
    """The mqueue mount's names (one IPC namespace)."""

    def __init__(self):
        self.names: dict[bytes, MessageQueue] = {}
        self._inodes = count(1)

    def create(self, name: bytes, maxmsg: int, msgsize: int, uid: int, gid: int,
               mode: int) -> MessageQueue:
        queue = MessageQueue(name, maxmsg, msgsize, uid, gid, mode, ino=next(self._inodes))
        self.names[name] = queue
        return queue
