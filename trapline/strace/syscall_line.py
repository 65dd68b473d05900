"""One traced syscall as one line of strace 6.x text: `openat(AT_FDCWD, "f", O_RDONLY) = 3`.

The formatter works after the syscall returned (strace's exit-time view): input arguments are
decoded from the values they had on entry, output buffers and structures are read from memory
only when the call succeeded, otherwise their address is shown. Argument kinds are the
kernel's declarations of its syscalls, re-exported by the door (kernel_model/debug/abi.py);
the few syscalls whose argument list depends on another argument (open's mode, fcntl, ioctl,
futex, clone, _llseek, i386 old mmap) are special-cased here.
"""
from collections.abc import Callable, Sequence

from kernel_model.debug.abi import Kind, Ret, flags, return_kind, signal_name, signature

from . import arguments, structs
from .expressions import FD_RETURNING
from .errnos import format_error_return
from .strings import (MemReader, escape_bytes, format_address, format_argv, format_buffer, format_envp,
                      format_path, read_words)

__all__ = ["MemReader", "entry_arguments", "format_call", "format_parts", "format_syscall", "format_exit", "format_killed", "unknown_name"]

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


def unknown_name(number: int) -> str:
    """strace's name for a syscall number it does not know: syscall_0x1b3."""
    return f"syscall_{number:#x}"


def format_parts(name: str, args: Sequence[int], ret: int, mem: MemReader,
                 abi_bits: int) -> tuple[list[str], str, bool]:
    """(each argument's text, the text after `= `, whether it failed) for a finished syscall;
    `args` and `ret` are raw register values."""
    if abi_bits not in (32, 64):
        raise ValueError(f"abi_bits must be 32 or 64, not {abi_bits}")
    mask = (1 << abi_bits) - 1
    call = _Call(name, tuple([a & mask for a in args]), _signed(ret, abi_bits), mem, abi_bits)
    return _format_args(call), _format_return(call), call.failed


def format_call(name: str, args: Sequence[int], ret: int, mem: MemReader,
                abi_bits: int) -> tuple[str, str, bool]:
    """(`name(args...)`, the text after `= `, whether it failed) for a finished syscall."""
    texts, result, failed = format_parts(name, args, ret, mem, abi_bits)
    return f"{name}({', '.join(texts)})", result, failed


_OUTPUT_KINDS = frozenset(kind for kind in Kind if kind.name.endswith("_OUT")) | {Kind.STAT,
                                                                                  Kind.STAT64}


def entry_arguments(name: str, abi_bits: int, shown: int) -> int:
    """How many of the `shown` arguments strace prints at the call's entry: those before the
    first the kernel fills in (read's buffer, wait4's status...), all for the calls decoded
    specially. The rest come after `<... NAME resumed>`."""
    if name in _SPECIAL:
        return shown
    params = signature(name, "i386" if abi_bits == 32 else "x86_64")
    if params is None:
        return arguments.ENTRY_COUNTS.get(name, shown)
    word = 0
    for index, (_, kind) in enumerate(params):
        if kind in _OUTPUT_KINDS or (name, word) in arguments.OUTPUTS:
            return min(index, shown)
        word += 2 if kind is Kind.OFFSET64_SPLIT else 1
    return shown


def format_syscall(name: str, args: Sequence[int], ret: int, mem: MemReader, abi_bits: int,
                   align: int = 0) -> str:
    """The strace line for a finished syscall. `align` pads to strace's `-a` column (strace's
    default is 40; 0 means no padding)."""
    head, result, _ = format_call(name, args, ret, mem, abi_bits)
    head += " "
    if align:
        head = head.ljust(align)
    return f"{head}= {result}"


def format_exit(status: int) -> str:
    return f"+++ exited with {status} +++"


def format_killed(sig: int, core_dumped: bool = False) -> str:
    return f"+++ killed by {signal_name(sig)}{' (core dumped)' if core_dumped else ''} +++"


# --- arguments ---------------------------------------------------------------------------------

def _format_args(call: _Call) -> list[str]:
    plan = _PLANS.get((call.name, call.bits))
    if plan is None:
        plan = _PLANS[(call.name, call.bits)] = _plan(call.name, call.bits)
    return plan(call)


# (name, ABI bits) -> the call's argument formatter, built once from the declarations and the
# tables (arguments.py) on the call's first line: a line then costs one call per argument.
_PLANS: dict[tuple[str, int], Callable[[_Call], list[str]]] = {}


def _plan(name: str, bits: int) -> Callable[[_Call], list[str]]:
    special = _SPECIAL.get(name)
    if special is not None and not (name == "mmap" and bits == 64):
        return special
    params = signature(name, "i386" if bits == 32 else "x86_64")
    if params is None:
        decoders = arguments.SIGNATURES.get(name)
        if decoders is not None:
            return lambda call: [decode(call, index, call.arg(index))
                                 for index, decode in enumerate(decoders)]
        return lambda call: [flags.format_hex(value) for value in call.args]
    formatters, word = [], 0
    for _, kind in params:          # an i386 64-bit offset takes two words
        override = arguments.OVERRIDES.get((name, word))
        formatters.append(_overridden(override, word) if override is not None
                          else _value_formatter(kind, word))
        word += 2 if kind is Kind.OFFSET64_SPLIT else 1
    return lambda call: [format_one(call) for format_one in formatters]


def _overridden(decode, index: int) -> Callable[[_Call], str]:
    return lambda call: decode(call, index, call.arg(index))


def _value_formatter(kind: Kind, index: int) -> Callable[[_Call], str]:
    """The formatter of argument `index` of kind `kind`."""
    if kind is Kind.OFFSET64_SPLIT:             # i386: (low, high) of a loff_t
        return lambda call: str(_signed(call.arg(index) | call.arg(index + 1) << 32, 64))
    simple = _SIMPLE.get(kind)
    if simple is not None and kind in _NAMED_CONSTANT_KINDS:
        return lambda call: _xlat(call, call.arg(index), simple)
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
    Kind.WAITID_TYPE, Kind.RLIMIT_RESOURCE, Kind.ARCH_PRCTL_CODE, Kind.FUTEX_OP, Kind.DIRFD})


def _xlat(call: _Call, value: int, name: Callable[[int, _Call], str]) -> str:
    style = getattr(call.mem, "xlat", "abbrev")
    if style == "abbrev":
        return name(value, call)
    signed = _signed(value, 32)                 # AT_FDCWD as -100, flag sets in hex
    raw = str(signed) if signed < 0 else flags.format_hex(value)
    return raw if style == "raw" else f"{raw} /* {name(value, call)} */"


def _fd_text(fd: int, call: _Call) -> str:
    """`3`, or with -y `3</etc/passwd>`: the path /proc/PID/fd/3 links to."""
    if not getattr(call.mem, "decode_fds", 0):
        return str(fd)
    path = call.mem.fd_path(fd)
    return str(fd) if path is None else f"{fd}<{escape_bytes(path)}>"


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
    Kind.DIRFD: lambda v, c: ("AT_FDCWD" if _signed(v, 32) == flags.AT_FDCWD
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
}


def _format_memory(call: _Call, index: int, kind: Kind, value: int) -> str:
    """Kinds that read guest memory as the caller passed it."""
    mem, word = call.mem, call.word
    if kind is Kind.PATH:
        return format_path(mem, value)
    if kind is Kind.BUF_IN:
        return format_buffer(mem, value, call.arg(index + 1))
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
    Kind.PIPEFD_OUT: lambda c, i, v: structs.format_int_array(c.mem, v, 2),
    Kind.INT_OUT: lambda c, i, v: structs.format_int_array(c.mem, v, 1),
    Kind.LOFF_OUT: lambda c, i, v: structs.format_loff(c.mem, v),
    Kind.WSTATUS_OUT: lambda c, i, v: (structs.format_wait_status(c.mem, v) if c.ret > 0
                                       else format_address(v)),
    Kind.STAT: lambda c, i, v: structs.format_stat(c.mem, v,
                                                   "stat64" if c.bits == 64 else "stat32"),
    Kind.STAT64: lambda c, i, v: structs.format_stat(c.mem, v, "stat64_i386"),
}


# --- syscalls whose arguments depend on each other ---------------------------------------------

def _open_args(call: _Call) -> list[str]:
    """open/openat show a mode only when O_CREAT or O_TMPFILE makes the kernel use it."""
    params = signature(call.name) or ()
    texts = [_format_value(call, i, kind) for i, (_, kind) in enumerate(params[:-1])]
    open_flags = call.arg(len(params) - 2)
    if open_flags & flags.O_CREAT or open_flags & flags.O_TMPFILE == flags.O_TMPFILE:
        texts.append(flags.format_octal(call.arg(len(params) - 1)))
    return texts


_FCNTL_NO_ARG = {flags.F_GETFD, flags.F_GETFL, flags.F_GETOWN, flags.F_GETSIG,
                 flags.F_GETLEASE, flags.F_GETPIPE_SZ, flags.F_GET_SEALS}
_FCNTL_INT_ARG = {flags.F_DUPFD, flags.F_DUPFD_CLOEXEC, flags.F_SETOWN, flags.F_SETSIG,
                  flags.F_SETPIPE_SZ, flags.F_SETLEASE, flags.F_NOTIFY, flags.F_ADD_SEALS}
_FCNTL_STRUCT_ARG = {flags.F_GETLK, flags.F_SETLK, flags.F_SETLKW, flags.F_GETLK64,
                     flags.F_SETLK64, flags.F_SETLKW64, flags.F_OFD_GETLK, flags.F_OFD_SETLK,
                     flags.F_OFD_SETLKW, flags.F_SETOWN_EX, flags.F_GETOWN_EX}


def _fcntl_args(call: _Call) -> list[str]:
    cmd, arg = call.arg(1), call.arg(2)
    texts = [_fd_text(_signed(call.arg(0), 32), call), flags.decode_enum(cmd, flags.FCNTL_COMMANDS, "F_")]
    if cmd in _FCNTL_NO_ARG:
        return texts
    if cmd == flags.F_SETFD:
        texts.append(flags.decode_flags(arg, flags.FD_FLAGS))
    elif cmd == flags.F_SETFL:
        texts.append(flags.decode_open_flags(arg))
    elif cmd in _FCNTL_INT_ARG:
        texts.append(str(_signed(arg, 32)))
    elif cmd in _FCNTL_STRUCT_ARG:
        texts.append(format_address(arg))
    else:
        texts.append(flags.format_hex(arg))
    return texts


def _ioctl_args(call: _Call) -> list[str]:
    request, arg = call.arg(1) & 0xffffffff, call.arg(2)
    texts = [_fd_text(_signed(call.arg(0), 32), call), flags.decode_ioctl_request(request)]
    if request not in flags.IOCTL_REQUESTS:
        texts.append(flags.format_hex(arg))
    elif call.failed or not arg:
        texts.append(format_address(arg))
    elif request == flags.TIOCGWINSZ:
        texts.append(structs.format_winsize(call.mem, arg))
    elif request in (flags.FIONREAD, flags.TIOCGPGRP, flags.TIOCSPGRP, flags.TIOCGPTN):
        texts.append(structs.format_int_array(call.mem, arg, 1))
    else:
        texts.append(format_address(arg))
    return texts


def _futex_args(call: _Call) -> list[str]:
    """futex's argument count and meaning depend on the operation (futex(2))."""
    op = call.arg(1)
    command = op & flags.FUTEX_CMD_MASK
    texts = [format_address(call.arg(0)), flags.decode_futex_op(op), str(_signed(call.arg(2), 32))]
    timeout = lambda: structs.format_timespec(call.mem, call.arg(3), call.word)  # noqa: E731
    bitset = call.arg(5) & 0xffffffff
    bitset_text = ("FUTEX_BITSET_MATCH_ANY" if bitset == flags.FUTEX_BITSET_MATCH_ANY
                   else flags.format_hex(bitset))
    if command == flags.FUTEX_WAIT:
        texts.append(timeout())
    elif command == flags.FUTEX_WAIT_BITSET:
        texts += [timeout(), bitset_text]
    elif command == flags.FUTEX_WAKE_BITSET:
        texts.append(bitset_text)
    elif command == flags.FUTEX_REQUEUE:
        texts += [str(_signed(call.arg(3), 32)), format_address(call.arg(4))]
    elif command == flags.FUTEX_CMP_REQUEUE:
        texts += [str(_signed(call.arg(3), 32)), format_address(call.arg(4)),
                  str(_signed(call.arg(5), 32))]
    elif command != flags.FUTEX_WAKE:
        texts += [flags.format_hex(v) for v in call.args[3:6]]
    return texts


def _llseek_args(call: _Call) -> list[str]:
    """i386 _llseek(fd, high, low, result, whence): strace joins the halves into one offset."""
    offset = _signed((call.arg(1) << 32) | (call.arg(2) & 0xffffffff), 64)
    result = call.arg(3)
    result_text = (format_address(result) if call.failed or not result
                   else structs.format_loff(call.mem, result))
    return [_fd_text(_signed(call.arg(0), 32), call), str(offset), result_text,
            flags.decode_enum(call.arg(4), flags.WHENCE, "SEEK_")]


def _old_mmap_args(call: _Call) -> list[str]:
    """i386 syscall 90 (old_mmap) takes one pointer to the six mmap arguments."""
    values = read_words(call.mem, call.arg(0), 4, 6)
    if values is None:
        return [format_address(call.arg(0))]
    unpacked = _Call("mmap", tuple(values), call.ret, call.mem, call.bits)
    params = signature("mmap") or ()
    return [_format_value(unpacked, i, kind) for i, (_, kind) in enumerate(params)]


def _clone_args(call: _Call) -> list[str]:
    """strace's named form: clone(child_stack=..., flags=...|SIGCHLD, child_tidptr=...).
    The last two registers are (child_tid, tls) on x86-64 but (tls, child_tid) on i386."""
    clone_flags, stack, parent_tid = call.arg(0), call.arg(1), call.arg(2)
    child_tid, tls = ((call.arg(3), call.arg(4)) if call.bits == 64
                      else (call.arg(4), call.arg(3)))
    names = flags.decode_flags(clone_flags & ~flags.CSIGNAL, flags.CLONE_FLAGS, zero="")
    exit_signal = clone_flags & flags.CSIGNAL
    flag_text = "|".join(t for t in (names, signal_name(exit_signal) if exit_signal else "") if t)
    texts = [f"child_stack={format_address(stack)}", f"flags={flag_text or '0'}"]
    if clone_flags & flags.CLONE_PARENT_SETTID:
        shown = (format_address(parent_tid) if call.failed or not parent_tid
                 else structs.format_int_array(call.mem, parent_tid, 1))
        texts.append(f"parent_tid={shown}")
    if clone_flags & flags.CLONE_SETTLS:
        texts.append(f"tls={format_address(tls)}")
    if clone_flags & (flags.CLONE_CHILD_SETTID | flags.CLONE_CHILD_CLEARTID):
        texts.append(f"child_tidptr={format_address(child_tid)}")
    return texts


def _set_thread_area_args(call: _Call) -> list[str]:
    return [structs.format_user_desc(call.mem, call.arg(0))]


def _sigreturn_args(call: _Call) -> list[str]:
    """The client passes the address of the frame's saved mask (structs.SIGRETURN_MASK_OFFSET
    from the stack pointer); i386's sigreturn saves only the 32 old signals there."""
    size = 4 if call.name == "sigreturn" else 8
    return [structs.format_sigreturn_mask(call.mem, call.arg(0), size)]


_SPECIAL: dict[str, Callable[[_Call], list[str]]] = {
    "set_thread_area": _set_thread_area_args, "rt_sigreturn": _sigreturn_args,
    "sigreturn": _sigreturn_args, "prctl": arguments.prctl_args, "mremap": arguments.mremap_args,
    "open": _open_args, "openat": _open_args, "fcntl": _fcntl_args, "fcntl64": _fcntl_args,
    "ioctl": _ioctl_args, "futex": _futex_args, "_llseek": _llseek_args,
    "mmap": _old_mmap_args, "clone": _clone_args,
}


# --- return value ------------------------------------------------------------------------------

def _format_return(call: _Call) -> str:
    text = _format_return_value(call)
    note = _RETURN_NOTES.get(call.name)
    return text + note(call) if note is not None and not call.failed else text


def _set_thread_area_note(call: _Call) -> str:
    entry = structs.user_desc_entry(call.mem, call.arg(0))
    return "" if entry is None else f" (entry_number={entry})"


_RETURN_NOTES: dict[str, Callable[[_Call], str]] = {"set_thread_area": _set_thread_area_note}


def _format_return_value(call: _Call) -> str:
    kind = return_kind(call.name)
    if kind is Ret.NONE:
        return "?"
    if call.failed:
        return format_error_return(-call.ret)
    unsigned = call.ret & ((1 << call.bits) - 1)
    if kind is Ret.HEX:
        return flags.format_hex(unsigned)
    if kind is Ret.OCTAL:
        return flags.format_octal(unsigned)
    if call.name in ("fcntl", "fcntl64"):
        return _fcntl_return(call.arg(1), unsigned)
    if call.name in FD_RETURNING:
        return _fd_text(call.ret, call)
    return str(call.ret)


def _fcntl_return(cmd: int, value: int) -> str:
    """F_GETFL and F_GETFD results are flag sets; strace shows them in hex and decoded."""
    if cmd == flags.F_GETFL:
        return f"{flags.format_hex(value)} (flags {flags.decode_open_flags(value)})"
    if cmd == flags.F_GETFD and value:
        return f"{value:#x} (flags {flags.decode_flags(value, flags.FD_FLAGS)})"
    return str(value)
