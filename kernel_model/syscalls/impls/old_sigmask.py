"""i386's signal mask calls of before the rt_ ones, on a one-word old_sigset_t (kernel/signal.c):
sigprocmask, sigpending, sgetmask and ssetmask. glibc's i386 getcontext, setcontext and
swapcontext still call sigprocmask (LTP getcontext01 got ENOSYS).

The mask is 64 signals wide on the x86-64 kernel the model is; these calls see its low 32
bits: sigprocmask's SIG_SETMASK replaces only them (compat_sig_setmask), sigprocmask and
sgetmask give them back; ssetmask sets the whole mask from its int, sign-extended as
siginitset takes an unsigned long. SIGKILL and SIGSTOP are never blocked.
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ..kinds import K
from ..registry import syscall
from .signals import SIG_BLOCK, SIG_SETMASK, SIG_UNBLOCK, UNBLOCKABLE

LOW = 0xFFFFFFFF


@syscall("sigprocmask", args=(("how", K.SIGMASK_HOW), ("set", K.PTR), ("oldset", K.PTR)))
def sys_sigprocmask(ctx, how, set_ptr, oldset):
    """compat sigprocmask: the new word is read (EFAULT) and applied, then the old one written."""
    thread = ctx.thread
    old = thread.sigmask
    if set_ptr:
        new, = struct.unpack("<I", ctx.read(set_ptr, 4))
        how = ctx.int32(how)
        if how == SIG_BLOCK:
            mask = old | new
        elif how == SIG_UNBLOCK:
            mask = old & ~new
        elif how == SIG_SETMASK:
            mask = old & ~LOW | new
        else:
            raise GuestErrno(E.EINVAL)
        thread.sigmask = mask & ~UNBLOCKABLE
    if oldset:
        ctx.write(oldset, struct.pack("<I", old & LOW))
    return 0


@syscall("sigpending", args=(("set", K.PTR),))
def sys_sigpending(ctx, set_ptr):
    """do_sigpending: the blocked signals pending for the thread or its process."""
    pending = (ctx.thread.pending_signals | ctx.proc.pending_signals) & ctx.thread.sigmask
    ctx.write(set_ptr, struct.pack("<I", pending & LOW))
    return 0


@syscall("sgetmask")
def sys_sgetmask(ctx):
    return ctx.thread.sigmask & LOW


@syscall("ssetmask", args=(("newmask", K.HEX),))
def sys_ssetmask(ctx, newmask):
    old = ctx.thread.sigmask & LOW
    ctx.thread.sigmask = (ctx.int32(newmask) & (1 << 64) - 1) & ~UNBLOCKABLE
    return old
