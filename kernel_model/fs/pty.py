"""Unix98 pseudo-terminals (drivers/tty/pty.c, fs/devpts): opening /dev/ptmx makes a pair,
a master and a slave /dev/pts/N. The slave is a terminal a program runs on (isatty, termios);
the master is the program driving it (script, expect, ssh, a terminal emulator): what it
writes is the slave's input through the line discipline (pty_ldisc.py), what the slave writes
is read from the master.

A new pair is locked (TTY_PTY_LOCK): opening its slave is EIO until TIOCSPTLCK unlocks it
(unlockpt). When the last master closes, the slave's name goes (devpts_pty_kill) and the slave
is hung up: its reads return 0 and its writes EIO. When every slave that was opened is closed
again, a master's read of an empty queue is EIO (TTY_OTHER_CLOSED).

The queues have no bound (Linux's n_tty buffer holds 4 KiB and throttles the writer): a write
never waits.
"""
from .. import errno as E
from ..blocking import WouldBlock
from ..errno import GuestErrno
from ..readiness import POLLHUP, POLLIN, POLLOUT, POLLRDNORM, POLLWRNORM
from .constants import O_ACCMODE, O_NONBLOCK, O_RDONLY, O_WRONLY
from .pty_ldisc import LineDiscipline, output
from .termios import CREAD, CS8, CSIZE, ICANON, PARENB, Termios
from .unseekable import Unseekable


class PtyPair:
    def __init__(self, index: int, wakeup, slave_node, master_node, release):
        self.index = index
        self.release = release              # the last master's close: /dev/pts/N goes
        self.locked = True
        self.wakeup = wakeup
        self.slave_node = slave_node        # /dev/pts/N (devfs.py's Devpts makes it)
        self.master_node = master_node      # the /dev/ptmx it was opened through
        # the slave's settings: a master's termios requests act on its slave's
        # (tty_mode_ioctl: real_tty = tty->link for a pty master)
        self.termios = Termios()
        self.winsize = bytes(8)             # struct winsize, one per pair (pty_resize)
        self.ldisc = LineDiscipline()
        self.to_master = bytearray()
        self.masters = self.slaves = 0
        self.slave_opened = False

    def open_end(self, is_master: bool, flags: int, path: bytes) -> "PtyEnd":
        return PtyEnd(self, is_master, flags, path)

    @property
    def hung_up(self) -> bool:
        return self.masters == 0

    def set_termios(self, new: Termios) -> None:
        """tty_set_termios then pty_set_termios: a pty is always CS8 | CREAD, no parity."""
        new.cflag = new.cflag & ~(CSIZE | PARENB) | CS8 | CREAD
        self.ldisc.set_mode(bool(new.lflag & ICANON))
        self.termios = new
        self.wakeup(self)

    # ---- data ---------------------------------------------------------------------------------
    def master_write(self, data: bytes) -> int:
        echoes = self.ldisc.receive(data, self.termios)
        self.to_master += output(echoes, self.termios)
        self.wakeup(self)
        return len(data)

    def slave_write(self, data: bytes) -> int:
        if self.hung_up:
            raise GuestErrno(E.EIO)
        self.to_master += output(data, self.termios)
        self.wakeup(self)
        return len(data)

    def master_read(self, n: int, nonblocking: bool) -> bytes:
        if not self.to_master:
            if self.slave_opened and self.slaves == 0:
                raise GuestErrno(E.EIO)
            return _wait(self, nonblocking, "master")
        data = bytes(self.to_master[:n])
        del self.to_master[:n]
        return data

    def slave_read(self, n: int, nonblocking: bool) -> bytes:
        data = self.ldisc.read(n, self.termios)
        if data is not None:
            return data
        if self.hung_up:
            return b""
        return _wait(self, nonblocking, "slave")

    def events(self, is_master: bool) -> int:
        writable = POLLOUT | POLLWRNORM
        if is_master:
            closed = self.slave_opened and self.slaves == 0
            readable = POLLIN | POLLRDNORM if self.to_master else 0
            return readable | (POLLHUP if closed else writable)
        if self.hung_up:
            return POLLIN | POLLRDNORM | POLLHUP
        ready = self.ldisc.available(self.termios) or self.ldisc.lines
        return (POLLIN | POLLRDNORM if ready else 0) | writable


def _wait(pair: PtyPair, nonblocking: bool, side: str) -> bytes:
    if nonblocking:
        raise GuestErrno(E.EAGAIN)
    raise WouldBlock(pair, f"read on the {side} of pty {pair.index}")


class PtyEnd(Unseekable):
    """An open master or slave: an open file description of kernel_model.fs's interface."""

    is_tty = True
    splice_read = False

    def __init__(self, pair: PtyPair, is_master: bool, flags: int, path: bytes):
        self.pair = pair
        self.is_master = is_master
        self.flags = flags
        self.path = self.proc_link = path
        self.closed = False
        if is_master:
            pair.masters += 1
        else:
            pair.slaves += 1
            pair.slave_opened = True

    @property
    def wait_channel(self) -> PtyPair:
        return self.pair

    @property
    def node(self):
        return self.pair.master_node if self.is_master else self.pair.slave_node

    def read(self, n: int) -> bytes:
        if self.flags & O_ACCMODE == O_WRONLY:
            raise GuestErrno(E.EBADF)
        nonblocking = bool(self.flags & O_NONBLOCK)
        if self.is_master:
            return self.pair.master_read(n, nonblocking)
        return self.pair.slave_read(n, nonblocking)

    def write(self, data: bytes) -> int:
        if self.flags & O_ACCMODE == O_RDONLY:
            raise GuestErrno(E.EBADF)
        if self.is_master:
            return self.pair.master_write(bytes(data))
        return self.pair.slave_write(bytes(data))

    def available(self) -> int:
        if self.is_master:
            return len(self.pair.to_master)
        return self.pair.ldisc.available(self.pair.termios)

    def poll_events(self) -> int:
        return self.pair.events(self.is_master)

    def stat(self):
        return self.node.stat()

    def ioctl(self, ctx, request: int, arg: int) -> int:
        from .pty_ioctl import tty_ioctl           # a terminal's ioctls, on first use
        return tty_ioctl(ctx, self, request, arg)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.is_master:
            self.pair.masters -= 1
            if self.pair.masters == 0:
                self.pair.release(self.pair)
        else:
            self.pair.slaves -= 1
        self.pair.wakeup(self.pair)
