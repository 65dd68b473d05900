"""The syscalls whose arguments depend on each other, which strace decodes by hand: open's mode
(only with O_CREAT/O_TMPFILE), fcntl's and ioctl's third argument, futex's operation-dependent
list, clone's named form, i386 _llseek's split offset and old mmap's argument block, and
set_thread_area / sigreturn's structures.

Apart from syscall_line.py because each is a hand-written exception to the declared-kind path;
syscall_line.py looks them up by name in _SPECIAL.
"""
from collections.abc import Callable

from kernel_model.debug.abi import flags, signal_name, signature

from . import arguments, structs, xlat_style
from .strings import format_address, read_words
from .value_formatters import _Call, _fd_text, _format_value, _signed


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
    texts = [_fd_text(_signed(call.arg(0), 32), call), xlat_style.enum(cmd, flags.FCNTL_COMMANDS, "F_")]
    if cmd in _FCNTL_NO_ARG:
        return texts
    if cmd == flags.F_SETFD:
        texts.append(xlat_style.flag_set(arg, flags.FD_FLAGS))
    elif cmd == flags.F_SETFL:
        texts.append(xlat_style.named(arg, flags.decode_open_flags(arg)))
    elif cmd in _FCNTL_INT_ARG:
        texts.append(str(_signed(arg, 32)))
    elif cmd in _FCNTL_STRUCT_ARG:
        texts.append(format_address(arg))
    else:
        texts.append(flags.format_hex(arg))
    return texts


def _ioctl_args(call: _Call) -> list[str]:
    request, arg = call.arg(1) & 0xffffffff, call.arg(2)
    texts = [_fd_text(_signed(call.arg(0), 32), call),
             xlat_style.named(request, flags.decode_ioctl_request(request))]
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
    texts = [format_address(call.arg(0)), xlat_style.named(op, flags.decode_futex_op(op)),
             str(_signed(call.arg(2), 32))]
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
            xlat_style.enum(call.arg(4), flags.WHENCE, "SEEK_")]


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


def _fadvise64_64_args(call: _Call) -> list[str]:
    """i386 fadvise64_64(fd, offset low, high, len low, high, advice): the halves joined."""
    offset = _signed(call.arg(1) | call.arg(2) << 32, 64)
    length = _signed(call.arg(3) | call.arg(4) << 32, 64)
    return [_fd_text(_signed(call.arg(0), 32), call), str(offset), str(length),
            arguments.fadvice(call.arg(5))]


def _ptrace_args(call: _Call) -> list[str]:
    """PTRACE_TRACEME has no other argument (strace's decode_ptrace: the request alone); the
    other requests, which the sandbox does not model, as declared."""
    if call.arg(0) == 0:
        return ["PTRACE_TRACEME"]
    return [_format_value(call, i, kind) for i, (_, kind) in enumerate(signature(call.name) or ())]


_SPECIAL: dict[str, Callable[[_Call], list[str]]] = {
    "set_thread_area": _set_thread_area_args, "rt_sigreturn": _sigreturn_args,
    "sigreturn": _sigreturn_args, "prctl": arguments.prctl_args, "mremap": arguments.mremap_args,
    "open": _open_args, "openat": _open_args, "fcntl": _fcntl_args, "fcntl64": _fcntl_args,
    "ioctl": _ioctl_args, "futex": _futex_args, "_llseek": _llseek_args,
    "mmap": _old_mmap_args, "clone": _clone_args, "fadvise64_64": _fadvise64_64_args,
    "ptrace": _ptrace_args,
}
