"""strace's -e read=SET and -e write=SET: a hex and ASCII dump of the data each call read from
or wrote to a descriptor of SET, after the call's line (strace 6.x util.c dumpio, dumpstr,
dumpiov_upto):

    write(3, "trapline fileio sample: 01234567"..., 35) = 35
     | 00000  74 72 61 70 6c 69 6e 65  20 66 69 6c 65 69 6f 20  trapline fileio  |

Sixteen bytes a row: the offset, the bytes in hex (a space more after the eighth), the bytes
again as characters (printable ASCII, '.' for the rest). Vectored calls dump each buffer after
` * N bytes in buffer I`, up to the first empty one. A failed read dumps nothing, a failed
write what it was given (strace dumps the arguments, whatever the result); a read dumps what it returned, a write
what it was given.
"""
from dataclasses import dataclass

from .strings import read_words

# (data address, length) from the arguments and the result, by call
_READ_BUFFER = frozenset({"read", "pread64", "recv", "recvfrom"})        # (arg 1, result)
_WRITE_BUFFER = frozenset({"write", "pwrite64", "send", "sendto"})      # (arg 1, arg 2)
_READ_VECTOR = frozenset({"readv", "preadv", "preadv2"})                # iov arg 1, count 2
_WRITE_VECTOR = frozenset({"writev", "pwritev", "pwritev2"})
_MESSAGES = {"recvmsg": "read", "sendmsg": "write"}                     # msghdr's iov
UIO_MAXIOV = 1024                  # include/uapi/linux/uio.h: the most a call takes


@dataclass(frozen=True)
class FdSet:
    """-e read=SET's descriptors: numbers, `all`, `none`, `!` before the set negates it."""
    negated: bool = False
    fds: frozenset[int] = frozenset()

    def __contains__(self, fd: int) -> bool:
        return (fd in self.fds) != self.negated


def parse_fd_set(text: str) -> FdSet:
    """strace's qualify_read/qualify_write; a bad descriptor is ValueError naming it."""
    negated = text.startswith("!")
    items = [item for item in (text[1:] if negated else text).split(",") if item]
    if "all" in items:
        return FdSet(not negated)
    fds = set()
    for item in items:
        if item != "none":
            if not item.isdigit():
                raise ValueError(f"invalid descriptor '{item}'")
            fds.add(int(item))
    return FdSet(negated, frozenset(fds))


def dump_lines(mem, name: str, args, result: int, word: int, reads: FdSet,
               writes: FdSet) -> list[str]:
    """The dump after `name`'s line, if its descriptor is in the set of its direction."""
    if not args:
        return []
    fd = args[0] if args[0] < 1 << 31 else args[0] - (1 << 32)
    direction = ("read" if name in _READ_BUFFER | _READ_VECTOR else
                 "write" if name in _WRITE_BUFFER | _WRITE_VECTOR else _MESSAGES.get(name))
    if direction is None or fd not in (reads if direction == "read" else writes):
        return []
    if direction == "read" and result < 0:
        return []
    if name in _READ_BUFFER or name in _WRITE_BUFFER:
        length = result if direction == "read" else args[2]
        data = mem.read(args[1], length) if length else b""
        return hex_rows(data or b"")
    if name in _MESSAGES:
        return _message(mem, args[1], word, result if direction == "read" else None)
    return _vector(mem, args[1], args[2], word, result if direction == "read" else None)


def _message(mem, msghdr: int, word: int, limit: int | None) -> list[str]:
    """struct msghdr: name, namelen (padded to a word), iov, iovlen (include/linux/socket.h)."""
    fields = read_words(mem, msghdr, word, 4) if msghdr else None
    return [] if fields is None else _vector(mem, fields[2], fields[3], word, limit)


def _vector(mem, iov: int, count: int, word: int, limit: int | None) -> list[str]:
    """` * N bytes in buffer I` and its rows, for each buffer up to `limit` bytes in all."""
    entries = read_words(mem, iov, word, 2 * min(count, UIO_MAXIOV)) if iov and count > 0 else None
    lines = []
    for index, (base, length) in enumerate(zip((entries or [])[0::2], (entries or [])[1::2])):
        shown = length if limit is None else min(length, limit)
        if not shown:               # (strace stops at an empty buffer, even the first)
            break
        if limit is not None:
            limit -= shown
        lines.append(f" * {shown} bytes in buffer {index}")
        lines += hex_rows(mem.read(base, shown) or b"")
    return lines


def hex_rows(data: bytes) -> list[str]:
    rows = []
    for offset in range(0, len(data), 16):
        chunk = data[offset:offset + 16]
        cells = "".join(f"{b:02x} " if i < len(chunk) else "   " for i, b in
                        enumerate(chunk.ljust(16, b"\0")))
        cells = cells[:24] + " " + cells[24:]
        text = "".join(chr(b) if 0x20 <= b < 0x7f else "." for b in chunk)
        rows.append(f" | {offset:05x}  {cells} {text:<16} |")
    return rows
