"""The line discipline between a pty's master and its slave (drivers/tty/n_tty.c), as far as
programs that drive a terminal see it: what the master writes is the slave's input, what the
slave writes (and the input's echo) is the master's output.

Input (n_tty_receive_char): IGNCR drops a CR, ICRNL makes it NL, INLCR makes NL a CR. With
ICANON the input is assembled into lines a read takes one at a time: ERASE removes the last
character, KILL the line, EOF ends the line without itself (an empty one reads as end of file),
NL ends it with itself. Without ICANON bytes are readable as they come, and a read waits for
VMIN of them (VTIME's timer is not modeled: a read never waits for it). With ISIG the INTR,
QUIT and SUSP characters are taken out of the input and flush it (unless NOFLSH); the signal
goes to the terminal's foreground process group, and as the model gives no process a
controlling terminal there is none to send it to. With ECHO every character is echoed (a
control character as ^X under ECHOCTL, an erase as BS-SP-BS under ECHOE), NL also under
ECHONL.

Output (do_output_char), under OPOST: ONLCR writes NL as CR NL, OCRNL CR as NL; echoes are
output too.
"""
from .termios import (ECHO, ECHOCTL, ECHOE, ECHOK, ECHOKE, ECHONL, ICANON, ICRNL, IGNCR, INLCR,
                      ISIG, OCRNL, ONLCR, OPOST, VEOF, VERASE, VINTR, VKILL, VMIN, VQUIT, VSUSP,
                      Termios)

NL, CR, TAB = 0x0A, 0x0D, 0x09
NOFLSH = 0x80


def output(data: bytes, t: Termios) -> bytes:
    """do_output_char for each byte, under OPOST."""
    if not t.oflag & OPOST:
        return data
    if t.oflag & ONLCR:
        data = data.replace(b"\n", b"\r\n")
    elif t.oflag & OCRNL:
        data = data.replace(b"\r", b"\n")
    return data


def _echo_of(c: int, t: Termios) -> bytes:
    """echo_char: a control character (not TAB, not NL) as ^X under ECHOCTL."""
    if t.lflag & ECHOCTL and (c < 0x20 or c == 0x7F) and c not in (TAB, NL):
        return bytes((ord("^"), c ^ 0x40))
    return bytes((c,))


class LineDiscipline:
    """The slave's input: completed lines (ICANON) or bytes, and the line being edited."""

    def __init__(self):
        self.lines: list[bytes] = []     # ICANON: each ends with NL, or is what EOF ended
        self.raw = bytearray()           # not ICANON: the bytes readable now
        self.line = bytearray()          # ICANON: the line being edited

    def receive(self, data: bytes, t: Termios) -> bytes:
        """The master wrote `data`: take it in; returns what is echoed, before output()."""
        echoes = bytearray()
        for c in data:
            if c == CR and t.iflag & IGNCR:
                continue
            if c == CR and t.iflag & ICRNL:
                c = NL
            elif c == NL and t.iflag & INLCR:
                c = CR
            echoes += self._char(c, t)
        return bytes(echoes)

    def _char(self, c: int, t: Termios) -> bytes:
        cc = t.cc
        if t.lflag & ISIG and c in (cc[VINTR], cc[VQUIT], cc[VSUSP]) and c:
            if not t.lflag & NOFLSH:
                self.flush()
            return _echo_of(c, t) if t.lflag & ECHO else b""
        if not t.lflag & ICANON:
            self.raw.append(c)
            return _echo_of(c, t) if t.lflag & ECHO else b""
        if c == NL:
            self.lines.append(bytes(self.line) + b"\n")
            self.line.clear()
            return b"\n" if t.lflag & (ECHO | ECHONL) else b""
        if c == cc[VEOF] and c:
            self.lines.append(bytes(self.line))
            self.line.clear()
            return b""
        if c == cc[VERASE] and c:
            return self._erase(1, t)
        if c == cc[VKILL] and c:
            if t.lflag & ECHO and not t.lflag & ECHOKE and t.lflag & ECHOK:
                self.line.clear()
                return _echo_of(c, t) + b"\n"
            return self._erase(len(self.line), t)
        self.line.append(c)
        return _echo_of(c, t) if t.lflag & ECHO else b""

    def _erase(self, count: int, t: Termios) -> bytes:
        """eraser(): the last `count` characters of the line, rubbed out on the screen."""
        echoes = bytearray()
        for _ in range(min(count, len(self.line))):
            c = self.line.pop()
            if t.lflag & ECHO and t.lflag & ECHOE:
                echoes += b"\b \b" * len(_echo_of(c, t))
        return bytes(echoes)

    def flush(self) -> None:
        """TCFLSH of the input queue, or a signal character without NOFLSH."""
        self.lines.clear()
        self.raw.clear()
        self.line.clear()

    def set_mode(self, canonical: bool) -> None:
        """n_tty_set_termios: leaving ICANON makes what was typed readable; entering it keeps
        what is readable as one line."""
        if canonical and self.raw:
            self.lines.append(bytes(self.raw))
            self.raw.clear()
        elif not canonical and (self.lines or self.line):
            self.raw += b"".join(self.lines) + self.line
            self.lines.clear()
            self.line.clear()

    def available(self, t: Termios) -> int:
        """FIONREAD (n_tty_ioctl TIOCINQ): the bytes a read could take."""
        return sum(map(len, self.lines)) if t.lflag & ICANON else len(self.raw)

    def read(self, n: int, t: Termios) -> bytes | None:
        """What a read of `n` takes now, or None when it must wait."""
        if t.lflag & ICANON:
            if not self.lines:
                return None
            first = self.lines[0]
            if len(first) > n:
                self.lines[0] = first[n:]
                return first[:n]
            self.lines.pop(0)
            return first
        wanted = min(t.cc[VMIN], n)
        if wanted and len(self.raw) < wanted:
            return None
        data = bytes(self.raw[:n])
        del self.raw[:n]
        return data
