"""Signal-driven I/O (fs/fcntl.c): an open file's owner and signal, and the signal its
readiness sends.

F_SETOWN, F_SETOWN_EX and F_SETSIG set the description's f_owner: who gets the signal (a
thread, a process or a process group; pid 0: nobody) and which (0: SIGIO). Setting O_ASYNC
with F_SETFL puts the description on its pipe's fasync list (fasync_helper, with the fd it was
set through) and clearing it or the last close takes it off. When a write gives the pipe data,
each reading description on the list signals its owner with POLL_IN; when a read makes room,
each writing one with POLL_OUT (pipe_write/pipe_read's kill_fasync). send_sigio_to_task: with
F_SETSIG's signal the siginfo carries si_code POLL_IN/POLL_OUT, si_band (the poll bits) and
si_fd; the default SIGIO is sent as SEND_SIG_PRIV (si_code SI_KERNEL).
"""
import struct
from dataclasses import dataclass
from typing import Callable

from .constants import O_ACCMODE, O_RDONLY, O_RDWR

F_OWNER_TID, F_OWNER_PID, F_OWNER_PGRP = 0, 1, 2
POLL_IN, POLL_OUT, POLL_MSG = 1, 2, 3
SI_KERNEL = 0x80
SIGIO = 29
# the poll bits kill_fasync's band carries (include/uapi/asm-generic/poll.h, fs/fcntl.c band_table)
BAND = {POLL_IN: 0x001 | 0x040, POLL_OUT: 0x004 | 0x100 | 0x200, POLL_MSG: 0x001 | 0x040 | 0x400}


@dataclass
class Fown:
    """struct fown_struct: the owner's kind and id, and the signal (0: SIGIO)."""
    kind: int = F_OWNER_TID
    pid: int = 0
    signum: int = 0


def fown_of(f) -> Fown:
    fown = getattr(f, "fown", None)
    if fown is None:
        fown = f.fown = Fown()
    return fown


@dataclass
class Subscriber:
    """One entry of a fasync list: the description, the fd it was set through, and how to
    send its owner a signal (the kernel's, bound when O_ASYNC was set)."""
    file: object
    fd: int
    send: Callable[[Fown, object], None]


def set_fasync(f, fd: int, on: bool, send) -> None:
    """fasync_helper() for the pipe behind `f` (other files keep no list: nothing is sent)."""
    pipe = getattr(f, "pipe", None)
    if pipe is None:
        return
    pipe.fasync = [s for s in getattr(pipe, "fasync", []) if s.file is not f]
    if on:
        pipe.fasync.append(Subscriber(f, fd, send))


def kill_fasync(pipe, side: int, reason: int) -> None:
    """Signal the owners of the descriptions on the reading (O_RDONLY) or the writing side of
    `pipe` (FMODE_READ descriptions are on fasync_readers, FMODE_WRITE on fasync_writers)."""
    for s in getattr(pipe, "fasync", ()):
        mode = s.file.flags & O_ACCMODE
        if mode != O_RDWR and (mode == O_RDONLY) != (side == O_RDONLY):
            continue
        fown = fown_of(s.file)
        if fown.pid:
            s.send(fown, sigio_siginfo(fown, reason, s.fd))


def sigio_siginfo(fown: Fown, reason: int, fd: int):
    """send_sigio_to_task's siginfo for F_SETSIG's signal, by the target's word size (None:
    the plain SIGIO)."""
    if not fown.signum:
        return None

    def raw(word: int) -> bytes:
        head = struct.pack("<iii", fown.signum, 0, reason) + (b"\0" * 4 if word == 8 else b"")
        body = struct.pack("<qi" if word == 8 else "<ii", BAND[reason], fd)
        return (head + body).ljust(128, b"\0")
    return raw
