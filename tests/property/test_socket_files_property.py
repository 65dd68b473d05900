"""Files passed with SCM_RIGHTS are neither lost nor closed twice, whatever is received,
peeked, truncated or left unread (issue 32).

Each example opens a socket pair of a drawn type and a few pipes, then runs a drawn schedule:
sends that carry some of the pipes' read ends (the sender closes its own fd right after, as a
program handing a file over does), receives that take a message (its files installed as fds),
peeks (duplicates), and closes of received fds. At the end both sockets close. The oracle is
reference counting: while a read end is held by an fd or a queued message the pipe counts a
reader, and once everything is closed no pipe has one left and every read end's reference
count is exactly 0 (above: a leak; below: a double release).
Every example passes at least one file and leaves one in flight when the sockets close.
"""
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from kernel_model.blocking import WouldBlock
from kernel_model.errno import GuestErrno
from kernel_model.fdtable import FdTable, release_file
from kernel_model.fs.pipe import Pipe
from kernel_model.net.constants import MSG_PEEK, SOCK_DGRAM, SOCK_SEQPACKET, SOCK_STREAM
from kernel_model.net.unix import UnixSocket, creds_of, pair

STEPS = st.lists(st.tuples(st.sampled_from(["send", "recv", "peek", "close"]),
                           st.integers(0, 3), st.integers(0, 3)), max_size=40)
CREDS = creds_of(SimpleNamespace(pid=1))


class Harness:
    def __init__(self, sock_type: int, pipes: int):
        kernel = SimpleNamespace(wakeup=lambda channel: None, current=None)
        self.fds = FdTable()
        self.pipes = [Pipe(kernel.wakeup, 10 + i) for i in range(pipes)]
        a, b = UnixSocket(kernel, sock_type, 1), UnixSocket(kernel, sock_type, 2)
        pair(a, b)
        self.a, self.b = self.fds.install(a), self.fds.install(b)
        self.received: list[int] = []
        self.ends: list = []
        self.passed = 0

    def send(self, which: int, count: int) -> None:
        ends = [self.pipes[(which + i) % len(self.pipes)].read_end() for i in range(count)]
        self.ends += ends
        fds = [self.fds.install(end) for end in ends]       # the sender's own fds
        try:
            self.fds.get(self.a).send(b"m", 0, CREDS, files=[self.fds.get(f) for f in fds])
            self.passed += len(fds)
        except (GuestErrno, WouldBlock):
            pass
        for fd in fds:
            self.fds.close(fd)                               # handed over: the message holds it

    def receive(self, flags: int) -> None:
        try:
            taken = self.fds.get(self.b).recv(16, flags)
        except (GuestErrno, WouldBlock):
            return
        for f in taken.files:
            self.received.append(self.fds.install(f))
            release_file(f)                                  # the fd holds it now

    def close_received(self, index: int) -> None:
        if self.received:
            self.fds.close(self.received.pop(index % len(self.received)))


@settings(max_examples=150, deadline=None)
@given(sock_type=st.sampled_from([SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET]),
       pipes=st.integers(1, 4), steps=STEPS)
def test_passed_files_are_released_exactly_once(sock_type, pipes, steps):
    h = Harness(sock_type, pipes)
    for kind, x, y in steps:
        if kind == "send":
            h.send(x, y)
        elif kind == "recv":
            h.receive(0)
        elif kind == "peek":
            h.receive(MSG_PEEK)
        else:
            h.close_received(x)
    h.send(0, 1)                                             # one file still in flight
    assert h.passed >= 1 and h.fds.get(h.b).queue
    assert sum(p.readers for p in h.pipes) >= 1
    h.fds.close_all()
    assert [p.readers for p in h.pipes] == [0] * pipes
    assert all(end.refs == 0 and end.closed for end in h.ends)   # none kept, none released twice
