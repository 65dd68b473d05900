"""Pipe semantics (pipe(7)): blocking, EOF, EPIPE, PIPE_BUF atomicity, short large writes,
O_NONBLOCK, wakeups on every state change, poll bits, and the stream-file interface."""
import pytest

from kernel_model import errno as E
from kernel_model.blocking import WouldBlock
from kernel_model.errno import GuestErrno
from kernel_model.errors import KernelPanic
from kernel_model.fdtable import FdTable
from kernel_model.fs.constants import O_NONBLOCK, O_RDONLY, O_WRONLY, S_IFIFO
from kernel_model.fs.pipe import PIPE_BUF, BrokenPipe, Pipe
from kernel_model.readiness import POLLERR, POLLHUP, POLLIN, POLLOUT, POLLRDNORM, POLLWRNORM


def make(capacity=65536, ino=7):
    woken = []
    pipe = Pipe(woken.append, ino, capacity)
    return pipe, pipe.read_end(), pipe.write_end(), woken


def test_bytes_come_out_in_order_and_partially():
    _, r, w, _ = make()
    assert w.write(b"hello ") == 6
    assert w.write(b"world") == 5
    assert r.read(3) == b"hel"
    assert r.available() == 8
    assert r.read(100) == b"lo world"        # what is there, not the 100 asked for


def test_read_on_empty_pipe_with_a_writer_blocks_on_the_pipe():
    pipe, r, _, _ = make(ino=42)
    with pytest.raises(WouldBlock) as info:
        r.read(10)
    assert info.value.channel is pipe
    assert info.value.reason == "read on pipe:[42]"
    assert info.value.deadline_ns is None


def test_read_after_last_writer_closed_is_eof_after_the_data():
    _, r, w, woken = make()
    w.write(b"tail")
    w.close()
    assert r.read(10) == b"tail"
    assert r.read(10) == b""
    assert r.read(10) == b""


def test_zero_length_read_returns_at_once_even_when_empty():
    _, r, _, _ = make()
    assert r.read(0) == b""


def test_nonblocking_read_on_empty_pipe_is_eagain():
    _, r, _, _ = make()
    r.flags |= O_NONBLOCK                     # as fcntl(F_SETFL) does
    with pytest.raises(GuestErrno) as info:
        r.read(1)
    assert info.value.errno == E.EAGAIN


def test_write_without_reader_is_broken_pipe_carrying_epipe():
    _, r, w, _ = make(ino=9)
    r.close()
    with pytest.raises(BrokenPipe) as info:
        w.write(b"x")
    assert isinstance(info.value, GuestErrno) and info.value.errno == E.EPIPE
    assert w.write(b"") == 0                  # a null write succeeds even then


def test_small_write_is_atomic_and_blocks_until_all_fits():
    pipe, r, w, _ = make(capacity=8192)
    assert w.write(b"a" * 5000) == 5000       # 3192 bytes free now
    with pytest.raises(WouldBlock) as info:
        w.write(b"b" * 4000)                  # <= PIPE_BUF: nothing may be written
    assert info.value.channel is pipe and info.value.reason == "write on pipe:[7]"
    assert pipe.buffered == 5000
    r.read(1000)                              # 4192 free: the 4000 now fit in one piece
    assert w.write(b"b" * 4000) == 4000
    assert pipe.buffered == 8000


def test_nonblocking_small_write_that_does_not_fit_is_eagain():
    pipe, _, w, _ = make(capacity=8192)
    w.flags |= O_NONBLOCK
    w.write(b"a" * 5000)
    with pytest.raises(GuestErrno) as info:
        w.write(b"b" * PIPE_BUF)
    assert info.value.errno == E.EAGAIN
    assert pipe.buffered == 5000


def test_large_write_writes_what_fits_and_returns_short():
    pipe, r, w, _ = make(capacity=8192)
    w.write(b"a" * 1000)
    assert w.write(b"b" * 10000) == 7192      # short count instead of a mid-call sleep
    assert pipe.free == 0
    with pytest.raises(WouldBlock):
        w.write(b"c" * 10000)                 # not one byte fits: sleep
    assert r.read(9000) == b"a" * 1000 + b"b" * 7192


def test_nonblocking_large_write_into_a_full_pipe_is_eagain():
    _, _, w, _ = make(capacity=4096)
    w.flags |= O_NONBLOCK
    assert w.write(b"x" * 5000) == 4096
    with pytest.raises(GuestErrno) as info:
        w.write(b"x" * 5000)
    assert info.value.errno == E.EAGAIN


def test_every_state_change_wakes_the_pipe_and_nothing_else_does():
    pipe, r, w, woken = make()
    w.write(b"data")
    assert woken == [pipe]                    # readers may go on
    r.read(4)
    assert woken == [pipe] * 2                # writers may go on
    with pytest.raises(WouldBlock):
        r.read(1)                             # empty: a sleep, not a state change
    assert woken == [pipe] * 2
    w.close()
    assert woken == [pipe] * 3                # readers see EOF
    r.close()
    assert woken == [pipe] * 4


def test_closing_twice_counts_once():
    pipe, r, w, woken = make()
    w.close()
    w.close()
    assert pipe.writers == 0 and len(woken) == 1


def test_wrong_direction_is_ebadf():
    _, r, w, _ = make()
    for call in (lambda: r.write(b"x"), lambda: w.read(1)):
        with pytest.raises(GuestErrno) as info:
            call()
        assert info.value.errno == E.EBADF


def test_poll_events_follow_the_state():
    pipe, r, w, _ = make(capacity=8192)
    assert r.poll_events() == 0
    assert w.poll_events() == POLLOUT | POLLWRNORM
    w.write(b"x" * 4097)                      # 4095 free: less than PIPE_BUF
    assert r.poll_events() == POLLIN | POLLRDNORM
    assert w.poll_events() == 0
    w.close()
    assert r.poll_events() == POLLIN | POLLRDNORM | POLLHUP
    r.read(5000)
    assert r.poll_events() == POLLHUP         # end of file: hang-up, nothing to read


def test_write_end_without_readers_polls_error():
    _, r, w, _ = make()
    r.close()
    assert w.poll_events() == POLLOUT | POLLWRNORM | POLLERR


def test_stream_interface():
    pipe, r, w, _ = make(ino=321)
    w.write(b"abc")
    assert r.path == r.proc_link == w.path == b"pipe:[321]"
    assert r.flags == O_RDONLY and w.flags == O_WRONLY
    assert not r.is_tty and r.wait_channel is pipe
    st = r.stat()
    assert (st.mode, st.ino, st.nlink, st.size) == (S_IFIFO | 0o600, 321, 1, 0)
    for call, errno in ((lambda: r.seek(0, 0), E.ESPIPE), (lambda: r.pread(1, 0), E.ESPIPE),
                        (lambda: w.pwrite(b"x", 0), E.ESPIPE), (lambda: r.getdents(), E.ENOTDIR),
                        (lambda: w.truncate(0), E.EINVAL)):
        with pytest.raises(GuestErrno) as info:
            call()
        assert info.value.errno == errno


def test_capacity_below_pipe_buf_is_refused():
    with pytest.raises(KernelPanic):
        Pipe(lambda c: None, 1, capacity=100)


def test_ends_close_when_their_last_fd_goes_in_any_fd_table():
    """fork copies fd tables: the write end stays open until the child's copy closes too."""
    pipe, r, w, woken = make()
    parent = FdTable()
    rfd, wfd = parent.install(r), parent.install(w)
    child = parent.copy()
    parent.close(wfd)
    assert pipe.writers == 1 and not woken
    child.close(wfd)
    assert pipe.writers == 0 and woken == [pipe]
    assert r.read(1) == b""                   # EOF now
    parent.close(rfd)
    assert pipe.readers == 1                  # the child still holds the read end


def test_splice_room_is_what_fits_and_waits_while_full():
    """sendfile into a pipe asks first (fs/splice.c wait_for_space), then reads what fits."""
    pipe, r, w, _ = make(capacity=PIPE_BUF)
    assert w.splice_room() == PIPE_BUF
    w.write(b"x" * 100)
    assert w.splice_room() == PIPE_BUF - 100
    w.write(b"x" * (PIPE_BUF - 100))
    with pytest.raises(WouldBlock) as info:
        w.splice_room()
    assert info.value.channel is pipe
    w.flags |= O_NONBLOCK
    with pytest.raises(GuestErrno) as eagain:
        w.splice_room()
    assert eagain.value.errno == E.EAGAIN
    r.read(1)
    assert w.splice_room() == 1


def test_splice_room_without_reader_is_broken_pipe_and_read_end_is_ebadf():
    _, r, w, _ = make()
    with pytest.raises(GuestErrno) as info:
        r.splice_room()
    assert info.value.errno == E.EBADF
    r.close()
    with pytest.raises(BrokenPipe):
        w.splice_room()
