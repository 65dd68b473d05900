"""A stream socketpair carries every byte, in order and intact, whatever the writes' and reads'
sizes and however they interleave (issue 32).

Each example is a schedule of operations on the two ends of one AF_UNIX stream pair (the
kernel model's UnixSocket, with a drawn SO_SNDBUF so that the peer's queue fills often):
writes of drawn sizes in either direction, reads of drawn sizes, peeks, and MSG_WAITALL
reads. A blocking operation that cannot go on raises WouldBlock, as the dispatcher would put
the thread to sleep; it is simply tried again at a later step of the schedule, as the woken
call is executed again. Every example ends by filling the queue until a writer would block
(the case where a short count is returned) and draining both directions. The oracle: what
each end read is exactly the prefix of what the other wrote.
"""
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from kernel_model.blocking import WouldBlock
from kernel_model.net.constants import MSG_PEEK, MSG_WAITALL, SOCK_STREAM
from kernel_model.net.unix import UnixSocket, creds_of, pair

OPERATIONS = st.lists(st.tuples(st.sampled_from(["write", "read", "peek", "waitall"]),
                                st.booleans(), st.integers(0, 9000)), max_size=60)


class End:
    """One side: its socket, the bytes it has written and read, and a pending operation."""

    def __init__(self, sock: UnixSocket, tag: int):
        self.sock = sock
        self.tag = tag
        self.written = bytearray()
        self.read = bytearray()

    def next_bytes(self, n: int) -> bytes:
        start = len(self.written)
        return bytes((self.tag * 101 + i * 7 + (i >> 8)) & 0xFF for i in range(start, start + n))


def make_pair(sndbuf: int) -> tuple[End, End, list]:
    woken: list = []
    kernel = SimpleNamespace(wakeup=woken.append, current=None)
    a, b = UnixSocket(kernel, SOCK_STREAM, 1), UnixSocket(kernel, SOCK_STREAM, 2)
    pair(a, b)
    a.options.sndbuf = b.options.sndbuf = sndbuf
    return End(a, 1), End(b, 2), woken


def step(ends, kind: str, forward: bool, size: int, stats) -> None:
    me, other = ends if forward else ends[::-1]
    try:
        if kind == "write":
            count = me.sock.send(me.next_bytes(size), 0, creds_of(SimpleNamespace(pid=1)))
            me.written += me.next_bytes(count)
            stats["short"] += count < size
        elif kind == "peek":
            data = other.sock.recv(size, MSG_PEEK).data
            assert bytes(data) == bytes(me.written[len(other.read):len(other.read) + len(data)])
        else:
            flags = MSG_WAITALL if kind == "waitall" else 0
            other.read += other.sock.recv(size, flags).data
    except WouldBlock:
        stats["blocked"] += 1


@settings(max_examples=150, deadline=None)
@given(sndbuf=st.sampled_from([4608, 8192, 65536]), schedule=OPERATIONS)
def test_stream_pair_delivers_every_byte_in_order(sndbuf, schedule):
    a, b, _ = make_pair(sndbuf)
    stats = {"short": 0, "blocked": 0}
    for kind, forward, size in schedule:
        step((a, b), kind, forward, size, stats)
    # Fill a -> b until the writer would block: the full queue is reached in every example.
    while True:
        before = stats["blocked"]
        step((a, b), "write", True, 3000, stats)
        if stats["blocked"] > before:
            break
    # full: the writer's charge (the true size of its queued pieces) reached its SO_SNDBUF
    assert a.sock.in_flight >= sndbuf and b.sock.queue.buffered > 0 and stats["blocked"] >= 1
    for end, other in ((a, b), (b, a)):
        while other.sock.queue:
            other.read += other.sock.recv(5000, 0).data
        assert bytes(other.read) == bytes(end.written)
