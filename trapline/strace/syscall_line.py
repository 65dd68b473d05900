"""One traced syscall as one line of strace 6.x text: `openat(AT_FDCWD, "f", O_RDONLY) = 3`.

The formatter works after the syscall returned (strace's exit-time view): input arguments are
decoded from the values they had on entry, output buffers and structures are read from memory
only when the call succeeded, otherwise their address is shown. Argument kinds are the
kernel's declarations of its syscalls, re-exported by the door (kernel_model/debug/abi.py);
the few syscalls whose argument list depends on another argument (open's mode, fcntl, ioctl,
futex, clone, _llseek, i386 old mmap) are special-cased in special_calls.py; the per-kind
formatters are in value_formatters.py.
"""
from collections.abc import Callable, Sequence

from kernel_model.debug.abi import Kind, Ret, flags, return_kind, signal_name, signature

from . import arguments, structs, sysv_ipc, waits, xlat_style
from .expressions import FD_RETURNING
from .errnos import format_error_return, format_raw_error_return
from .sockets import demultiplexed
from .special_calls import _SPECIAL
from .strings import MemReader
from .value_formatters import _Call, _fd_text, _signed, _value_formatter

__all__ = ["MemReader", "entry_arguments", "format_call", "format_parts", "format_syscall", "format_exit", "format_killed", "unknown_name"]


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
    masked = args if isinstance(args, sysv_ipc.IpcSubcall) else tuple([a & mask for a in args])
    call = _Call(name, masked, _signed(ret, abi_bits), mem, abi_bits)
    if getattr(mem, "raw", False):
        return _raw_args(call), _raw_return(call), call.failed
    return _format_args(call), _format_return(call), call.failed


def _raw_args(call: _Call) -> list[str]:
    """-e raw=NAME: the call's argument registers in hex, undecoded (strace's printargs)."""
    params = signature(call.name, "i386" if call.bits == 32 else "x86_64")
    if sysv_ipc.indirect(call):             # (as many as strace's subcall table gives it)
        params = None
    count = len(call.args) if params is None else sum(
        2 if kind is Kind.OFFSET64_SPLIT else 1 for _, kind in params)
    return [flags.format_hex(value) for value in call.args[:count]]


def _raw_return(call: _Call) -> str:
    """-e raw=NAME: a result in hex (`= 0x3`), an error as ever, no result as `?`."""
    if return_kind(call.name) is Ret.NONE:
        return "?"
    if call.failed:
        return format_raw_error_return(-call.ret)
    return flags.format_hex(call.ret & ((1 << call.bits) - 1))


def format_call(name: str, args: Sequence[int], ret: int, mem: MemReader,
                abi_bits: int) -> tuple[str, str, bool]:
    """(`name(args...)`, the text after `= `, whether it failed) for a finished syscall."""
    if name == "socketcall":
        name, args = demultiplexed(name, args, mem, abi_bits)
    elif name == "ipc":
        name, args = sysv_ipc.demultiplexed(name, args, abi_bits)
    texts, result, failed = format_parts(name, args, ret, mem, abi_bits)
    return f"{name}({', '.join(texts)})", result, failed


_OUTPUT_KINDS = frozenset(kind for kind in Kind if kind.name.endswith("_OUT")) | {Kind.STAT,
                                                                                  Kind.STAT64}


def entry_arguments(name: str, abi_bits: int, shown: int, args: Sequence[int] = ()) -> int:
    """How many of the `shown` arguments strace prints at the call's entry: those before the
    first the kernel fills in (read's buffer, wait4's status...), all for the calls decoded
    specially. The rest come after `<... NAME resumed>`."""
    if name in _SPECIAL:
        return shown
    if name in sysv_ipc.DECODERS:
        return sysv_ipc.entry_count(name, args, shown)
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
    if name in sysv_ipc.DECODERS:           # (direct, or an ipc(2) subcall: sysv_ipc.py)
        return sysv_ipc.DECODERS[name]
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


# --- return value ------------------------------------------------------------------------------

def _format_return(call: _Call) -> str:
    if call.name == "shmat" and sysv_ipc.indirect(call):
        address = sysv_ipc.indirect_shmat_return(call)
        if address is not None:
            return address
    text = _format_return_value(call)
    note = _RETURN_NOTES.get(call.name)
    return text + note(call) if note is not None and not call.failed else text


def _set_thread_area_note(call: _Call) -> str:
    entry = structs.user_desc_entry(call.mem, call.arg(0))
    return "" if entry is None else f" (entry_number={entry})"


# Calls whose new descriptors are in an array (pipe's [3, 4]); their result is a plain 0.
FDS_IN_MEMORY = frozenset({"pipe", "pipe2", "socketpair"})

_RETURN_NOTES: dict[str, Callable[[_Call], str]] = {"set_thread_area": _set_thread_area_note,
                                                   **waits.RETURN_NOTES}


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
    if call.name in FD_RETURNING and call.name not in FDS_IN_MEMORY:
        return _fd_text(call.ret, call)
    return str(call.ret)


def _fcntl_return(cmd: int, value: int) -> str:
    """F_GETFL and F_GETFD results are flag sets; strace shows them in hex and decoded."""
    if cmd == flags.F_GETFL:
        return f"{flags.format_hex(value)} (flags {xlat_style.named(value, flags.decode_open_flags(value))})"
    if cmd == flags.F_GETFD and value:
        return f"{value:#x} (flags {xlat_style.flag_set(value, flags.FD_FLAGS)})"
    return str(value)
