"""Guest memory as strace shows it: quoted, escaped, truncated strings and buffers.

strace (6.x defaults, no -x, -s 32) prints data as a C string literal: \\t \\n \\v \\f \\r \\" \\\\
escaped, printable ASCII as is, every other byte as the shortest octal escape ("\\0", "\\33",
"\\377"), except that a byte followed by an octal digit gets all three digits ("\\0001") so the
escape cannot swallow the digit. At most 32 bytes are shown; more gets a trailing "...". An
address the tracer cannot read is printed as the bare address in hex.
"""
from typing import Protocol

MAX_STRLEN = 32              # strace -s default
PATH_MAX = 4096              # paths are printed whole, up to PATH_MAX (linux/limits.h)
ELLIPSIS = "..."
_MAX_ENV_VARS = 1 << 16      # a guest environment with no NULL within reach is shown as an address

_NAMED_ESCAPES = {0x09: "\\t", 0x0a: "\\n", 0x0b: "\\v", 0x0c: "\\f", 0x0d: "\\r",
                  0x22: '\\"', 0x5c: "\\\\"}


class MemReader(Protocol):
    """Read access to a traced process's memory; None means the address is not readable."""

    def read(self, addr: int, n: int) -> bytes | None: ...

    def read_cstr(self, addr: int, limit: int) -> bytes | None:
        """Bytes up to (not including) a NUL, at most `limit` bytes when no NUL comes first."""
        ...


def format_address(addr: int) -> str:
    """strace's printaddr: NULL for zero, otherwise the address in hex."""
    return f"{addr:#x}" if addr else "NULL"


def escape_bytes(data: bytes) -> str:
    out = []
    for index, byte in enumerate(data):
        named = _NAMED_ESCAPES.get(byte)
        if named is not None:
            out.append(named)
        elif 0x20 <= byte < 0x7f:
            out.append(chr(byte))
        else:
            next_is_octal_digit = index + 1 < len(data) and 0x30 <= data[index + 1] <= 0x37
            out.append("\\" + (f"{byte:03o}" if next_is_octal_digit else f"{byte:o}"))
    return "".join(out)


def quote(data: bytes, truncated: bool = False) -> str:
    return '"' + escape_bytes(data) + '"' + (ELLIPSIS if truncated else "")


def format_buffer(mem: MemReader, addr: int, length: int) -> str:
    """A buffer of `length` bytes (write's data, read's result): the first 32, then "..."."""
    if length <= 0:
        return '""' if length == 0 else format_address(addr)
    shown = min(length, MAX_STRLEN)
    data = mem.read(addr, shown)
    if data is None or len(data) < shown:
        return format_address(addr)
    return quote(data, truncated=length > MAX_STRLEN)


def format_cstring(mem: MemReader, addr: int, limit: int = MAX_STRLEN) -> str:
    """A NUL-terminated string (argv entries): up to `limit` characters, "..." when longer."""
    if not addr:
        return "NULL"
    data = mem.read_cstr(addr, limit + 1)
    if data is None:
        return format_address(addr)
    return quote(data[:limit], truncated=len(data) > limit)


def format_path(mem: MemReader, addr: int) -> str:
    """A path argument: printed whole (strace's printpath), NULL and bad addresses as such."""
    return format_cstring(mem, addr, PATH_MAX - 1)


def read_word(mem: MemReader, addr: int, size: int, signed: bool = False) -> int | None:
    data = mem.read(addr, size)
    if data is None or len(data) < size:
        return None
    return int.from_bytes(data, "little", signed=signed)


def read_words(mem: MemReader, addr: int, size: int, count: int) -> list[int] | None:
    """`count` little-endian unsigned words of `size` bytes (x86 is little-endian)."""
    data = mem.read(addr, size * count)
    if data is None or len(data) < size * count:
        return None
    return [int.from_bytes(data[i:i + size], "little") for i in range(0, size * count, size)]


def format_argv(mem: MemReader, addr: int, word: int) -> str:
    """`["ls", "-l"]`: the NULL-terminated pointer array of execve; 32 entries at most."""
    if not addr:
        return "NULL"
    items = []
    for index in range(MAX_STRLEN + 1):
        pointer = read_word(mem, addr + index * word, word)
        if pointer is None:
            return format_address(addr) if index == 0 else "[" + ", ".join(items) + f", {ELLIPSIS}]"
        if pointer == 0:
            return "[" + ", ".join(items) + "]"
        if index == MAX_STRLEN:
            break
        items.append(format_cstring(mem, pointer))
    return "[" + ", ".join(items) + ", " + ELLIPSIS + "]"


def format_envp(mem: MemReader, addr: int, word: int) -> str:
    """strace's default for execve's environment: `0x7ffc... /* 35 vars */`."""
    if not addr:
        return "NULL"
    count = 0
    while count < _MAX_ENV_VARS:
        pointer = read_word(mem, addr + count * word, word)
        if pointer is None:
            return format_address(addr)
        if pointer == 0:
            return f"{addr:#x} /* {count} var{'' if count == 1 else 's'} */"
        count += 1
    return format_address(addr)
