"""POSIX message queues' calls (ipc/mqueue.c; the queues are kernel_model/ipc/mqueue.py).

mq_open's checks in Linux's order: the attributes (EFAULT; EINVAL for sizes under 1 or above
the limits, the hard ones with CAP_SYS_RESOURCE: mq_attr_ok), the name (getname: EFAULT,
ENOENT when empty, ENAMETOOLONG; lookup_one_len: EACCES for ".", ".." or a slash; a component
longer than NAME_MAX ENAMETOOLONG), then prepare_open: ENOENT without O_CREAT, ENOSPC past
queues_max without CAP_SYS_RESOURCE, EEXIST with O_EXCL, EINVAL for O_WRONLY|O_RDWR, EACCES by
the queue's mode. The descriptor is close-on-exec. glibc strips the name's leading slash.

mq_timedsend and mq_timedreceive check the absolute CLOCK_REALTIME timeout first (EFAULT,
EINVAL), then: the priority (send, EINVAL at MQ_PRIO_MAX), EBADF for a descriptor that is no
queue or not open for the direction, EMSGSIZE (a message longer than mq_msgsize, a buffer
shorter than it), the message (EFAULT); a full or empty queue is EAGAIN under O_NONBLOCK, else
the call sleeps until there is room or a message (ETIMEDOUT at the timeout; a signal ends it
with EINTR, or restarts it under SA_RESTART: wq_sleep's -ERESTARTSYS). A message sent to an
empty queue that no receiver waits on, with a registered notification, sends its signal
(SI_MESGQ, the sender's pid and uid, sigev_value) and ends the registration. mq_notify registers (EBUSY when another process
has) or, with NULL, unregisters the caller's; SIGEV_THREAD names a netlink socket (sigev_signo)
and the NOTIFY_COOKIE_LEN bytes at sigev_value to send it (EFAULT, EBADF; ENOTSOCK for an fd
that is no socket, EINVAL for one that is no netlink socket: netlink_getsockbyfilp).
mq_getsetattr reads mq_attr and sets only O_NONBLOCK (EINVAL for other flags).

Not modeled: RLIMIT_MSGQUEUE's byte count per user (EMFILE), /proc/sys/fs/mqueue.
"""
import struct

from ... import errno as E
from ...creds import CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_SYS_RESOURCE
from ...errno import GuestErrno
from ...blocking import WouldBlock
from ...fs.constants import O_ACCMODE, O_CREAT, O_EXCL, O_NONBLOCK, O_RDWR, O_WRONLY
from ...ipc.mqueue import (HARD_MSGMAX, HARD_MSGSIZEMAX, MQ_PRIO_MAX, MSG_MAX, MSGSIZE_MAX,
                           NOTIFY_COOKIE_LEN, NOTIFY_WOKENUP, QUEUES_MAX, SIGEV_NONE,
                           SIGEV_SIGNAL, SIGEV_THREAD, Notification)
from ...ipc.mqueue_file import MqueueFile
from ...net.netlink import NetlinkSocket
from ...net.unix import UnixSocket
from ...process.proc import SLEEPING
from ...signals import NSIG
from ...signals.sender import uid_seen_by
from ..kinds import K
from ..registry import syscall
from ...process.namespaces import ipc_of

PATH_MAX, NAME_MAX = 4096, 255
SI_MESGQ = -3
MAY_READ, MAY_WRITE = 4, 2
NS = 1_000_000_000


def _queues(ctx):
    return ipc_of(ctx.kernel, ctx.proc).mqueues


def _name(ctx, addr: int) -> bytes:
    name = ctx.read_cstr(addr, PATH_MAX)
    if len(name) >= PATH_MAX:
        raise GuestErrno(E.ENAMETOOLONG)
    if not name:
        raise GuestErrno(E.ENOENT)
    if name in (b".", b"..") or b"/" in name:
        raise GuestErrno(E.EACCES)
    if len(name) > NAME_MAX:
        raise GuestErrno(E.ENAMETOOLONG)
    return name


def _attr(ctx, addr: int) -> tuple[int, ...]:
    """struct mq_attr: mq_flags, mq_maxmsg, mq_msgsize, mq_curmsgs (longs), 4 reserved."""
    fmt = "<4q" if ctx.word == 8 else "<4i"
    return struct.unpack(fmt, ctx.read(addr, 8 * ctx.word)[:struct.calcsize(fmt)])


def _check_attr(ctx, maxmsg: int, msgsize: int) -> None:
    """mq_attr_ok."""
    if maxmsg <= 0 or msgsize <= 0:
        raise GuestErrno(E.EINVAL)
    privileged = ctx.proc.creds.capable(CAP_SYS_RESOURCE)
    if maxmsg > (HARD_MSGMAX if privileged else MSG_MAX) or \
            msgsize > (HARD_MSGSIZEMAX if privileged else MSGSIZE_MAX):
        raise GuestErrno(E.EINVAL)


def _permitted(ctx, queue, want: int) -> None:
    """inode_permission on the queue's inode (generic_permission)."""
    creds = ctx.proc.creds
    if creds.fsuid == queue.uid:
        granted = queue.mode >> 6
    elif creds.fsgid == queue.gid or queue.gid in ctx.proc.groups:
        granted = queue.mode >> 3
    else:
        granted = queue.mode
    if want & ~granted & 0o7 and not creds.capable(CAP_DAC_OVERRIDE):
        raise GuestErrno(E.EACCES)


@syscall("mq_open", args=(("name", K.PATH), ("oflag", K.OPEN_FLAGS), ("mode", K.MODE),
                          ("attr", K.PTR)))
def sys_mq_open(ctx, name_addr, oflag, mode, attr_addr):
    oflag = ctx.int32(oflag)
    attr = _attr(ctx, attr_addr) if attr_addr and oflag & O_CREAT else None
    if attr is not None:
        _check_attr(ctx, attr[1], attr[2])
    name = _name(ctx, name_addr)
    queues = _queues(ctx)
    queue = queues.names.get(name)
    if queue is None:
        if not oflag & O_CREAT:
            raise GuestErrno(E.ENOENT)
        if len(queues.names) >= QUEUES_MAX and not ctx.proc.creds.capable(CAP_SYS_RESOURCE):
            raise GuestErrno(E.ENOSPC)
        maxmsg, msgsize = (attr[1], attr[2]) if attr is not None else (MSG_MAX, MSGSIZE_MAX)
        creds = ctx.proc.creds
        queue = queues.create(name, maxmsg, msgsize, creds.fsuid, creds.fsgid,
                              mode & 0o777 & ~ctx.proc.umask)
    else:
        if oflag & (O_CREAT | O_EXCL) == O_CREAT | O_EXCL:
            raise GuestErrno(E.EEXIST)
        if oflag & O_ACCMODE == O_RDWR | O_WRONLY:
            raise GuestErrno(E.EINVAL)
        _permitted(ctx, queue, {0: MAY_READ, O_WRONLY: MAY_WRITE,
                                O_RDWR: MAY_READ | MAY_WRITE}[oflag & O_ACCMODE])
    kernel = ctx.kernel
    f = MqueueFile(queue, oflag & (O_ACCMODE | O_NONBLOCK),
                   lambda f: _flushed(f.queue, kernel.current))
    return ctx.proc.fds.install(f, cloexec=True)


def _flushed(queue, closer) -> None:
    """mqueue_flush_file: the owner of the queue's notification closing a descriptor of it
    ends the registration."""
    n = queue.notification
    if n is not None and closer is not None and closer.process.pid == n.owner_pid:
        queue.remove_notification()


@syscall("mq_unlink", args=(("name", K.PATH),))
def sys_mq_unlink(ctx, name_addr):
    name = _name(ctx, name_addr)
    queues = _queues(ctx)
    queue = queues.names.get(name)
    if queue is None:
        raise GuestErrno(E.ENOENT)
    creds = ctx.proc.creds           # the mount's root is sticky (01777): may_delete
    if creds.fsuid not in (0, queue.uid) and not creds.capable(CAP_FOWNER):
        raise GuestErrno(E.EPERM)
    del queues.names[name]
    return 0


def _queue_file(ctx, fd: int, readable: bool) -> MqueueFile:
    f = ctx.proc.fds.get(ctx.int32(fd))
    if not isinstance(f, MqueueFile) or not (f.readable if readable else f.writable):
        raise GuestErrno(E.EBADF)
    return f


def _deadline(ctx, addr: int, fmt: str) -> int | None:
    """prepare_timeout: the absolute CLOCK_REALTIME time as a CLOCK_MONOTONIC deadline."""
    if not addr:
        return None
    sec, nsec = struct.unpack(fmt, ctx.read(addr, struct.calcsize(fmt)))
    if sec < 0 or not 0 <= nsec < NS:
        raise GuestErrno(E.EINVAL)
    clock = ctx.kernel.clock
    return clock.monotonic_ns() + max(0, sec * NS + nsec - clock.realtime_ns())


def _wait(ctx, f: MqueueFile, deadline: int | None, what: str):
    if f.flags & O_NONBLOCK:
        raise GuestErrno(E.EAGAIN)
    if deadline is not None and ctx.kernel.clock.monotonic_ns() >= deadline:
        raise GuestErrno(E.ETIMEDOUT)
    raise WouldBlock(f.queue, what, deadline_ns=deadline)


def _send(ctx, fd, msg, length, prio, timeout, fmt: str):
    deadline = _deadline(ctx, timeout, fmt)
    if prio >= MQ_PRIO_MAX:
        raise GuestErrno(E.EINVAL)
    f = _queue_file(ctx, fd, readable=False)
    queue = f.queue
    if length > queue.msgsize:
        raise GuestErrno(E.EMSGSIZE)
    data = ctx.read(msg, length)
    if queue.full:
        _wait(ctx, f, deadline, "mq_timedsend")
    queue.put(prio, data)
    if len(queue.messages) == 1 and queue.notification is not None \
            and not _receiver_waits(ctx, queue):
        _notify(ctx, queue)
    ctx.kernel.wakeup(queue)
    return 0


def _receiver_waits(ctx, queue) -> bool:
    """do_mq_timedsend hands the message to a waiting receiver (pipelined_send) and then
    notifies nobody: only a message that stays in the empty queue is news."""
    return any(t.state == SLEEPING and queue in t.wait_channels
               and (t.blocked_call or "").startswith("mq_timedreceive")
               for p in ctx.kernel.processes.values() for t in p.threads)


def _notify(ctx, queue) -> None:
    """__do_notify: the registration is used once."""
    n, queue.notification = queue.notification, None
    n.tell_thread(NOTIFY_WOKENUP)
    target = ctx.kernel.processes.get(n.owner_pid)
    if n.how != SIGEV_SIGNAL or target is None:
        return
    word = target.machine.arch.bits // 8
    head = struct.pack("<iii", n.signo, 0, SI_MESGQ) + (b"\0" * 4 if word == 8 else b"")
    # the sender as the registrant's namespaces number it: task_tgid_nr_ns over its pid
    # namespace, from_kuid_munged over its user namespace (ipc/mqueue.c __do_notify)
    body = struct.pack("<iI", target.pid_ns.nr(ctx.proc.pid), uid_seen_by(target, ctx.proc.creds.uid)) + \
        struct.pack("<Q" if word == 8 else "<I", n.value)
    ctx.kernel.signals.post(target, n.signo, info={"raw": (head + body).ljust(128, b"\0"),
                                                   "code": SI_MESGQ})


def _receive(ctx, fd, msg, length, prio_addr, timeout, fmt: str):
    deadline = _deadline(ctx, timeout, fmt)
    f = _queue_file(ctx, fd, readable=True)
    queue = f.queue
    if length < queue.msgsize:
        raise GuestErrno(E.EMSGSIZE)
    if not queue.messages:
        _wait(ctx, f, deadline, "mq_timedreceive")
    prio, data = queue.take()
    ctx.kernel.wakeup(queue)
    if prio_addr:
        ctx.write(prio_addr, struct.pack("<I", prio))     # a fault loses the message, as Linux
    ctx.write(msg, data)
    return len(data)


MQ_ARGS = (("mqdes", K.FD), ("msg", K.PTR), ("len", K.ULONG), ("prio", K.UINT), ("timeout", K.PTR))
MQ_RECV_ARGS = (("mqdes", K.FD), ("msg", K.PTR), ("len", K.ULONG), ("prio", K.PTR),
                ("timeout", K.PTR))


@syscall("mq_timedsend", args=MQ_ARGS)
def sys_mq_timedsend(ctx, fd, msg, length, prio, timeout):
    return _send(ctx, fd, msg, length, prio & 0xFFFFFFFF, timeout, "<qq" if ctx.word == 8 else "<ii")


@syscall("mq_timedsend_time64", args=MQ_ARGS)
def sys_mq_timedsend_time64(ctx, fd, msg, length, prio, timeout):
    return _send(ctx, fd, msg, length, prio & 0xFFFFFFFF, timeout, "<qq")


@syscall("mq_timedreceive", args=MQ_RECV_ARGS)
def sys_mq_timedreceive(ctx, fd, msg, length, prio, timeout):
    return _receive(ctx, fd, msg, length, prio, timeout, "<qq" if ctx.word == 8 else "<ii")


@syscall("mq_timedreceive_time64", args=MQ_RECV_ARGS)
def sys_mq_timedreceive_time64(ctx, fd, msg, length, prio, timeout):
    return _receive(ctx, fd, msg, length, prio, timeout, "<qq")


def _sigevent(ctx, addr: int) -> tuple[int, int, int]:
    """struct sigevent's sigev_value, sigev_signo, sigev_notify."""
    if ctx.word == 8:
        return struct.unpack("<Qii", ctx.read(addr, 16))
    return struct.unpack("<Iii", ctx.read(addr, 12))


@syscall("mq_notify", args=(("mqdes", K.FD), ("sevp", K.PTR)))
def sys_mq_notify(ctx, fd, sevp):
    event = _sigevent(ctx, sevp) if sevp else None
    sock = cookie = None
    if event is not None:
        value, signo, how = event
        if how not in (SIGEV_NONE, SIGEV_SIGNAL, SIGEV_THREAD):
            raise GuestErrno(E.EINVAL)
        if how == SIGEV_SIGNAL and not 0 <= signo <= NSIG:
            raise GuestErrno(E.EINVAL)
        if how == SIGEV_THREAD:
            cookie = ctx.read(value, NOTIFY_COOKIE_LEN)
            sock = _netlink_socket(ctx, signo)
    f = ctx.proc.fds.get(ctx.int32(fd))
    if not isinstance(f, MqueueFile):
        raise GuestErrno(E.EBADF)
    queue, pid = f.queue, ctx.proc.pid
    if event is None:
        if queue.notification is not None and queue.notification.owner_pid == pid:
            queue.remove_notification()
        return 0
    if queue.notification is not None:
        raise GuestErrno(E.EBUSY)
    queue.notification = Notification(pid, how, signo if how == SIGEV_SIGNAL else 0, value,
                                      sock, cookie or b"")
    return 0


def _netlink_socket(ctx, fd: int):
    """netlink_getsockbyfilp(): EBADF, ENOTSOCK for a file that is no socket, EINVAL for a
    socket of another family."""
    f = ctx.proc.fds.get(fd)
    if not isinstance(f, UnixSocket):
        raise GuestErrno(E.ENOTSOCK)
    if not isinstance(f, NetlinkSocket):
        raise GuestErrno(E.EINVAL)
    return f


@syscall("mq_getsetattr", args=(("mqdes", K.FD), ("newattr", K.PTR), ("oldattr", K.PTR)))
def sys_mq_getsetattr(ctx, fd, new_addr, old_addr):
    new = _attr(ctx, new_addr) if new_addr else None
    if new is not None and new[0] & ~O_NONBLOCK:
        raise GuestErrno(E.EINVAL)
    f = ctx.proc.fds.get(ctx.int32(fd))
    if not isinstance(f, MqueueFile):
        raise GuestErrno(E.EBADF)
    queue = f.queue
    old = (f.flags & O_NONBLOCK, queue.maxmsg, queue.msgsize, len(queue.messages))
    if new is not None:
        f.flags = f.flags & ~O_NONBLOCK | new[0] & O_NONBLOCK
    if old_addr:
        fmt = "<4q" if ctx.word == 8 else "<4i"
        ctx.write(old_addr, struct.pack(fmt, *old).ljust(8 * ctx.word, b"\0"))
    return 0
