"""Writable /proc/sys values (issue 32, LTP splice06: EACCES before, every /proc/sys file was
read-only): root writes kernel.domainname and kernel.hostname (proc_dostring: up to a newline
or NUL, 64 bytes at most, continuing at the file position) and fs.pipe-max-size (an unsigned
integer in C's base 0, rounded to a power-of-two number of pages, EINVAL for a minus, garbage
or more than 2**31, the old value kept). Each result was measured natively (Linux 6.18, in a
UTS namespace for the names; pipe-max-size set back afterwards); a value the model does not
use (kernel.ostype, kernel.pid_max) stays read-only."""
import struct

from hypothesis import example, given, strategies as st

from kernel_model import errno as E
from kernel_model.errno import GuestErrno
from kernel_model.fs.sysctl_write import parse_int, string_writer

from ..call_script import run_script

O_RDONLY, O_WRONLY, O_TRUNC = 0, 1, 0o1000
F_SETPIPE_SZ = 1031
PIPE_MAX = b"/proc/sys/fs/pipe-max-size\0"
DOMAIN = b"/proc/sys/kernel/domainname\0"
HOST = b"/proc/sys/kernel/hostname\0"
OSTYPE = b"/proc/sys/kernel/ostype\0"
NEW_UTS_LEN = 65                        # struct new_utsname's fields


def _data() -> bytes:
    data = bytearray(512)
    for offset, text in ((0, PIPE_MAX), (64, DOMAIN), (128, b"5000\n"), (144, b"-1"),
                         (160, b"ltp.test\nxx"), (192, OSTYPE), (224, b"0x2000 "),
                         (240, b"12abc"), (256, HOST), (288, b"x" * 100), (400, b"a\0bc")):
        data[offset:offset + len(text)] = text
    return bytes(data)


def test_root_writes_the_values_linux_lets_it_write(arch):
    results, buf, _ = run_script(arch, [
        ("open", "BUF", O_WRONLY | O_TRUNC),             # 3: O_TRUNC changes nothing
        ("write", 3, "BUF+128", 5),                      # 5000 -> two pages
        ("write", 3, "BUF+144", 2),                      # a minus
        ("write", 3, "BUF+240", 5),                      # garbage after the digits
        ("write", 3, "BUF+128", 0),                      # nothing: 0 before any handler
        ("open", "BUF", O_RDONLY),                       # 4
        ("read", 4, "BUF+512", 64),
        ("open", "BUF", O_WRONLY),                       # 5
        ("write", 5, "BUF+224", 7),                      # hex: 0x2000
        ("open", "BUF", O_RDONLY),                       # 6
        ("read", 6, "BUF+576", 64),
        ("open", "BUF+64", O_WRONLY),                    # 7
        ("write", 7, "BUF+160", 11),                     # up to the newline
        ("open", "BUF+64", O_RDONLY),                    # 8
        ("read", 8, "BUF+640", 64),
        ("uname", "BUF+1024"),
        ("open", "BUF+256", O_WRONLY),                   # 9
        ("write", 9, "BUF+288", 100),                    # 64 bytes kept, 100 taken
        ("write", 9, "BUF+400", 4),                      # continues at 100 > 64: nothing
        ("open", "BUF+256", O_RDONLY),                   # 10
        ("read", 10, "BUF+704", 100),
        ("open", "BUF+192", O_WRONLY),                   # read-only even for root
        ("pipe", "BUF+2048"),                            # 11, 12
        ("fcntl", 11, F_SETPIPE_SZ, 65536),
    ], data=_data())
    assert results[:5] == [3, 5, -E.EINVAL, -E.EINVAL, 0]
    assert results[5:11] == [4, 5, 5, 7, 6, 5] and buf[512:517] == b"8192\n"
    assert buf[576:581] == b"8192\n"
    assert results[11:15] == [7, 11, 8, 9] and buf[640:649] == b"ltp.test\n"
    assert results[15] == 0 and buf[1024 + 5 * NEW_UTS_LEN:][:9] == b"ltp.test\0"
    assert results[16:21] == [9, 100, 4, 10, 65] and buf[704:769] == b"x" * 64 + b"\n"
    assert results[21] == -E.EACCES
    assert results[22:] == [0, 65536]
    fds = struct.unpack_from("<ii", buf, 2048)
    assert fds == (11, 12)


@example(value=2**64 - 1, form="0%o", before="", after="")      # 23 bytes: refused
@example(value=255, form="%X", before=" ", after="\n")           # "FF": refused
@example(value=2**64 - 1, form="%d", before="", after="")       # 20 digits: the largest
@given(value=st.integers(0, 2**64 - 1), form=st.sampled_from(["%d", "0x%x", "0%o", "%X"]),
       before=st.sampled_from(["", " ", "\t", "\n ", "  "]),
       after=st.sampled_from(["", "\n", " ", "\t7"]))
def test_an_integer_parses_as_the_kernel_parses_it(value, form, before, after):
    """proc_get_long: blanks, a number in C's base 0 (0x-prefixed hex, 0-prefixed octal), then
    the end or a blank (what follows the blank is not read: one value); "%X" without its
    0x-prefix is read as decimal, so a hex digit is garbage; a number of 21 bytes or more is
    EINVAL (TMPBUFLEN)."""
    text = form % value
    data = (before + text + after).encode()
    if len(text) >= 21 or (form == "%X" and not text.isdigit()):
        try:
            parse_int(data)
        except GuestErrno as refused:
            assert refused.errno == E.EINVAL
            return
        raise AssertionError(f"{data!r} parsed")
    expected = int(text) if form == "%X" else value
    assert parse_int(data) == expected
