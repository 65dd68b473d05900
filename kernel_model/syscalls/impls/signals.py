"""Signal dispositions and masks: recorded per process and thread (delivery comes with issue 3)."""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ...signals import NSIG, SIGKILL, SIGSTOP
from ..registry import syscall

SIG_BLOCK, SIG_UNBLOCK, SIG_SETMASK = 0, 1, 2
UNBLOCKABLE = (1 << (SIGKILL - 1)) | (1 << (SIGSTOP - 1))


@syscall("rt_sigaction")
def sys_rt_sigaction(ctx, sig, act, oldact, sigsetsize):
    if sigsetsize != 8 or not 1 <= sig <= NSIG:
        raise GuestErrno(E.EINVAL)
    # struct kernel_sigaction: handler, flags, restorer, mask (words, then an 8-byte mask)
    fmt = "<III" if ctx.word == 4 else "<QQQ"
    size = struct.calcsize(fmt) + 8
    old = ctx.proc.sigactions.get(sig, (0, 0, 0, 0))
    if act:
        handler, flags, restorer = struct.unpack(fmt, ctx.read(act, size - 8))
        mask = struct.unpack("<Q", ctx.read(act + size - 8, 8))[0]
        if sig in (SIGKILL, SIGSTOP):
            raise GuestErrno(E.EINVAL)
        new = (handler, flags, restorer, mask)
    if oldact:
        ctx.write(oldact, struct.pack(fmt, *old[:3]) + struct.pack("<Q", old[3]))
    if act:
        ctx.proc.sigactions[sig] = new
    return 0


@syscall("rt_sigprocmask")
def sys_rt_sigprocmask(ctx, how, set_ptr, oldset, sigsetsize):
    if sigsetsize != 8:
        raise GuestErrno(E.EINVAL)
    thread = ctx.thread
    old = thread.sigmask
    if set_ptr:
        new = struct.unpack("<Q", ctx.read(set_ptr, 8))[0]
        if how == SIG_BLOCK:
            mask = old | new
        elif how == SIG_UNBLOCK:
            mask = old & ~new
        elif how == SIG_SETMASK:
            mask = new
        else:
            raise GuestErrno(E.EINVAL)
        thread.sigmask = mask & ~UNBLOCKABLE
    if oldset:
        ctx.write(oldset, struct.pack("<Q", old))
    return 0


@syscall("sigaltstack")
def sys_sigaltstack(ctx, ss, old_ss):
    if old_ss:
        sp, flags, size = ctx.thread.sigaltstack
        raw = struct.pack("<Ii", sp, flags) + struct.pack("<I", size) if ctx.word == 4 else \
            struct.pack("<Qi4xQ", sp, flags, size)
        ctx.write(old_ss, raw)
    if ss:
        if ctx.word == 4:
            sp, flags, size = struct.unpack("<IiI", ctx.read(ss, 12))
        else:
            sp, flags, size = struct.unpack("<Qi4xQ", ctx.read(ss, 24))
        ctx.thread.sigaltstack = (sp, flags, size)
    return 0
