"""prctl(2): kernel/sys.c's switch, with security/commoncap.c cap_task_prctl's options first.

Each option checks its unused arguments as Linux does (EINVAL) and keeps its state in the
thread's TaskFlags (kernel_model/process/task_flags.py), whose fork and exec rules are Linux's.
Options x86 has no implementation of (unaligned access, FP emulation, endianness, FP modes...)
and unknown ones are EINVAL. Modeled approximately, and so documented: the capability bounding
and ambient sets live in TaskFlags beside the credentials (creds.py has neither). Seccomp's
options go to kernel_model/seccomp/.
"""
import struct
from dataclasses import replace

from ... import errno as E
from ...errno import GuestErrno
from ...seccomp.install import SET_MODE_FILTER, SET_MODE_STRICT, do_seccomp
from ..kinds import K
from ..registry import syscall

NSIG = 64
CAP_LAST_CAP = 40
CAP_SETPCAP, CAP_SYS_ADMIN = 8, 21
TASK_COMM_LEN = 16
SECURE_KEEP_CAPS_LOCKED = 1 << 5
SECURE_ALL_BITS, SECURE_ALL_LOCKS = 0x55, 0xAA
PR_TSC_ENABLE, PR_TSC_SIGSEGV = 1, 2
PR_MCE_KILL_DEFAULT = 2
PR_SPEC_NOT_AFFECTED = 0
SECCOMP_MODE_STRICT, SECCOMP_MODE_FILTER = 1, 2
PR_CAP_AMBIENT_IS_SET, PR_CAP_AMBIENT_RAISE, PR_CAP_AMBIENT_LOWER, PR_CAP_AMBIENT_CLEAR_ALL = 1, 2, 3, 4


@syscall("prctl", args=(("option", K.INT), ("arg2", K.HEX), ("arg3", K.HEX), ("arg4", K.HEX),
                        ("arg5", K.HEX)))
def sys_prctl(ctx, option, arg2, arg3, arg4, arg5):
    handler = OPTIONS.get(ctx.int32(option))
    if handler is None:
        raise GuestErrno(E.EINVAL)
    return handler(ctx, arg2, arg3, arg4, arg5)


def _flags(ctx):
    return ctx.thread.task_flags


def _set(ctx, **changes) -> int:
    ctx.thread.task_flags = replace(ctx.thread.task_flags, **changes)
    return 0


def _put_int(ctx, addr: int, value: int) -> int:
    ctx.write(addr, struct.pack("<i", value))
    return 0


def _no_args(*args) -> None:
    if any(args):
        raise GuestErrno(E.EINVAL)


def _cap_valid(cap: int) -> None:
    if not 0 <= cap <= CAP_LAST_CAP:
        raise GuestErrno(E.EINVAL)


# ---- signals, dumps, names ------------------------------------------------------------------
def set_pdeathsig(ctx, sig, *_):
    if sig > NSIG:                          # valid_signal
        raise GuestErrno(E.EINVAL)
    return _set(ctx, pdeath_signal=sig)


def get_pdeathsig(ctx, addr, *_):
    return _put_int(ctx, addr, _flags(ctx).pdeath_signal)


def set_dumpable(ctx, value, *_):
    if value not in (0, 1):                 # SUID_DUMP_DISABLE, SUID_DUMP_USER
        raise GuestErrno(E.EINVAL)
    return _set(ctx, dumpable=value)


def set_name(ctx, addr, *_):
    ctx.thread.comm = ctx.read_cstr(addr, 4096)[:TASK_COMM_LEN - 1]
    return 0


def get_name(ctx, addr, *_):
    comm = ctx.thread.comm or ctx.proc.exe.rsplit(b"/", 1)[-1][:TASK_COMM_LEN - 1]
    ctx.write(addr, comm.ljust(TASK_COMM_LEN, b"\0"))     # the whole comm array
    return 0


def set_timing(ctx, value, *_):
    if value != 0:                          # only PR_TIMING_STATISTICAL
        raise GuestErrno(E.EINVAL)
    return 0


# ---- timer slack, TSC, transparent huge pages, machine checks --------------------------------
def set_timerslack(ctx, slack, *_):
    flags = _flags(ctx)
    return _set(ctx, timer_slack_ns=slack or flags.default_timer_slack_ns)


def set_tsc(ctx, mode, *_):
    if mode not in (PR_TSC_ENABLE, PR_TSC_SIGSEGV):
        raise GuestErrno(E.EINVAL)
    return _set(ctx, tsc_sigsegv=mode == PR_TSC_SIGSEGV)


def get_tsc(ctx, addr, *_):
    return _put_int(ctx, addr, PR_TSC_SIGSEGV if _flags(ctx).tsc_sigsegv else PR_TSC_ENABLE)


def set_thp_disable(ctx, value, arg3, arg4, arg5):
    _no_args(arg3, arg4, arg5)
    return _set(ctx, thp_disable=bool(value))


def get_thp_disable(ctx, *args):
    _no_args(*args)
    return int(_flags(ctx).thp_disable)


def mce_kill(ctx, how, policy, arg4, arg5):
    _no_args(arg4, arg5)
    if how not in (0, 1):                   # PR_MCE_KILL_CLEAR, PR_MCE_KILL_SET
        raise GuestErrno(E.EINVAL)
    return 0


def mce_kill_get(ctx, *args):
    _no_args(*args)
    return PR_MCE_KILL_DEFAULT


def get_speculation_ctrl(ctx, which, arg3, arg4, arg5):
    _no_args(arg3, arg4, arg5)
    if which not in (0, 1):                 # store bypass, indirect branch: not affected
        raise GuestErrno(E.ENODEV)
    return PR_SPEC_NOT_AFFECTED


def set_speculation_ctrl(ctx, which, value, arg4, arg5):
    _no_args(arg4, arg5)
    raise GuestErrno(E.ENXIO if which in (0, 1) else E.ENODEV)   # nothing to control


# ---- privileges: no_new_privs, seccomp, capabilities -----------------------------------------
def set_no_new_privs(ctx, value, arg3, arg4, arg5):
    if value != 1:
        raise GuestErrno(E.EINVAL)
    _no_args(arg3, arg4, arg5)
    return _set(ctx, no_new_privs=True)


def get_no_new_privs(ctx, *args):
    _no_args(*args)
    return int(_flags(ctx).no_new_privs)


def get_seccomp(ctx, *_):
    return _flags(ctx).seccomp_mode         # strict mode never gets here: prctl is not allowed


def set_seccomp(ctx, mode, filter_addr, *_):
    """kernel/seccomp.c prctl_set_seccomp: do_seccomp without flags; strict mode ignores the
    argument (kernel_model/seccomp/install.py)."""
    if mode == SECCOMP_MODE_STRICT:
        return do_seccomp(ctx, SET_MODE_STRICT, 0, 0)
    if mode != SECCOMP_MODE_FILTER:
        raise GuestErrno(E.EINVAL)
    return do_seccomp(ctx, SET_MODE_FILTER, 0, filter_addr)


def capbset_read(ctx, cap, *_):
    _cap_valid(cap)
    return _flags(ctx).capbset >> cap & 1


def capbset_drop(ctx, cap, *_):
    _cap_valid(cap)
    if not ctx.proc.creds.capable(CAP_SETPCAP):
        raise GuestErrno(E.EPERM)
    return _set(ctx, capbset=_flags(ctx).capbset & ~(1 << cap))


def get_securebits(ctx, *_):
    return _flags(ctx).securebits


def set_securebits(ctx, bits, *_):
    old = _flags(ctx).securebits
    if ((old & SECURE_ALL_LOCKS) >> 1) & (old ^ bits) or old & SECURE_ALL_LOCKS & ~bits \
            or bits & ~(SECURE_ALL_LOCKS | SECURE_ALL_BITS) or not ctx.proc.creds.capable(CAP_SETPCAP):
        raise GuestErrno(E.EPERM)
    return _set(ctx, securebits=bits)


def get_keepcaps(ctx, *_):
    return int(_flags(ctx).keep_caps)


def set_keepcaps(ctx, value, *_):
    if value > 1:
        raise GuestErrno(E.EINVAL)
    if _flags(ctx).securebits & SECURE_KEEP_CAPS_LOCKED:
        raise GuestErrno(E.EPERM)
    return _set(ctx, keep_caps=bool(value))


def cap_ambient(ctx, how, cap, arg4, arg5):
    flags = _flags(ctx)
    if how == PR_CAP_AMBIENT_CLEAR_ALL:
        _no_args(cap, arg4, arg5)
        return _set(ctx, ambient=0)
    _cap_valid(cap)
    _no_args(arg4, arg5)
    if how == PR_CAP_AMBIENT_IS_SET:
        return flags.ambient >> cap & 1
    if how == PR_CAP_AMBIENT_RAISE:
        creds = ctx.proc.creds
        if not (creds.permitted >> cap & 1 and creds.inheritable >> cap & 1):
            raise GuestErrno(E.EPERM)
        return _set(ctx, ambient=flags.ambient | 1 << cap)
    if how == PR_CAP_AMBIENT_LOWER:
        return _set(ctx, ambient=flags.ambient & ~(1 << cap))
    raise GuestErrno(E.EINVAL)


# ---- the process tree -----------------------------------------------------------------------
def set_child_subreaper(ctx, value, *_):
    ctx.proc.child_subreaper = bool(value)
    return 0


def get_child_subreaper(ctx, addr, *_):
    return _put_int(ctx, addr, int(ctx.proc.child_subreaper))


def get_tid_address(ctx, addr, *_):
    ctx.write(addr, ctx.thread.clear_child_tid.to_bytes(ctx.word, "little"))
    return 0


def _returns(value):
    return lambda ctx, *_: value


OPTIONS = {
    1: set_pdeathsig, 2: get_pdeathsig,
    3: lambda ctx, *_: _flags(ctx).dumpable, 4: set_dumpable,
    7: get_keepcaps, 8: set_keepcaps,
    13: _returns(0), 14: set_timing,                      # PR_GET/SET_TIMING
    15: set_name, 16: get_name,
    21: get_seccomp, 22: set_seccomp,
    23: capbset_read, 24: capbset_drop,
    25: get_tsc, 26: set_tsc,
    27: get_securebits, 28: set_securebits,
    29: set_timerslack, 30: lambda ctx, *_: _flags(ctx).timer_slack_ns,
    31: _returns(0), 32: _returns(0),                     # PR_TASK_PERF_EVENTS_DISABLE/ENABLE
    33: mce_kill, 34: mce_kill_get,
    36: set_child_subreaper, 37: get_child_subreaper,
    38: set_no_new_privs, 39: get_no_new_privs,
    40: get_tid_address,
    41: set_thp_disable, 42: get_thp_disable,
    47: cap_ambient,
    52: get_speculation_ctrl, 53: set_speculation_ctrl,
}
