"""trapline's own output when it goes away: a reader that closed the pipe, a stdio fd closed.

A closed pipe (`trapline trace ... | head -2`). Python ignores SIGPIPE, so a write to a pipe
with no reader fails with EPIPE (BrokenPipeError) wherever trapline writes: trace records,
strace lines, reports. strace, whose SIGPIPE handler notes the signal as it notes SIGINT
(strace.c, interrupt()), stops tracing at its next event, kills the child it started and dies
of SIGPIPE; coreutils die of it at the write (default action). trapline does what strace does:
the write that found no reader asks every guest run to stop with SIGPIPE (emu/host_stop.py),
the fd is pointed at /dev/null so that the rest of the run, its final flushes and Python's own
at exit write nowhere instead of failing again (the Python documentation's "Note on SIGPIPE"),
and the command dies of SIGPIPE (host_signals.finish): no traceback, status 141 in a shell.

A stdio fd closed at start (`2>&-`). trapline's own files would take the lowest free fd, and
its messages meant for stderr would land in them. As strace does (strace.c,
ensure_standard_fds_opened), each closed fd among 0-2 gets a placeholder (the read end of a
pipe whose write end is closed: reads see EOF, writes fail with EBADF); trapline's messages to
it go nowhere; the guest finds that fd closed, as the program started with it closed would
(strace's placeholders are close-on-exec).

The guest's own writes to a host pipe with no reader are the modeled kernel's business: EPIPE
and SIGPIPE for the guest (kernel_model/fs/stdio.py, pipe(7)).
"""
from __future__ import annotations

import errno
import fcntl
import os
import signal
import sys

from emu import host_stop

STDIO = (0, 1, 2)
_closed_at_start: set[int] = set()


def guard_stdio() -> None:
    """Placeholders for the stdio fds closed at start; trapline's stdout/stderr to /dev/null
    where theirs is one of them."""
    for fd in STDIO:
        if _is_open(fd) or fd in _closed_at_start:
            continue
        read_end, write_end = os.pipe()
        os.close(write_end)
        if read_end != fd:
            os.dup2(read_end, fd, inheritable=False)
            os.close(read_end)
        _closed_at_start.add(fd)
    # A stdio fd open read-only is as good as closed for trapline's messages: a shell that
    # ran a script with 2 closed may leave the script there (pyenv's shims do).
    if not _writable(1):
        sys.stdout = open(os.devnull, "w")      # noqa: SIM115 -- for the process's life
    if not _writable(2):
        sys.stderr = open(os.devnull, "w")      # noqa: SIM115


def closed_at_start() -> frozenset[int]:
    """The stdio fds the process found closed (guard_stdio): the guest gets no such fd."""
    return frozenset(_closed_at_start)


def _writable(fd: int) -> bool:
    """Not a placeholder, and open for writing."""
    if fd in _closed_at_start:
        return False
    return fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE in (os.O_WRONLY, os.O_RDWR)


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError as e:
        if e.errno == errno.EBADF:
            return False
        raise
    return True


def output_gone(stream) -> None:
    """`stream`'s reader went away (EPIPE): its fd to /dev/null, every guest run asked to stop
    with SIGPIPE (module docstring)."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None
    if fd is not None:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd, inheritable=fd in STDIO)
        os.close(null)
    host_stop.request(signal.SIGPIPE)


class Guarded:
    """A host stream whose writes and flushes end in `output_gone` instead of BrokenPipeError."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text):
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            output_gone(self.stream)
            return len(text)

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            output_gone(self.stream)
            self._flush_again()

    def _flush_again(self) -> None:
        """The buffered text now goes to /dev/null (or, with no fd to redirect, is lost)."""
        try:
            self.stream.flush()
        except BrokenPipeError:
            pass

    def __getattr__(self, name):
        return getattr(self.stream, name)


def guarded(stream):
    """`stream` as a Guarded one (once)."""
    return stream if stream is None or isinstance(stream, Guarded) else Guarded(stream)


def flush_stdio() -> None:
    """Flush trapline's stdout and stderr before it exits; an EPIPE there is output_gone."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            guarded(stream).flush()
