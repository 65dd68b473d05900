"""eventfd/eventfd2 and the epoll calls over a fake context: counts, blocking, the interest
list's errors, level- and edge-triggered reports, one-shot items, rotation, and the sleep on
every watched file's channel."""
import struct

import pytest

from kernel_model import errno as E
from kernel_model.blocking import WouldBlock
from kernel_model.errno import GuestErrno
from kernel_model.fs.epoll import EPOLLET, EPOLLONESHOT
from kernel_model.fs.pipe import Pipe
from kernel_model.net.constants import SOCK_STREAM
from kernel_model.readiness import POLLIN, POLLOUT, file_events
from kernel_model.syscalls.impls.epoll import (sys_epoll_create, sys_epoll_create1,
                                               sys_epoll_ctl, sys_epoll_pwait, sys_epoll_wait)
from kernel_model.syscalls.impls.eventfd import sys_eventfd, sys_eventfd2
from kernel_model.syscalls.impls.poll import sys_poll
from kernel_model.syscalls.impls.sockets import sys_socketpair

from .socketctx import AF_UNIX, DATA, SV, pair_fds, socket_ctx

EV = DATA                  # one struct epoll_event for epoll_ctl
EVENTS = DATA + 0x100      # epoll_wait's array
ADD, DEL, MOD = 1, 2, 3


def errno_of(call, *args):
    with pytest.raises(GuestErrno) as info:
        call(*args)
    return info.value.errno


def counter(ctx, fd):
    return struct.unpack("<Q", ctx.proc.fds.get(fd).read(8))[0]


def add(ctx, ep, fd, events, data, op=ADD):
    ctx.write(EV, struct.pack("<IQ", events, data))
    return sys_epoll_ctl(ctx, ep, op, fd, EV)


def wait(ctx, ep, maxevents=8, timeout=0):
    n = sys_epoll_wait(ctx, ep, EVENTS, maxevents, timeout)
    return [struct.unpack_from("<IQ", ctx.read(EVENTS + 12 * i, 12)) for i in range(n)]


# ---- eventfd ---------------------------------------------------------------------------------
def test_eventfd_counts_and_semaphore():
    ctx = socket_ctx()
    fd = sys_eventfd2(ctx, 3, 0o4000)                      # EFD_NONBLOCK
    f = ctx.proc.fds.get(fd)
    assert f.write(struct.pack("<Q", 4)) == 8
    assert counter(ctx, fd) == 7
    assert errno_of(f.read, 8) == E.EAGAIN
    sem_fd = sys_eventfd2(ctx, 2, 1)                       # EFD_SEMAPHORE
    sem = ctx.proc.fds.get(sem_fd)
    assert [counter(ctx, sem_fd) for _ in range(2)] == [1, 1]
    with pytest.raises(WouldBlock) as info:
        sem.read(8)
    assert info.value.channel is sem
    assert f.path == b"anon_inode:[eventfd]"


def test_eventfd_errors_and_overflow():
    ctx = socket_ctx()
    f = ctx.proc.fds.get(sys_eventfd(ctx, 0))
    assert errno_of(f.read, 4) == E.EINVAL
    assert errno_of(f.write, b"1234") == E.EINVAL
    assert errno_of(f.write, struct.pack("<Q", 2**64 - 1)) == E.EINVAL
    assert errno_of(sys_eventfd2, ctx, 0, 2) == E.EINVAL
    assert file_events(f) == POLLOUT | 0x100
    f.write(struct.pack("<Q", 2**64 - 2))
    assert file_events(f) == POLLIN | 0x40                 # full: no longer writable
    with pytest.raises(WouldBlock):
        f.write(struct.pack("<Q", 1))


# ---- epoll_ctl -------------------------------------------------------------------------------
def test_epoll_ctl_errors():
    ctx = socket_ctx()
    ep = sys_epoll_create1(ctx, 0o2000000)
    assert ctx.proc.fds.entry(ep).cloexec
    efd = sys_eventfd(ctx, 0)
    assert add(ctx, ep, efd, POLLIN, 1) == 0
    assert errno_of(add, ctx, ep, efd, POLLIN, 1) == E.EEXIST
    assert errno_of(add, ctx, ep, ep, POLLIN, 1) == E.EINVAL        # itself
    assert errno_of(add, ctx, efd, efd, POLLIN, 1) == E.EINVAL      # not an epoll fd
    assert errno_of(add, ctx, ep, 99, POLLIN, 1) == E.EBADF
    other = sys_epoll_create(ctx, 1)
    assert add(ctx, other, ep, POLLIN, 2) == 0
    assert errno_of(add, ctx, ep, other, POLLIN, 1) == E.ELOOP
    assert sys_epoll_ctl(ctx, ep, DEL, efd, 0) == 0
    assert errno_of(sys_epoll_ctl, ctx, ep, DEL, efd, 0) == E.ENOENT
    assert errno_of(add, ctx, ep, efd, POLLIN, 1, MOD) == E.ENOENT
    assert errno_of(sys_epoll_create, ctx, 0) == E.EINVAL
    assert errno_of(sys_epoll_create1, ctx, 1) == E.EINVAL


# ---- epoll_wait ------------------------------------------------------------------------------
def test_level_triggered_reports_and_sleep():
    ctx = socket_ctx()
    ep = sys_epoll_create1(ctx, 0)
    sys_socketpair(ctx, AF_UNIX, SOCK_STREAM, 0, SV)
    a, b = pair_fds(ctx)
    add(ctx, ep, b, POLLIN, 0xB)
    assert wait(ctx, ep) == []                                     # timeout 0: nothing yet
    with pytest.raises(WouldBlock) as info:
        sys_epoll_wait(ctx, ep, EVENTS, 8, -1)
    assert info.value.channel == [ctx.proc.fds.get(b)]
    ctx.proc.fds.get(a).write(b"x")
    assert wait(ctx, ep) == [(POLLIN, 0xB)]
    assert wait(ctx, ep) == [(POLLIN, 0xB)]                        # still readable: again
    ctx.proc.fds.close(a)
    assert wait(ctx, ep) == [(POLLIN | 0x10, 0xB)]                 # POLLHUP, asked or not


def test_oneshot_and_edge_triggered():
    ctx = socket_ctx()
    ep = sys_epoll_create1(ctx, 0)
    one, edge = sys_eventfd(ctx, 1), sys_eventfd(ctx, 1)
    add(ctx, ep, one, POLLIN | EPOLLONESHOT, 1)
    add(ctx, ep, edge, POLLIN | EPOLLET, 2)
    assert sorted(wait(ctx, ep)) == [(POLLIN, 1), (POLLIN, 2)]
    assert wait(ctx, ep) == []                                     # neither again
    counter(ctx, edge)                                             # drained: the edge rearms
    ctx.proc.fds.get(edge).write(struct.pack("<Q", 1))
    assert wait(ctx, ep) == [(POLLIN, 2)]
    add(ctx, ep, one, POLLIN, 1, MOD)                              # re-armed by MOD
    assert wait(ctx, ep) == [(POLLIN, 1)]


def test_ready_items_take_turns_when_maxevents_is_small():
    ctx = socket_ctx()
    ep = sys_epoll_create1(ctx, 0)
    for data in range(3):
        add(ctx, ep, sys_eventfd(ctx, 1), POLLIN, data)
    seen = [wait(ctx, ep, maxevents=2) for _ in range(3)]
    assert [[d for _, d in batch] for batch in seen] == [[0, 1], [2, 0], [1, 2]]


def test_closed_file_leaves_the_set_and_bad_arguments():
    ctx = socket_ctx()
    ep = sys_epoll_create1(ctx, 0)
    efd = sys_eventfd(ctx, 1)
    add(ctx, ep, efd, POLLIN, 5)
    ctx.proc.fds.close(efd)
    assert wait(ctx, ep) == []
    assert errno_of(sys_epoll_wait, ctx, ep, EVENTS, 0, 0) == E.EINVAL
    assert errno_of(sys_epoll_wait, ctx, ep, 0x1000, 1, 0) == E.EFAULT
    assert errno_of(sys_epoll_wait, ctx, sys_eventfd(ctx, 0), EVENTS, 1, 0) == E.EINVAL
    assert errno_of(sys_epoll_pwait, ctx, ep, EVENTS, 1, 0, DATA + 0x300, 4) == E.EINVAL


def test_poll_on_an_epoll_fd_sleeps_on_what_it_watches():
    ctx = socket_ctx()
    ep = sys_epoll_create1(ctx, 0)
    efd = sys_eventfd(ctx, 0)
    add(ctx, ep, efd, POLLIN, 1)
    ctx.write(DATA + 0x400, struct.pack("<ihh", ep, POLLIN, 0))
    with pytest.raises(WouldBlock) as info:
        sys_poll(ctx, DATA + 0x400, 1, -1)
    assert info.value.channel == [ctx.proc.fds.get(efd)]
    ctx.proc.fds.get(efd).write(struct.pack("<Q", 1))
    assert sys_poll(ctx, DATA + 0x400, 1, 0) == 1


def test_nesting_deeper_than_four_is_einval():
    """epoll_ctl04: a chain of five nested epoll instances cannot go into a sixth."""
    ctx = socket_ctx()
    chain = [sys_epoll_create1(ctx, 0)]
    for _ in range(4):
        outer = sys_epoll_create1(ctx, 0)
        assert add(ctx, outer, chain[-1], POLLIN, 0) == 0
        chain.append(outer)
    assert errno_of(add, ctx, sys_epoll_create1(ctx, 0), chain[-1], POLLIN, 0) == E.EINVAL


def test_recvmsg_with_too_many_iovecs_is_emsgsize():
    from kernel_model.syscalls.impls.sockmsg import sys_recvmsg
    ctx = socket_ctx()
    sys_socketpair(ctx, AF_UNIX, SOCK_STREAM, 0, SV)
    ctx.write(DATA + 0x500, struct.pack("<QixxxxQQQQixxxx", 0, 0, DATA, 1025, 0, 0, 0))
    assert errno_of(sys_recvmsg, ctx, pair_fds(ctx)[1], DATA + 0x500, 0) == E.EMSGSIZE
