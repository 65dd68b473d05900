"""clone3's struct clone_args, read and checked as kernel/fork.c does before any task is made.

copy_clone_args_from_user: a size above a page is E2BIG, below CLONE_ARGS_SIZE_VER0 (64) EINVAL;
the struct is read with copy_struct_from_user (a fault is EFAULT, bytes past the kernel's struct
must be zero, else E2BIG); set_tid and set_tid_size must agree, exit_signal must be a signal.
clone3_args_valid: no unknown flags, neither CLONE_DETACHED nor the CSIGNAL bits (clone3 keeps
them for later use), not CLONE_SIGHAND with CLONE_CLEAR_SIGHAND, no exit signal for a thread or
CLONE_PARENT, and a stack given as both its lowest address and a size (clone3_stack_valid),
which becomes its top here as on every stack-grows-down arch.
"""
import struct
from dataclasses import dataclass

from .. import errno as E
from ..errno import GuestErrno

PAGE_SIZE = 4096
CLONE_ARGS_SIZE_VER0, KERNEL_SIZE = 64, 88      # VER2 (with cgroup): Linux 6.1's struct
MAX_PID_NS_LEVEL, NSIG, CSIGNAL = 32, 64, 0xFF
CLONE_NEWTIME, CLONE_SIGHAND, CLONE_PARENT, CLONE_THREAD = 0x80, 0x800, 0x8000, 0x10000
CLONE_DETACHED = 0x00400000
CLONE_CLEAR_SIGHAND, CLONE_INTO_CGROUP = 1 << 32, 1 << 33
INT_MAX = (1 << 31) - 1


@dataclass(frozen=True)
class CloneArgs:
    flags: int
    pidfd: int
    child_tid: int
    parent_tid: int
    exit_signal: int
    stack_top: int          # 0: the caller's stack
    tls: int
    set_tid: tuple = ()     # the pids wanted, the child's namespace's first (pid_namespace.py)


def _read(ctx, addr: int, size: int) -> tuple:
    raw = ctx.read(addr, min(size, KERNEL_SIZE)).ljust(KERNEL_SIZE, b"\0")
    if size > KERNEL_SIZE and any(ctx.read(addr + KERNEL_SIZE, size - KERNEL_SIZE)):
        raise GuestErrno(E.E2BIG)               # copy_struct_from_user: unknown fields set
    return struct.unpack("<11Q", raw)


def _stack_top(ctx, stack: int, stack_size: int) -> int:
    """clone3_stack_valid: none or both, the range inside user space (access_ok)."""
    if stack == 0:
        if stack_size:
            raise GuestErrno(E.EINVAL)
        return 0
    user_top = ctx.proc.vm.layout.user_top
    if stack_size == 0 or stack_size > user_top or stack > user_top - stack_size:
        raise GuestErrno(E.EINVAL)
    return stack + stack_size


def _check_flags(flags: int, exit_signal: int) -> None:
    """clone3_args_valid's flag rules."""
    if flags & ~(0xFFFFFFFF | CLONE_CLEAR_SIGHAND | CLONE_INTO_CGROUP):
        raise GuestErrno(E.EINVAL)
    if flags & (CLONE_DETACHED | (CSIGNAL & ~CLONE_NEWTIME)):
        raise GuestErrno(E.EINVAL)
    if flags & CLONE_SIGHAND and flags & CLONE_CLEAR_SIGHAND:
        raise GuestErrno(E.EINVAL)
    if flags & (CLONE_THREAD | CLONE_PARENT) and exit_signal:
        raise GuestErrno(E.EINVAL)


def read_clone_args(ctx, addr: int, size: int) -> CloneArgs:
    if size > PAGE_SIZE:
        raise GuestErrno(E.E2BIG)
    if size < CLONE_ARGS_SIZE_VER0:
        raise GuestErrno(E.EINVAL)
    (flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls,
     set_tid, set_tid_size, cgroup) = _read(ctx, addr, size)
    if set_tid_size > MAX_PID_NS_LEVEL or bool(set_tid) != bool(set_tid_size):
        raise GuestErrno(E.EINVAL)
    if exit_signal & ~CSIGNAL or exit_signal > NSIG:
        raise GuestErrno(E.EINVAL)
    if flags & CLONE_INTO_CGROUP and (cgroup > INT_MAX or size < KERNEL_SIZE):
        raise GuestErrno(E.EINVAL)
    _check_flags(flags, exit_signal)
    wanted = struct.unpack("<%di" % set_tid_size, ctx.read(set_tid, 4 * set_tid_size)) if set_tid_size else ()
    return CloneArgs(flags, pidfd, child_tid, parent_tid, exit_signal,
                     _stack_top(ctx, stack, stack_size), tls, wanted)
