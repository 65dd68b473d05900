"""seccomp(2) and prctl(PR_SET_SECCOMP): a task enters strict mode or stacks a filter (kernel/seccomp.c).

do_seccomp's operations: SECCOMP_SET_MODE_STRICT (no flags, no argument), SECCOMP_SET_MODE_FILTER
(a struct sock_fprog {unsigned short len; struct sock_filter *filter}, pointer-sized fields),
SECCOMP_GET_ACTION_AVAIL and SECCOMP_GET_NOTIF_SIZES; anything else is EINVAL. A filter is
read (EFAULT), its length checked (EINVAL), then the caller needs no_new_privs or CAP_SYS_ADMIN
(EACCES: seccomp_prepare_filter), then it is checked (cbpf.py). A task keeps one mode: strict and
filter do not mix (seccomp_may_assign_mode, EINVAL). All filters of a task together hold at most
MAX_INSNS_PER_PATH instructions, each counting 4 more (ENOMEM). SECCOMP_FILTER_FLAG_TSYNC gives
the filter to every thread of the process without filters or with an ancestor of the caller's; another's
thread id is returned otherwise (seccomp_can_sync_threads).

User notification (SECCOMP_FILTER_FLAG_NEW_LISTENER, SECCOMP_RET_USER_NOTIF's supervisor) is not
modeled: the flag is EINVAL here and the action is reported unavailable.
"""
import struct
from dataclasses import dataclass, replace

from .. import errno as E
from ..errno import GuestErrno
from .cbpf import INSN, check_filter

SECCOMP_MODE_DISABLED, SECCOMP_MODE_STRICT, SECCOMP_MODE_FILTER = 0, 1, 2
SET_MODE_STRICT, SET_MODE_FILTER, GET_ACTION_AVAIL, GET_NOTIF_SIZES = 0, 1, 2, 3
FLAG_TSYNC, FLAG_LOG, FLAG_SPEC_ALLOW, FLAG_NEW_LISTENER = 1, 2, 4, 8
FLAG_TSYNC_ESRCH, FLAG_WAIT_KILLABLE_RECV = 16, 32
FILTER_FLAG_MASK = 63
MAX_INSNS_PER_PATH = 32768
CAP_SYS_ADMIN = 21
# include/uapi/linux/seccomp.h's actions; USER_NOTIF is left out (not modeled)
AVAILABLE_ACTIONS = frozenset({0x8000_0000, 0x0000_0000, 0x0003_0000, 0x0005_0000, 0x7FF0_0000,
                               0x7FFC_0000, 0x7FFF_0000})
NOTIF_SIZES = struct.pack("<HHH", 80, 24, 64)     # seccomp_notif, _resp, seccomp_data


@dataclass(frozen=True)
class Filter:
    program: tuple          # cbpf.check_filter's instructions
    log: bool               # SECCOMP_FILTER_FLAG_LOG: actions other than ALLOW are logged


def _may_assign(thread, mode: int) -> None:
    current = thread.task_flags.seccomp_mode
    if current and current != mode:
        raise GuestErrno(E.EINVAL)


def set_strict(ctx) -> int:
    _may_assign(ctx.thread, SECCOMP_MODE_STRICT)
    ctx.thread.task_flags = replace(ctx.thread.task_flags, seccomp_mode=SECCOMP_MODE_STRICT)
    return 0


def _read_fprog(ctx, addr: int) -> bytes:
    if ctx.abi == "x86_64":
        length, pointer = struct.unpack("<H6xQ", ctx.read(addr, 16))
    else:
        length, pointer = struct.unpack("<H2xI", ctx.read(addr, 8))
    if not 0 < length <= 4096:
        raise GuestErrno(E.EINVAL)
    flags = ctx.thread.task_flags
    if not flags.no_new_privs and not ctx.proc.creds.capable(CAP_SYS_ADMIN):
        raise GuestErrno(E.EACCES)
    return ctx.read(pointer, length * INSN.size)


def _check_flags(flags: int) -> None:
    if flags & ~FILTER_FLAG_MASK or flags & FLAG_NEW_LISTENER:
        raise GuestErrno(E.EINVAL)
    if flags & FLAG_WAIT_KILLABLE_RECV and not flags & FLAG_NEW_LISTENER:
        raise GuestErrno(E.EINVAL)


def _blocking_thread(ctx, filters: tuple):
    """seccomp_can_sync_threads: a thread in strict mode, or whose filters are not an ancestor
    (here: a tail) of the caller's chain, cannot take the caller's."""
    for thread in ctx.proc.live_threads():
        theirs = thread.task_flags
        if theirs.seccomp_mode == SECCOMP_MODE_DISABLED:
            continue
        chain = theirs.seccomp_filters
        if theirs.seccomp_mode == SECCOMP_MODE_STRICT or filters[len(filters) - len(chain):] != chain:
            return thread
    return None


def set_filter(ctx, flags: int, fprog: int) -> int:
    _check_flags(flags)
    program = check_filter(_read_fprog(ctx, fprog))
    _may_assign(ctx.thread, SECCOMP_MODE_FILTER)
    current = ctx.thread.task_flags.seccomp_filters
    if len(program) + sum(len(f.program) + 4 for f in current) > MAX_INSNS_PER_PATH:
        raise GuestErrno(E.ENOMEM)
    if flags & FLAG_TSYNC:
        blocker = _blocking_thread(ctx, current)
        if blocker is not None:
            if flags & FLAG_TSYNC_ESRCH:
                raise GuestErrno(E.ESRCH)
            return blocker.tid
    filters = (Filter(program, bool(flags & FLAG_LOG)),) + current
    for thread in ctx.proc.live_threads() if flags & FLAG_TSYNC else (ctx.thread,):
        thread.task_flags = replace(thread.task_flags, seccomp_mode=SECCOMP_MODE_FILTER,
                                    seccomp_filters=filters)
    return 0


def action_available(ctx, addr: int) -> int:
    action = struct.unpack("<I", ctx.read(addr, 4))[0]
    if action not in AVAILABLE_ACTIONS:
        raise GuestErrno(E.EOPNOTSUPP)
    return 0


def do_seccomp(ctx, op: int, flags: int, uargs: int) -> int:
    if op == SET_MODE_STRICT:
        if flags or uargs:
            raise GuestErrno(E.EINVAL)
        return set_strict(ctx)
    if op == SET_MODE_FILTER:
        return set_filter(ctx, flags, uargs)
    if op in (GET_ACTION_AVAIL, GET_NOTIF_SIZES) and flags:
        raise GuestErrno(E.EINVAL)
    if op == GET_ACTION_AVAIL:
        return action_available(ctx, uargs)
    if op == GET_NOTIF_SIZES:
        ctx.write(uargs, NOTIF_SIZES)
        return 0
    raise GuestErrno(E.EINVAL)
