"""ioctl(2) on a pty master or slave: drivers/tty/tty_io.c tty_ioctl, tty_ioctl.c
tty_mode_ioctl and n_tty_ioctl, and pty.c's own (pty_unix98_ioctl, master only).

Modeled: the settings (TCGETS/TCSETS[WF] and their termios2 and old termio forms, whose
struct is copied in or out first: EFAULT), the window size, TCFLSH, TCSBRK and TCXONC (nothing
to drain or stop), and the master's TIOCGPTN, TIOCSPTLCK, TIOCGPTLCK and TIOCGPTPEER. Not
modeled, so ENOTTY as a request no layer knows: controlling terminals and job control
(TIOCSCTTY, TIOCNOTTY, TIOCGPGRP, TIOCSPGRP, TIOCGSID: no process has a controlling terminal
in the model), packet mode, TIOCSTI, exclusive mode.
"""
import struct

from .. import errno as E
from ..errno import GuestErrno
from .constants import O_CLOEXEC
from .termios import TERMIO, TERMIOS, TERMIOS2, from_termio, from_termios, from_termios2

TCGETS, TCSETS, TCSETSW, TCSETSF = 0x5401, 0x5402, 0x5403, 0x5404
TCGETA, TCSETA, TCSETAW, TCSETAF = 0x5405, 0x5406, 0x5407, 0x5408
TCSBRK, TCXONC, TCFLSH = 0x5409, 0x540A, 0x540B
TIOCGWINSZ, TIOCSWINSZ = 0x5413, 0x5414
TCGETS2, TCSETS2, TCSETSW2, TCSETSF2 = 0x802C542A, 0x402C542B, 0x402C542C, 0x402C542D
TIOCGPTN, TIOCSPTLCK, TIOCGPTLCK, TIOCGPTPEER = 0x80045430, 0x40045431, 0x80045439, 0x5441
TCIFLUSH, TCOFLUSH, TCIOFLUSH = 0, 1, 2

# request -> (struct, its reader): the three ways to set the settings; F flushes the input
SETTERS = {TCSETS: TERMIOS, TCSETSW: TERMIOS, TCSETSF: TERMIOS,
           TCSETS2: TERMIOS2, TCSETSW2: TERMIOS2, TCSETSF2: TERMIOS2,
           TCSETA: TERMIO, TCSETAW: TERMIO, TCSETAF: TERMIO}
FLUSHING = (TCSETSF, TCSETSF2, TCSETAF)
MASTER_ONLY = (TIOCGPTN, TIOCSPTLCK, TIOCGPTLCK, TIOCGPTPEER)


def tty_ioctl(ctx, end, request: int, arg: int) -> int:
    pair, is_master = end.pair, end.is_master
    if request in MASTER_ONLY:
        if not is_master:
            raise GuestErrno(E.ENOTTY)
        return _master_ioctl(ctx, pair, request, arg)
    termios = pair.termios
    if request == TCGETS:
        ctx.write(arg, termios.pack())
        return 0
    if request == TCGETS2:
        ctx.write(arg, termios.pack2())
        return 0
    if request == TCGETA:
        ctx.write(arg, termios.pack_termio())
        return 0
    if request in SETTERS:
        return _set(ctx, pair, request, arg)
    if request == TIOCGWINSZ:
        ctx.write(arg, pair.winsize)
        return 0
    if request == TIOCSWINSZ:
        pair.winsize = ctx.read(arg, 8)
        return 0
    if request == TCFLSH:
        return _flush(pair, is_master, arg)
    if request in (TCSBRK, TCXONC):
        return 0
    raise GuestErrno(E.ENOTTY)


def _set(ctx, pair, request: int, arg: int) -> int:
    """set_termios: the struct is copied in (EFAULT), F flushes the input first."""
    layout = SETTERS[request]
    raw = ctx.read(arg, layout.size)
    if layout is TERMIOS:
        new = from_termios(raw)
    elif layout is TERMIOS2:
        new = from_termios2(raw)
    else:
        new = from_termio(pair.termios, raw)
    if request in FLUSHING:
        pair.ldisc.flush()                  # the slave's input: its termios are set
    pair.set_termios(new)
    return 0


def _flush(pair, is_master: bool, how: int) -> int:
    """tty_perform_flush: the input queue is the slave's line discipline for the slave and the
    master's queue for the master; the output queue the other (pty_flush_buffer)."""
    if how not in (TCIFLUSH, TCOFLUSH, TCIOFLUSH):
        raise GuestErrno(E.EINVAL)
    slave_input = pair.ldisc.flush
    queues = {True: (pair.to_master.clear, slave_input), False: (slave_input, pair.to_master.clear)}
    flush_input, flush_output = queues[is_master]
    if how != TCOFLUSH:
        flush_input()
    if how != TCIFLUSH:
        flush_output()
    pair.wakeup(pair)
    return 0


def _master_ioctl(ctx, pair, request: int, arg: int) -> int:
    if request == TIOCGPTN:
        ctx.write(arg, struct.pack("<I", pair.index))
        return 0
    if request == TIOCSPTLCK:
        locked, = struct.unpack("<i", ctx.read(arg, 4))
        pair.locked = bool(locked)
        return 0
    if request == TIOCGPTLCK:
        ctx.write(arg, struct.pack("<i", int(pair.locked)))
        return 0
    return _open_peer(ctx, pair, arg)


def _open_peer(ctx, pair, flags: int) -> int:
    """TIOCGPTPEER (ptm_open_peer): the slave opened with `flags` (O_RDWR, O_NOCTTY,
    O_CLOEXEC...) as /dev/pts/N would be, EIO while locked."""
    if pair.locked:
        raise GuestErrno(E.EIO)
    end = pair.open_end(False, flags & ~O_CLOEXEC, b"/dev/pts/%d" % pair.index)
    return ctx.proc.fds.install(end, cloexec=bool(flags & O_CLOEXEC))
