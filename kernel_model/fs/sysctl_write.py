"""Writing a /proc/sys value (kernel/sysctl.c): how a write's bytes become the new value.

proc_sys_call_handler hands each write(2) the file position (a write of nothing is 0 before
any handler), and the handler parses in SYSCTL_WRITES_STRICT mode (the default since 4.5):
- proc_dostring (_proc_do_string): the text continues at the position, which may not lie past
  the current value's end (then nothing changes); it stops at a NUL or a newline and keeps at
  most maxlen - 1 bytes; the whole write counts as taken.
- an unsigned integer (proc_douintvec, the pipe-max-size handler): leading blanks, digits in
  C's base 0 (0x-prefixed hex, 0-prefixed octal: strtoul_lenient), then the end or a blank
  (proc_get_long's `tr`), anything else EINVAL, a minus too; the handler's converter refuses a value out of
  range with EINVAL and leaves the old one. A second write(2) on the same open file sets the
  value again (measured on the reference host: "8192" then "16384" leaves 16384).
"""
from typing import Callable

from .. import errno as E
from ..errno import GuestErrno

BLANKS = b" \t\n"
TMPBUFLEN = 22          # proc_get_long's buffer: a number of TMPBUFLEN - 1 bytes is EINVAL


def string_writer(get: Callable[[], bytes], put: Callable[[bytes], None],
                  maxlen: int) -> Callable[[int, bytes], int]:
    """A writer for proc_dostring of a buffer of `maxlen` bytes (the NUL included)."""
    def write(position: int, data: bytes) -> int:
        current = get()[:maxlen - 1]
        if position > len(current):
            return len(data)
        text = data.split(b"\n", 1)[0].split(b"\0", 1)[0]
        put((current[:position] + text)[:maxlen - 1])
        return len(data)
    return write


def int_writer(put: Callable[[int], None],
               convert: Callable[[int], int]) -> Callable[[int, bytes], int]:
    """A writer for one integer: `convert` checks the parsed value (GuestErrno EINVAL out of
    range) and gives what is stored."""
    def write(position: int, data: bytes) -> int:
        put(convert(parse_int(data)))
        return len(data)
    return write


def parse_int(data: bytes) -> int:
    """proc_get_long() after proc_skip_spaces(): the signed value of the first number (a
    minus, then a digit first: no plus)."""
    text = data.lstrip(BLANKS)
    negative = text.startswith(b"-")
    end = 0
    while end < len(text) and text[end:end + 1] not in (b" ", b"\t", b"\n"):
        end += 1
    if end >= TMPBUFLEN - 1:
        raise GuestErrno(E.EINVAL)          # it may go on past what the buffer holds
    digits = text[1:end] if negative else text[:end]
    if not digits[:1].isdigit():
        raise GuestErrno(E.EINVAL)
    value = _c_unsigned(digits)
    return -value if negative else value


DIGITS = {8: b"01234567", 10: b"0123456789", 16: b"0123456789abcdefABCDEF"}


def _c_unsigned(digits: bytes) -> int:
    """strtoul(digits, NULL, 0) that must take every byte and fit in 64 bits, else EINVAL."""
    base, body = 10, digits
    if digits[:2].lower() == b"0x":
        base, body = 16, digits[2:]
    elif digits.startswith(b"0") and len(digits) > 1:
        base, body = 8, digits[1:]
    if not body or any(c not in DIGITS[base] for c in body):
        raise GuestErrno(E.EINVAL)
    value = int(body, base)
    if value >= 1 << 64:
        raise GuestErrno(E.EINVAL)           # strtoul_lenient: -ERANGE
    return value


def int_in(low: int, high: int) -> Callable[[int], int]:
    """proc_dointvec_minmax's check: `low` <= value <= `high`, else EINVAL."""
    def convert(value: int) -> int:
        if not low <= value <= high:
            raise GuestErrno(E.EINVAL)
        return value
    return convert
