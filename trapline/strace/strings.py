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


def max_strlen(mem) -> int:
    """-s N, carried by the reader of the traced process (client.py); 32 by default."""
    return getattr(mem, "max_strlen", MAX_STRLEN)


# strace shows at most -s elements of an array, then "...", unless -v (util.c's
# sequence_truncation_needed asks abbrev(tcp)); under -v the sandbox still stops at UIO_MAXIOV
# (include/uapi/linux/uio.h), the most any call here takes, so that a guest's bogus count
# cannot make it read gigabytes (a writev of 0x7fffffff entries, found by the syscall fuzzer)
UNABBREVIATED_ELEMENTS = 1024


def max_elements(mem) -> int:
    """How many elements of an array are shown before "...": -s N's N; -v: all of them."""
    return UNABBREVIATED_ELEMENTS if getattr(mem, "verbose", False) else max_strlen(mem)


def _wants_hex(data: bytes, hex_strings: int) -> bool:
    """-xx: every string in hex; -x: a string with a byte that is neither printable ASCII nor
    one of C's named escapes (strace's string_quote)."""
    if hex_strings >= 2:
        return True
    return bool(hex_strings) and any(
        not 0x20 <= byte < 0x7f and byte not in _NAMED_ESCAPES for byte in data)


def escape_bytes(data: bytes, hex_strings: int = 0) -> str:
    if hex_strings and _wants_hex(data, hex_strings):
        return "".join(f"\\x{byte:02x}" for byte in data)
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


def quote(data: bytes, truncated: bool = False, hex_strings: int = 0) -> str:
    return '"' + escape_bytes(data, hex_strings) + '"' + (ELLIPSIS if truncated else "")


def quote_from(mem, data: bytes, truncated: bool = False) -> str:
    """quote() with the -x setting of the traced process's reader."""
    return quote(data, truncated, getattr(mem, "hex_strings", 0))


XATTR_SIZE_MAX = 65536


def format_buffer(mem: MemReader, addr: int, length: int) -> str:
    """A buffer of `length` bytes (write's data, read's result): the first 32, then "...";
    NULL whatever the length (strace's printstr checks the address first)."""
    if not addr:
        return "NULL"
    if length <= 0:
        return '""' if length == 0 else format_address(addr)
    limit = max_strlen(mem)
    shown = min(length, limit)
    data = mem.read(addr, shown)
    if data is None or len(data) < shown:
        return format_address(addr)
    return quote_from(mem, data, truncated=length > limit)


def format_xattr_value(mem: MemReader, addr: int, length: int) -> str:
    """An extended attribute's value (strace's print_xattr_val:
    printstr_ex with QUOTE_OMIT_TRAILING_0): the first 32 bytes, a NUL at the last of them
    dropped and taken for the end (no "..."), else "..." when there is more; an address past
    XATTR_SIZE_MAX."""
    if length > XATTR_SIZE_MAX:
        return format_address(addr)
    if not addr:
        return "NULL"
    shown = min(max(length, 0), max_strlen(mem))
    data = mem.read(addr, shown)
    if data is None or len(data) < shown:
        return format_address(addr)
    if data.endswith(b"\0"):
        return quote_from(mem, data[:-1])
    return quote_from(mem, data, truncated=length > shown)


def format_buffer_hex(mem: MemReader, addr: int, length: int) -> str:
    """A buffer every byte of which is shown as \\xNN (strace's QUOTE_FORCE_HEX)."""
    if not addr:
        return "NULL"
    limit = max_strlen(mem)
    shown = min(max(length, 0), limit)
    data = mem.read(addr, shown)
    if data is None or len(data) < shown:
        return format_address(addr)
    return quote(data, truncated=length > limit, hex_strings=2)


def format_cstring(mem: MemReader, addr: int, limit: int | None = None) -> str:
    """A NUL-terminated string (argv entries): up to `limit` characters (-s), "..." when
    longer."""
    if not addr:
        return "NULL"
    limit = max_strlen(mem) if limit is None else limit
    data = mem.read_cstr(addr, limit + 1)
    if data is None:
        return format_address(addr)
    return quote_from(mem, data[:limit], truncated=len(data) > limit)


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
    """`["ls", "-l"]`: the NULL-terminated pointer array of execve; -s N's N entries at most."""
    if not addr:
        return "NULL"
    items = []
    most = max_elements(mem)
    for index in range(most + 1):
        pointer = read_word(mem, addr + index * word, word)
        if pointer is None:
            return format_address(addr) if index == 0 else "[" + ", ".join(items) + f", {ELLIPSIS}]"
        if pointer == 0:
            return "[" + ", ".join(items) + "]"
        if index == most:
            break
        items.append(format_cstring(mem, pointer))
    return "[" + ", ".join(items) + ", " + ELLIPSIS + "]"


def format_envp(mem: MemReader, addr: int, word: int) -> str:
    """strace's default for execve's environment: `0x7ffc... /* 35 vars */`; in full with
    --no-abbrev (strace -v), as argv."""
    if not addr:
        return "NULL"
    if getattr(mem, "verbose", False):
        return format_argv(mem, addr, word)
    count = 0
    while count < _MAX_ENV_VARS:
        pointer = read_word(mem, addr + count * word, word)
        if pointer is None:
            return format_address(addr)
        if pointer == 0:
            return f"{addr:#x} /* {count} var{'' if count == 1 else 's'} */"
        count += 1
    return format_address(addr)


def _string_array(strings: list[bytes], limit: int, most: int, hex_strings: int) -> str:
    items = [quote(item[:limit], len(item) > limit, hex_strings) for item in strings[:most]]
    if len(strings) > most:
        items.append(ELLIPSIS)
    return "[" + ", ".join(items) + "]"


def format_execve_call(path: bytes, argv: list[bytes], envp: int, env: list[bytes],
                       limit: int = MAX_STRLEN, verbose: bool = False, hex_strings: int = 0) -> str:
    """The execve(2) a tool makes to start its program, from the tool's own copy of the
    arguments: `execve("/bin/ls", ["ls", "-l"], 0x7ffd... /* 4 vars */)`; -x/-xx apply to
    its strings as to any other's (strace -xx shows the path in hex too)."""
    most = UNABBREVIATED_ELEMENTS if verbose else limit
    if verbose:
        shown_env = _string_array(env, limit, most, hex_strings)
    else:
        shown_env = f"{format_address(envp)} /* {len(env)} var{'' if len(env) == 1 else 's'} */"
    return (f"execve({quote(path, hex_strings=hex_strings)}, "
            f"{_string_array(argv, limit, most, hex_strings)}, {shown_env})")
