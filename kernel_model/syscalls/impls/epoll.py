"""epoll_create, epoll_create1, epoll_ctl, epoll_wait, epoll_pwait, epoll_pwait2
(fs/eventpoll.c) over kernel_model/fs/epoll.py.

epoll_wait sleeps like poll (timedwait.py): on the wait channels of every watched file at
once, executed again after any changes, its deadline kept across executions; the events are
written only when it completes.
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ...fs.constants import O_CLOEXEC
from ...fs.epoll import EPOLLEXCLUSIVE, Epoll
from ..kinds import K
from ..registry import syscall
from .poll import TIME64, _Waiters, _read_sigmask, _read_time
from .timedwait import TimedWait

EPOLL_CTL_ADD, EPOLL_CTL_DEL, EPOLL_CTL_MOD = 1, 2, 3
EPOLL_EVENT = struct.Struct("<IQ")       # struct epoll_event, packed on x86 (12 bytes)
EP_MAX_EVENTS = 0x7FFFFFFF // EPOLL_EVENT.size


def _epoll_of(ctx, epfd: int) -> Epoll:
    f = ctx.proc.fds.get(ctx.int32(epfd))
    if not isinstance(f, Epoll):
        raise GuestErrno(E.EINVAL)
    return f


@syscall("epoll_create", args=(("size", K.INT),))
def sys_epoll_create(ctx, size):
    if ctx.int32(size) <= 0:
        raise GuestErrno(E.EINVAL)
    return ctx.proc.fds.install(Epoll())


@syscall("epoll_create1", args=(("flags", K.HEX),))
def sys_epoll_create1(ctx, flags):
    flags &= 0xFFFFFFFF
    if flags & ~O_CLOEXEC:
        raise GuestErrno(E.EINVAL)
    return ctx.proc.fds.install(Epoll(), cloexec=bool(flags))


@syscall("epoll_ctl", args=(("epfd", K.FD), ("op", K.INT), ("fd", K.FD), ("event", K.STRUCT)))
def sys_epoll_ctl(ctx, epfd, op, fd, event):
    op = ctx.int32(op)
    events = data = 0
    if op != EPOLL_CTL_DEL:
        events, data = EPOLL_EVENT.unpack(ctx.read(event, EPOLL_EVENT.size))
    ep = ctx.proc.fds.get(ctx.int32(epfd))
    fd = ctx.int32(fd)
    target = ctx.proc.fds.get(fd)
    _check_target(ep, target)
    if op == EPOLL_CTL_ADD:
        ep.add(fd, target, events, data)
    elif op == EPOLL_CTL_MOD:
        if events & EPOLLEXCLUSIVE:
            raise GuestErrno(E.EINVAL)
        ep.modify(fd, target, events, data)
    elif op == EPOLL_CTL_DEL:
        ep.delete(fd, target)
    else:
        raise GuestErrno(E.EINVAL)
    return 0


def _check_target(ep, target) -> None:
    """do_epoll_ctl(): a file without poll support (a regular file, a directory) is EPERM; the
    epoll fd must be one, and not the target itself (EINVAL)."""
    node = getattr(target, "node", None)
    if node is not None and (node.is_regular or node.is_dir):
        raise GuestErrno(E.EPERM)
    if not isinstance(ep, Epoll) or target is ep:
        raise GuestErrno(E.EINVAL)


@syscall("epoll_wait", args=(("epfd", K.FD), ("events", K.STRUCT), ("maxevents", K.INT),
                             ("timeout", K.INT)))
def sys_epoll_wait(ctx, epfd, events, maxevents, timeout):
    timeout_ms = ctx.int32(timeout)
    return _wait(ctx, ("epoll_wait", epfd, events, maxevents, timeout_ms), epfd, events,
                 maxevents, None if timeout_ms < 0 else timeout_ms * 10**6, None)


@syscall("epoll_pwait", args=(("epfd", K.FD), ("events", K.STRUCT), ("maxevents", K.INT),
                              ("timeout", K.INT), ("sigmask", K.STRUCT), ("sigsetsize", K.ULONG)))
def sys_epoll_pwait(ctx, epfd, events, maxevents, timeout, sigmask, sigsetsize):
    timeout_ms = ctx.int32(timeout)
    mask = _read_sigmask(ctx, sigmask, sigsetsize)
    return _wait(ctx, ("epoll_pwait", epfd, events, maxevents, timeout_ms, sigmask), epfd,
                 events, maxevents, None if timeout_ms < 0 else timeout_ms * 10**6, mask)


@syscall("epoll_pwait2", args=(("epfd", K.FD), ("events", K.STRUCT), ("maxevents", K.INT),
                               ("timeout", K.STRUCT), ("sigmask", K.STRUCT),
                               ("sigsetsize", K.ULONG)))
def sys_epoll_pwait2(ctx, epfd, events, maxevents, timeout, sigmask, sigsetsize):
    timeout_ns = _read_time(ctx, timeout, TIME64, 1) if timeout else None
    mask = _read_sigmask(ctx, sigmask, sigsetsize)
    return _wait(ctx, ("epoll_pwait2", epfd, events, maxevents, timeout, sigmask), epfd,
                 events, maxevents, timeout_ns, mask)


def _wait(ctx, key, epfd, events_addr, maxevents, timeout_ns, sigmask) -> int:
    """do_epoll_wait(): EINVAL for maxevents outside (0, EP_MAX_EVENTS], EFAULT for an
    events array that is not writable, EBADF/EINVAL for the epoll fd; then wait."""
    maxevents = ctx.int32(maxevents)
    if maxevents <= 0 or maxevents > EP_MAX_EVENTS:
        raise GuestErrno(E.EINVAL)
    if not ctx.writable(events_addr, maxevents * EPOLL_EVENT.size):
        raise GuestErrno(E.EFAULT)
    ep = _epoll_of(ctx, epfd)

    def body(wait: TimedWait) -> int:
        ready = ep.harvest(maxevents)
        if not ready and not wait.expired:
            waiters = _Waiters()
            waiters.add(ep)
            waiters.sleep(wait, "epoll_wait")
        ctx.write(events_addr, b"".join(EPOLL_EVENT.pack(e, d) for e, d in ready))
        return len(ready)

    return TimedWait(ctx, key, timeout_ns, sigmask).run(body)



