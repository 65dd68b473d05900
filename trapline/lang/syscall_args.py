"""args.NAME in tracepoint:syscalls probes: the arguments as the kernel's declarations name them
(kernel_model/syscalls/, re-exported by the door: kernel_model/debug/abi.py), and `ret` at the
exit.

Linux names some tracepoint fields after SYSCALL_DEFINE's parameters where the man pages
(which the declarations follow) say otherwise: `filename` for open/openat/execve/stat's path
(fs/open.c do_sys_open, fs/exec.c), `dfd` for the directory descriptor. Both names are taken,
so that bpftrace's one-liners (`str(args.filename)`) run unchanged. raw_syscalls' args.id is
the call's number in the table of the ABI it was made through.
"""
from kernel_model.debug.abi import I386_NUMBERS, X86_64_NUMBERS, signature

LINUX_NAMES = {"filename": "pathname", "dfd": "dirfd"}


def number_of(name: str, abi: str) -> int:
    """The call's number in `abi`'s table (raw_syscalls' args.id)."""
    table = I386_NUMBERS if abi == "i386" else X86_64_NUMBERS
    numbers = _NUMBERS.get(abi)
    if numbers is None:
        numbers = _NUMBERS[abi] = {n: number for number, n in table.items()}
    return numbers.get(name, -1)


_NUMBERS: dict[str, dict] = {}


def field_names(name: str, abi: str) -> tuple[str, ...]:
    declared = signature(name, abi)
    return tuple(arg for arg, _ in declared) if declared else ()


def index_of(name: str, abi: str, field: str) -> int | None:
    names = field_names(name, abi)
    for candidate in (field, LINUX_NAMES.get(field)):
        if candidate in names:
            return names.index(candidate)
    return None


def check_field(attach, field: str) -> str | None:
    """Why args.FIELD is not there in the tracepoint `attach` (None: it is)."""
    if attach.raw:
        wanted = ("id",) if attach.entry else ("id", "ret")
        return None if field in wanted else \
            f"raw_syscalls:{'sys_enter' if attach.entry else 'sys_exit'} has args.{', args.'.join(wanted)}"
    if not attach.entry:
        return None if field == "ret" else "sys_exit_ tracepoints have args.ret only"
    if attach.wildcard:
        return None                       # checked per call when it fires
    if any(index_of(attach.syscall, abi, field) is not None for abi in ("x86_64", "i386")):
        return None
    names = field_names(attach.syscall, "x86_64") or field_names(attach.syscall, "i386")
    known = ", ".join(names) if names else "none declared"
    return f"{attach.syscall} has no argument {field!r} (its arguments: {known})"
