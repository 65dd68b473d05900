"""A terminal's settings, struct termios (include/uapi/asm-generic/termbits.h), and the three
layouts the ioctls copy them in: struct termios (TCGETS: four u32 flags, c_line, 19 c_cc),
struct termios2 (TCGETS2: the same and the two speeds) and the old struct termio (TCGETA: u16
flags, c_line, 8 c_cc). Identical on i386 and x86-64.

The defaults are drivers/tty/tty_io.c tty_std_termios as drivers/tty/pty.c unix98_pty_init
adjusts them for a slave: the standard line discipline's settings (ICRNL | IXON, OPOST |
ONLCR, ISIG | ICANON | ECHO...) without HUPCL. A master's own (all off) are never seen: its
termios requests act on its slave's.
"""
import struct
from dataclasses import dataclass, field, replace

# c_iflag
IGNCR, ICRNL, INLCR, IXON = 0x80, 0x100, 0x40, 0x400
# c_oflag
OPOST, ONLCR, OCRNL = 0x1, 0x4, 0x8
# c_cflag: CBAUD's B38400, CS8, CREAD; CSIZE and PARENB, which a pty forces (pty_set_termios)
B38400, CS8, CREAD, CSIZE, PARENB, CBAUD = 0xF, 0x30, 0x80, 0x30, 0x100, 0x100F
# c_lflag
ISIG, ICANON, ECHO, ECHOE, ECHOK, ECHONL = 0x1, 0x2, 0x8, 0x10, 0x20, 0x40
ECHOCTL, ECHOKE, IEXTEN = 0x200, 0x800, 0x8000
# c_cc indices
VINTR, VQUIT, VERASE, VKILL, VEOF, VTIME, VMIN, VSUSP, VEOL = 0, 1, 2, 3, 4, 5, 6, 10, 11
NCCS, NCC = 19, 8
INIT_C_CC = b"\x03\x1c\x7f\x15\x04\x00\x01\x00\x11\x13\x1a\x00\x12\x0f\x17\x16\x00\x00\x00"

TERMIOS = struct.Struct("<IIIIB19s")                 # 36 bytes
TERMIOS2 = struct.Struct("<IIIIB19sII")              # 44 bytes
TERMIO = struct.Struct("<HHHHB8sx")                  # 18 bytes

# CBAUD's codes and their rates (tty_baudrate.c baud_table), for TCGETS2's speeds
_RATES = (0, 50, 75, 110, 134, 150, 200, 300, 600, 1200, 1800, 2400, 4800, 9600, 19200, 38400)
_HIGH_RATES = (57600, 115200, 230400, 460800, 500000, 576000, 921600, 1000000, 1152000,
               1500000, 2000000, 2500000, 3000000, 3500000, 4000000)
CBAUDEX = 0x1000


def rate_of(cflag: int) -> int:
    code = cflag & CBAUD
    if code & CBAUDEX:
        index = (code & 0xF) - 1
        return _HIGH_RATES[index] if 0 <= index < len(_HIGH_RATES) else 0
    return _RATES[code]


@dataclass
class Termios:
    iflag: int = ICRNL | IXON
    oflag: int = OPOST | ONLCR
    cflag: int = B38400 | CS8 | CREAD
    lflag: int = ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN
    line: int = 0
    cc: bytes = field(default=INIT_C_CC)
    ispeed: int = 38400
    ospeed: int = 38400

    def pack(self) -> bytes:
        return TERMIOS.pack(self.iflag, self.oflag, self.cflag, self.lflag, self.line, self.cc)

    def pack2(self) -> bytes:
        return TERMIOS2.pack(self.iflag, self.oflag, self.cflag, self.lflag, self.line, self.cc,
                             self.ispeed, self.ospeed)

    def pack_termio(self) -> bytes:
        return TERMIO.pack(self.iflag & 0xFFFF, self.oflag & 0xFFFF, self.cflag & 0xFFFF,
                           self.lflag & 0xFFFF, self.line, self.cc[:NCC])


def from_termios(raw: bytes) -> Termios:
    """user_termios_to_kernel_termios_1 (TCSETS): the speeds follow the baud bits."""
    iflag, oflag, cflag, lflag, line, cc = TERMIOS.unpack(raw)
    return Termios(iflag, oflag, cflag, lflag, line, cc, rate_of(cflag), rate_of(cflag))


def from_termios2(raw: bytes) -> Termios:
    return Termios(*TERMIOS2.unpack(raw))


def from_termio(old: Termios, raw: bytes) -> Termios:
    """user_termio_to_kernel_termios (TCSETA): the low 16 bits of each flag word and the first
    NCC control characters are replaced, the rest kept."""
    iflag, oflag, cflag, lflag, line, cc = TERMIO.unpack(raw)
    cflag = (old.cflag & 0xFFFF0000) | cflag
    return replace(old, iflag=(old.iflag & 0xFFFF0000) | iflag,
                   oflag=(old.oflag & 0xFFFF0000) | oflag, cflag=cflag,
                   lflag=(old.lflag & 0xFFFF0000) | lflag, line=line, cc=cc + old.cc[NCC:],
                   ispeed=rate_of(cflag), ospeed=rate_of(cflag))
