"""Each argument's text from the kind the kernel declares for it (kernel_model/syscalls/kinds.py):
numbers, fds, named constants (with -X raw/verbose), the memory an input points to, and the
structure an output fills in once the call succeeded. Also the finished-call record (_Call) that
every formatter reads.

Apart from syscall_line.py because it is the per-kind table, independent of which syscall is
being printed; syscall_line.py plans a call's arguments from it and special_calls.py reuses it.
"""
from collections.abc import Callable

from kernel_model.debug.abi import Kind, flags, signal_name

from . import fd_details, structs, xlat_style
from .strings import (MemReader, escape_bytes, format_address, format_argv, format_buffer, format_envp,
                      format_path, format_xattr_value, read_words)


MAX_ERRNO = 4095             # include/linux/err.h: -4095..-1 are errors
PAGE_SHIFT = 12              # mmap2's offset unit is 4096 bytes on x86


class _Call:
    """One finished call as the formatters see it (a plain class: one is made per line)."""
    __slots__ = ("name", "args", "ret", "mem", "bits")

    def __init__(self, name: str, args: tuple[int, ...], ret: int, mem: MemReader, bits: int):
        self.name = name
        self.args = args         # masked to the ABI's word size
        self.ret = ret           # signed
        self.mem = mem
        self.bits = bits

    @property
    def word(self) -> int:
        return self.bits // 8

    @property
    def failed(self) -> bool:
        return -MAX_ERRNO <= self.ret < 0

    def arg(self, index: int) -> int:
        return self.args[index] if index < len(self.args) else 0


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _value_formatter(kind: Kind, index: int) -> Callable[[_Call], str]:
    """The formatter of argument `index` of kind `kind`."""
    if kind is Kind.OFFSET64_SPLIT:             # i386: (low, high) of a loff_t
        return lambda call: str(_signed(call.arg(index) | call.arg(index + 1) << 32, 64))
    simple = _SIMPLE.get(kind)
    if simple is not None and kind in _NAMED_CONSTANT_KINDS:
        return lambda call: _xlat(call, call.arg(index), simple, kind)
    if simple is not None:
        return lambda call: simple(call.arg(index), call)
    output = _OUTPUT_DECODERS.get(kind)
    if output is not None:      # output kinds show only an address unless the call worked
        def format_output(call: _Call) -> str:
            value = call.arg(index)
            if call.failed or not value:
                return format_address(value)
            return output(call, index, value)
        return format_output
    return lambda call: _format_memory(call, index, kind, call.arg(index))


def _format_value(call: _Call, index: int, kind: Kind) -> str:
    return _value_formatter(kind, index)(call)


# Kinds whose value strace names from a table: -X raw prints the number instead, -X verbose
# both (`0x80000 /* O_CLOEXEC */`), the default (abbrev) the names.
_NAMED_CONSTANT_KINDS = frozenset({
    Kind.OPEN_FLAGS, Kind.PIPE_FLAGS, Kind.PROT, Kind.MAP_FLAGS, Kind.MREMAP_FLAGS, Kind.MADVISE,
    Kind.SIGNAL, Kind.SIGMASK_HOW, Kind.WHENCE, Kind.CLOCK, Kind.TIMER_FLAGS, Kind.IOCTL_REQ,
    Kind.FCNTL_CMD, Kind.AT_FLAGS, Kind.ACCESS_MODE, Kind.ACCESS_AT_FLAGS, Kind.WAIT_OPTIONS,
    Kind.WAITID_TYPE, Kind.RLIMIT_RESOURCE, Kind.ARCH_PRCTL_CODE, Kind.FUTEX_OP, Kind.DIRFD,
    Kind.XATTR_FLAGS})


def _xlat(call: _Call, value: int, name: Callable[[int, _Call], str], kind: Kind) -> str:
    signed = _signed(value, 32)
    if xlat_style.STYLE.get() == "abbrev" or kind is Kind.DIRFD and signed != flags.AT_FDCWD:
        return name(value, call)
    signed = _signed(value, 32)     # AT_FDCWD as -100, a signal in decimal, flag sets in hex
    raw = str(signed) if signed < 0 or kind is Kind.SIGNAL else None
    return xlat_style.named(value, name(value, call), raw)


def _fd_text(fd: int, call: _Call) -> str:
    """`3`, or with -y `3</etc/passwd>`: the path /proc/PID/fd/3 links to; with -yy a
    socket's protocol and ends, a device's number (fd_details.py)."""
    decode = getattr(call.mem, "decode_fds", 0)
    if not decode:
        return str(fd)
    if decode > 1:
        detailed = _fd_details(fd, call.mem)
        if detailed is not None:
            return f"{fd}<{detailed}>"
    path = call.mem.fd_path(fd)
    return str(fd) if path is None else f"{fd}<{escape_bytes(path)}>"


def _cwd_text(call: _Call) -> str:
    """`AT_FDCWD`, or with -y `AT_FDCWD</tmp>`: the working directory it stands for."""
    if not getattr(call.mem, "decode_fds", 0):
        return "AT_FDCWD"
    return f"AT_FDCWD<{escape_bytes(call.mem.cwd_path())}>"


def _fd_pair(call: _Call, addr: int) -> str:
    """pipe's and socketpair's `[3, 4]`, each descriptor as -y/-yy show it (printpair_fd)."""
    values = read_words(call.mem, addr, 4, 2)
    if values is None:
        return format_address(addr)
    return "[" + ", ".join(_fd_text(_signed(v, 32), call) for v in values) + "]"


def _fd_details(fd: int, mem) -> str | None:
    ends = mem.fd_socket(fd)
    if ends is not None:
        return fd_details.socket_text(ends)
    device = mem.fd_device(fd)
    path = mem.fd_path(fd) if device is not None else None
    return None if path is None else escape_bytes(path) + fd_details.device_suffix(device)


_SIMPLE: dict[Kind, Callable[[int, _Call], str]] = {
    Kind.INT: lambda v, c: str(_signed(v, 32)),
    Kind.FD: lambda v, c: _fd_text(_signed(v, 32), c),
    Kind.PID: lambda v, c: str(_signed(v, 32)),
    Kind.UINT: lambda v, c: str(v & 0xffffffff),
    Kind.LONG: lambda v, c: str(_signed(v, c.bits)),
    Kind.ULONG: lambda v, c: str(v),
    Kind.HEX: lambda v, c: flags.format_hex(v),
    Kind.OCTAL: lambda v, c: flags.format_octal(v),
    Kind.MODE: lambda v, c: flags.format_octal(v),
    Kind.PTR: lambda v, c: format_address(v),
    Kind.STRUCT: lambda v, c: format_address(v),
    Kind.DIRFD: lambda v, c: (_cwd_text(c) if _signed(v, 32) == flags.AT_FDCWD
                              else _fd_text(_signed(v, 32), c)),
    Kind.OPEN_FLAGS: lambda v, c: flags.decode_open_flags(v),
    Kind.PIPE_FLAGS: lambda v, c: flags.decode_flags(v, flags.OPEN_FLAGS),
    Kind.PROT: lambda v, c: flags.decode_prot(v),
    Kind.MAP_FLAGS: lambda v, c: flags.decode_map_flags(v),
    Kind.MMAP_OFFSET: lambda v, c: flags.format_hex(v),
    Kind.MMAP_PGOFF: lambda v, c: flags.format_hex(v << PAGE_SHIFT),
    Kind.MREMAP_FLAGS: lambda v, c: flags.decode_flags(v, flags.MREMAP_FLAGS),
    Kind.MADVISE: lambda v, c: flags.decode_enum(v, flags.MADV_ADVICE, "MADV_"),
    Kind.SIGNAL: lambda v, c: signal_name(_signed(v, 32)),
    Kind.SIGMASK_HOW: lambda v, c: flags.decode_enum(v, flags.SIGMASK_HOW, "SIG_"),
    Kind.WHENCE: lambda v, c: flags.decode_enum(v, flags.WHENCE, "SEEK_"),
    Kind.CLOCK: lambda v, c: flags.decode_enum(v, flags.CLOCKS, "CLOCK_"),
    Kind.TIMER_FLAGS: lambda v, c: flags.decode_flags(v, flags.CLOCK_NANOSLEEP_FLAGS),
    Kind.IOCTL_REQ: lambda v, c: flags.decode_ioctl_request(v & 0xffffffff),
    Kind.FCNTL_CMD: lambda v, c: flags.decode_enum(v, flags.FCNTL_COMMANDS, "F_"),
    Kind.AT_FLAGS: lambda v, c: flags.decode_at_flags(v),
    Kind.ACCESS_MODE: lambda v, c: flags.decode_access_mode(v),
    Kind.ACCESS_AT_FLAGS: lambda v, c: flags.decode_flags(v, flags.AT_ACCESS_FLAGS),
    Kind.WAIT_OPTIONS: lambda v, c: flags.decode_flags(v, flags.WAIT_OPTIONS),
    Kind.WAITID_TYPE: lambda v, c: flags.decode_enum(v, flags.WAITID_TYPES, "P_"),
    Kind.RLIMIT_RESOURCE: lambda v, c: flags.decode_enum(v, flags.RLIMIT_RESOURCES, "RLIMIT_"),
    Kind.ARCH_PRCTL_CODE: lambda v, c: flags.decode_enum(v, flags.ARCH_PRCTL_CODES, "ARCH_"),
    Kind.FUTEX_OP: lambda v, c: flags.decode_futex_op(v),
    Kind.XATTR_FLAGS: lambda v, c: _flag_set(v, flags.XATTR_FLAGS, "XATTR_???"),
}


def _flag_set(value: int, table, unknown: str) -> str:
    """strace's printflags: the names, the unknown bits in hex after them, or alone with
    the table's `unknown` in a comment when no bit has a name."""
    text = flags.decode_flags(value, table)
    if value and not any(value & bits for bits, _name in table):
        text += f" /* {unknown} */"
    return text


def _format_memory(call: _Call, index: int, kind: Kind, value: int) -> str:
    """Kinds that read guest memory as the caller passed it."""
    mem, word = call.mem, call.word
    if kind is Kind.PATH:
        return format_path(mem, value)
    if kind is Kind.BUF_IN:
        return format_buffer(mem, value, call.arg(index + 1))
    if kind is Kind.XATTR_VALUE_IN:
        return format_xattr_value(mem, value, call.arg(index + 1))
    if kind is Kind.IOVEC_IN:
        return structs.format_iovec(mem, value, _signed(call.arg(index + 1), 32), word, None)
    if kind is Kind.ARGV:
        return format_argv(mem, value, word)
    if kind is Kind.ENVP:
        return format_envp(mem, value, word)
    if kind is Kind.SIGSET_IN:
        return structs.format_sigset(mem, value, call.arg(index + 2))
    if kind is Kind.SIGACTION_IN:
        return structs.format_sigaction(mem, value, word)
    if kind is Kind.TIMESPEC_IN:
        return structs.format_timespec(mem, value, word)
    if kind is Kind.TIMESPEC64_IN:
        return structs.format_timespec(mem, value, 8)
    if kind is Kind.RLIMIT64_IN:
        return structs.format_rlimit(mem, value, 8)
    if kind is Kind.MODE_IF_CREAT:
        raise AssertionError("open's mode is handled by _open_args")
    return format_address(value)


# What the kernel fills in, read once the call succeeded: (call, argument index, address).
_OUTPUT_DECODERS: dict[Kind, Callable[[_Call, int, int], str]] = {
    Kind.BUF_OUT: lambda c, i, v: format_buffer(c.mem, v, c.ret),
    Kind.XATTR_VALUE_OUT: lambda c, i, v: format_xattr_value(c.mem, v, c.ret),
    # listxattr's names (strace's print_xattr_list): an address when the size asked was 0
    Kind.XATTR_LIST_OUT: lambda c, i, v: (format_buffer(c.mem, v, c.ret) if c.arg(i + 1)
                                          else format_address(v)),
    Kind.STR_OUT: lambda c, i, v: format_path(c.mem, v),
    Kind.IOVEC_OUT: lambda c, i, v: structs.format_iovec(
        c.mem, v, _signed(c.arg(i + 1), 32), c.word, c.ret),
    Kind.SIGSET_OUT: lambda c, i, v: structs.format_sigset(c.mem, v, c.arg(i + 1)),
    Kind.SIGACTION_OUT: lambda c, i, v: structs.format_sigaction(c.mem, v, c.word),
    Kind.TIMESPEC_OUT: lambda c, i, v: structs.format_timespec(c.mem, v, c.word),
    Kind.TIMESPEC64_OUT: lambda c, i, v: structs.format_timespec(c.mem, v, 8),
    Kind.TIMEVAL_OUT: lambda c, i, v: structs.format_timeval(c.mem, v, c.word),
    Kind.RLIMIT_OUT: lambda c, i, v: structs.format_rlimit(c.mem, v, c.word),
    Kind.RLIMIT64_OUT: lambda c, i, v: structs.format_rlimit(c.mem, v, 8),
    Kind.UTSNAME_OUT: lambda c, i, v: structs.format_utsname(c.mem, v),
    Kind.PIPEFD_OUT: lambda c, i, v: _fd_pair(c, v),
    Kind.INT_OUT: lambda c, i, v: structs.format_int_array(c.mem, v, 1),
    Kind.LOFF_OUT: lambda c, i, v: structs.format_loff(c.mem, v),
    Kind.WSTATUS_OUT: lambda c, i, v: (structs.format_wait_status(c.mem, v) if c.ret > 0
                                       else format_address(v)),
    Kind.STAT: lambda c, i, v: structs.format_stat(c.mem, v,
                                                   "stat64" if c.bits == 64 else "stat32"),
    Kind.STAT64: lambda c, i, v: structs.format_stat(c.mem, v, "stat64_i386"),
}
