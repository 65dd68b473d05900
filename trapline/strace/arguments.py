"""strace's view of arguments the kernel declares with a generic kind (kernel_model/syscalls/:
HEX, INT, STRUCT): which flag table, enum or structure strace 6.x prints for them.

Data first: OVERRIDES maps (syscall, argument index) to a decoder, each decoder a small
function of (call, index, value) built from flag tables (kernel_model/flags.py) or structure
readers (structs.py). Output structures show their address when the call failed, as strace does.
"""
from collections.abc import Callable

from kernel_model.debug.abi import flags

from . import sockets, structs, sysv_ipc, waits, xlat_style
from .strings import format_address

Decoder = Callable[[object, int, int], str]


def flag_set(table, zero: str = "0") -> Decoder:
    return lambda call, index, value: xlat_style.flag_set(value, table, zero)


def enum(table, prefix: str) -> Decoder:
    return lambda call, index, value: xlat_style.enum(value, table, prefix)


def output(read: Callable[[object, int], str]) -> Decoder:
    """A structure the kernel fills in: its address unless the call succeeded."""
    def decode(call, index, value):
        if call.failed or not value:
            return format_address(value)
        return read(call, value)
    return decode


def statx_flags(call, index, value) -> str:
    """`AT_STATX_SYNC_AS_STAT|AT_NO_AUTOMOUNT`: the sync type by name first, then the rest."""
    sync_value, rest_value = value & flags.AT_STATX_SYNC_TYPE, value & ~flags.AT_STATX_SYNC_TYPE
    sync = flags.AT_STATX_SYNC_TYPES.get(sync_value, "")
    # -X raw: strace prints a zero sync type as nothing and keeps the '|' (`|0x1800`)
    raw_zero = sync_value == 0 and xlat_style.STYLE.get() == "raw"
    sync = "" if raw_zero else xlat_style.named(sync_value, sync)
    rest = xlat_style.flag_set(rest_value, flags.AT_FLAGS, zero="") if rest_value else ""
    return f"{sync}|{rest}" if rest else (sync or "0")


def _signed_int(value: int) -> int:
    value &= 0xffffffff
    return value - (1 << 32) if value >> 31 else value


def _fd_argument(call, index, value) -> str:
    from .value_formatters import _fd_text
    return _fd_text(_signed_int(value), call)


def _long_argument(call, index, value) -> str:
    value &= (1 << call.bits) - 1
    return str(value - (1 << call.bits) if value >> (call.bits - 1) else value)


FADVICE = {0: "POSIX_FADV_NORMAL", 1: "POSIX_FADV_RANDOM", 2: "POSIX_FADV_SEQUENTIAL",
           3: "POSIX_FADV_WILLNEED", 4: "POSIX_FADV_DONTNEED", 5: "POSIX_FADV_NOREUSE"}


def fadvice(value: int) -> str:
    return FADVICE.get(value & 0xffffffff, str(_signed_int(value)))


def _advice(call, index, value) -> str:
    return fadvice(value)


def _int_argument(call, index, value) -> str:
    return str(_signed_int(value))


def _gid_size(call) -> int:
    """i386's getgroups and setgroups (80, 81) take 16-bit gid_t; the ...32 calls and x86-64's
    take 32-bit ones."""
    return 2 if call.bits == 32 and not call.name.endswith("32") else 4


def _groups_got(call, value) -> str:
    """getgroups' list: `ret` ids, as strace reads them whatever the size was (with a size
    of 0 the kernel only counts them)."""
    return structs.format_id_list(call.mem, value, call.ret, _gid_size(call))


def _groups_given(call, index, value) -> str:
    return structs.format_id_list(call.mem, value, _signed_int(call.arg(0)), _gid_size(call))


def _sigset_sized_by(size_index: int) -> Decoder:
    return lambda call, index, value: structs.format_sigset(call.mem, value, call.arg(size_index))


def random_bytes(call, index, value) -> str:
    """getrandom's buffer: strace always shows random bytes in hex."""
    from .strings import format_buffer_hex
    return format_address(value) if call.failed else format_buffer_hex(call.mem, value, call.ret)


OVERRIDES: dict[tuple[str, int], Decoder] = {
    ("getrandom", 0): random_bytes,
    ("getrandom", 2): flag_set(flags.GRND_FLAGS),
    ("statx", 2): statx_flags,
    ("statx", 3): flag_set(flags.STATX_MASK),
    ("statx", 4): output(lambda call, value: structs.format_statx(call.mem, value)),
    ("setitimer", 0): enum(flags.ITIMER_WHICH, "ITIMER_"),
    ("setitimer", 1): lambda call, index, value: structs.format_itimerval(call.mem, value, call.word),
    ("setitimer", 2): output(lambda call, value: structs.format_itimerval(call.mem, value, call.word)),
    ("getitimer", 0): enum(flags.ITIMER_WHICH, "ITIMER_"),
    ("getitimer", 1): output(lambda call, value: structs.format_itimerval(call.mem, value, call.word)),
    ("getdents64", 1): output(lambda call, value: structs.format_dirents(call.mem, value, call.ret, 16)),
    ("getdents", 1): output(lambda call, value: structs.format_dirents(call.mem, value, call.ret,
                                                                        2 * call.word, call.word)),
    ("sched_getaffinity", 2): output(lambda call, value: structs.format_cpu_set(call.mem, value,
                                                                               call.ret)),
    ("sched_setaffinity", 2): lambda call, index, value: structs.format_cpu_set(
        call.mem, value, call.arg(1)),
}
OVERRIDES.update(sockets.OVERRIDES)         # the socket calls (sockets.py)
OVERRIDES[("utimensat", 2)] = lambda call, index, value: structs.format_utimens(
    call.mem, value, call.word)

OVERRIDES.update(waits.OVERRIDES)           # the sleeps and waits (waits.py)
OVERRIDES.update(sysv_ipc.OVERRIDES)        # i386's ipc(2) for a call it does not know

# Calls the kernel declares without argument kinds, which strace decodes: their argument lists.
SIGNATURES: dict[str, tuple[Decoder, ...]] = {
    "rt_sigpending": (output(lambda call, value: structs.format_sigset(call.mem, value, call.arg(1))),
                      lambda call, index, value: str(value)),
    "rt_sigsuspend": (_sigset_sized_by(1), lambda call, index, value: str(value)),
    "pause": (),
    **{name: (_int_argument, output(_groups_got)) for name in ("getgroups", "getgroups32")},
    **{name: (_int_argument, _groups_given) for name in ("setgroups", "setgroups32")},
    "fadvise64": (_fd_argument, _long_argument, _long_argument, _advice),
}


# The overridden arguments that the kernel fills in (shown after `<... NAME resumed>`), and the
# arguments printed at the entry of the calls of SIGNATURES.
OUTPUTS = frozenset({("getrandom", 0), ("statx", 4), ("setitimer", 2), ("getitimer", 1),
                     ("getdents64", 1), ("getdents", 1), ("sched_getaffinity", 2)}) \
    | sockets.OUTPUTS | waits.OUTPUTS
ENTRY_COUNTS = {"rt_sigpending": 0, "getgroups": 1, "getgroups32": 1}


def prctl_args(call) -> list[str]:
    """`prctl(PR_GET_NAME, "busybox")`, `prctl(PR_SET_PDEATHSIG, SIGKILL)`: the option by
    name, then what that option takes (flags.PR_ARGUMENTS); others as four hex words."""
    from .strings import format_cstring
    option = call.arg(0) & 0xffffffff
    name = flags.PR_OPTIONS.get(option)
    if name is None:
        return [f"{flags.format_hex(option)} /* PR_??? */",
                *(flags.format_hex(call.arg(i)) for i in range(1, 5))]
    shape = flags.PR_ARGUMENTS.get(name)
    rest: list[str]
    if shape == ():
        rest = []
    elif shape == "str":
        rest = [format_cstring(call.mem, call.arg(1), 15)]
    elif shape == "str_out":
        rest = [format_address(call.arg(1)) if call.failed
                else format_cstring(call.mem, call.arg(1), 15)]
    elif shape == "signal":
        rest = [xlat_style.signal(call.arg(1)) if call.arg(1) else "0"]
    elif shape == "int*":
        rest = [format_address(call.arg(1)) if call.failed or not call.arg(1)
                else structs.format_int_array(call.mem, call.arg(1), 1)]
    elif shape == "ulong":
        rest = [str(call.arg(1))]
    elif shape == "ulong4":
        rest = [str(call.arg(i)) for i in range(1, 5)]
    else:
        rest = [flags.format_hex(call.arg(i)) for i in range(1, 5)]
    return [name, *rest]


def mremap_args(call) -> list[str]:
    """new_address only with MREMAP_FIXED, as strace prints mremap."""
    texts = [format_address(call.arg(0)), str(call.arg(1)), str(call.arg(2)),
             xlat_style.flag_set(call.arg(3), flags.MREMAP_FLAGS)]
    if call.arg(3) & flags.MREMAP_FIXED:
        texts.append(format_address(call.arg(4)))
    return texts
